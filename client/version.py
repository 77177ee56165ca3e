"""The package's version, in the one place pyproject.toml reads it from (its `dynamic`
version). `anchor --version` prints it from here: importlib.metadata, which the protocol's
package_version reads (the installed distribution's), costs that command more than Python's
own start."""

VERSION = "0.1.0"
