"""The package's version, in the one place pyproject.toml reads it from (its `dynamic`
version): `anchor --version` prints it without importlib.metadata, which costs a start
more than Python itself."""

VERSION = "0.1.0"
