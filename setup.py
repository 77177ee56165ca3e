"""Builds the C extension anchor.engine._movegen from its units in engine/ (core.h lists
them); metadata is in pyproject.toml."""

import platform
from pathlib import Path

from setuptools import Extension, setup

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
# The generator's list lookups are popcounts; without -mpopcnt x86-64 gcc calls a slow
# libgcc routine. Every x86-64 CPU of the last fifteen years has the instruction; enable
# it when the building machine has it (the extension is built where it runs).
if platform.machine() in ("x86_64", "AMD64") and "popcnt" in cpu_flags():
    args.append("-mpopcnt")

setup(
    ext_modules=[
        Extension(
            "anchor.engine._movegen",
            sources=SOURCES,
            depends=HEADERS,
            extra_compile_args=args,
        )
    ]
)
