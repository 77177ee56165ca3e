"""Builds the C extension anchor.engine._movegen from its units in engine/ (core.h lists
them); metadata is in pyproject.toml."""

import platform
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

# The documents `anchor docs` prints (client/docs.py lists them), copied into the wheel.
DOCS = (
    "README.md",
    "DESIGN.md",
    "DESIGN-NOTES.md",
    "PROTOCOL.md",
    "BENCHMARKS.md",
    "dictionaries/README.md",
)


class BuildWithDocs(build_py):
    """build_py that also puts the repository's documents in anchor/client/docs/."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "anchor" / "client" / "docs"
        target.mkdir(parents=True, exist_ok=True)
        for name in DOCS:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            self.copy_file(name, str(target / name))


SOURCES = sorted(str(p) for p in Path("engine").glob("*.c"))  # the units core.h lists
HEADERS = sorted(str(p) for p in Path("engine").glob("*.h"))


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


args = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
args.append("-fvisibility=hidden")  # the units' shared functions stay inside the module
args.append("-pthread")  # the endgame solver's helper threads (endgame.c)
# The generator's list lookups are popcounts; without -mpopcnt x86-64 gcc calls a slow
# libgcc routine. Every x86-64 CPU of the last fifteen years has the instruction; enable
# it when the building machine has it (the extension is built where it runs).
if platform.machine() in ("x86_64", "AMD64") and "popcnt" in cpu_flags():
    args.append("-mpopcnt")

setup(
    cmdclass={"build_py": BuildWithDocs},
    ext_modules=[
        Extension(
            "anchor.engine._movegen",
            sources=SOURCES,
            depends=HEADERS,
            extra_compile_args=args,
            extra_link_args=["-pthread"],
        )
    ],
)
