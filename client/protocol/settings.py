"""Settings both command lines read (`anchor` and `anchor-worker`): the parser with
one-line errors, the installed version, and the types of queue names, ports, log levels
and counts. Part of the protocol leaf so that the worker's command line needs nothing else
of the client."""

from __future__ import annotations

import argparse
import textwrap


class HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default (unless the help already says it), and
    lines of a description or epilog that start with two spaces (examples) are kept as
    written while the rest is wrapped."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default is None
            or default is False
            or default == argparse.SUPPRESS
            or not action.option_strings
            or action.nargs == 0  # a flag: its name says what it does (--no-cut: True read wrong)
        ):
            return text
        shown = ",".join(default) if isinstance(default, (list, tuple)) else default
        return f"{text} (default: {shown})"

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks: list[str] = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if lines and all(line.startswith("  ") or line.endswith(":") for line in lines):
                blocks.append("\n".join(indent + line for line in lines))
            else:
                blocks.append(
                    textwrap.fill(
                        " ".join(paragraph.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                        break_on_hyphens=False,
                    )
                )
        return "\n\n".join(blocks)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is a --help away), defaults in the help
    and examples kept as written. Options are taken by their whole names only: an
    abbreviation that works today would mean another option once one is added."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class VersionAction(argparse.Action):
    """--version, reading the installed version only when asked (importlib.metadata costs
    every other command a few hundredths of a second)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw):
        kw.setdefault("help", "print the installed version and exit")
        super().__init__(option_strings, dest=dest, default=default, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"anchor {package_version()}")
        parser.exit(0)


def package_version() -> str:
    """The installed distribution's version (anchor-scrabble)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anchor-scrabble")
    except PackageNotFoundError:
        return "(not installed)"


def log_level(text: str) -> str:
    """A logging level by name, any case: DEBUG, INFO, WARNING, ERROR, CRITICAL."""
    name = text.strip().upper()
    if name not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a log level: DEBUG, INFO, WARNING, ERROR or CRITICAL"
        )
    return name


def queue_name(text: str) -> str:
    """A queue's name: not empty, no spaces or control characters (it is a Redis key)."""
    if not text or not text.isprintable() or any(ch.isspace() for ch in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a queue name: give a non-empty name without spaces"
        )
    return text


LARGEST = 2**31 - 1  # every count and seed fits the engine's 32-bit fields


def non_negative(text: str) -> int:
    """A whole number 0..LARGEST."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    if value > LARGEST:
        raise argparse.ArgumentTypeError(f"{value} is too large (at most {LARGEST:,})")
    return value


def at_most(largest: int):
    """The type of a count 1..largest (a number of parts, of workers)."""

    def count(text: str) -> int:
        value = positive(text)
        if value > largest:
            raise argparse.ArgumentTypeError(f"{value} is too many (at most {largest})")
        return value

    count.__name__ = f"count up to {largest}"
    return count


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def port(text: str) -> int:
    value = non_negative(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (0..65535)")
    return value


def positive(text: str) -> int:
    value = non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
