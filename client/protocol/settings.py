"""Settings both command lines read (`anchor` and `anchor-worker`): the parser with
one-line errors, the installed version, and the types of queue names, ports, log levels
and counts. Part of the protocol leaf so that the worker's command line needs nothing else
of the client."""

from __future__ import annotations

import argparse


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is a --help away)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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


def non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
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
