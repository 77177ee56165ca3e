"""Argument types and the parser class shared by the `anchor` and `anchor worker`
command lines: whole numbers, ports, and one-line errors."""

from __future__ import annotations

import argparse


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is a --help away)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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
