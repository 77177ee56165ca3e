"""Opening the files a user names (lexica, leave values, rulesets, game records) safely:
a FIFO, a device or a directory is refused with a clear error instead of hanging or
reading forever."""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from .errors import AnchorError


def open_regular(path: str | os.PathLike, what: str, error: type[AnchorError]) -> BinaryIO:
    """Open `path` for reading, or raise `error` naming `what` when it is missing,
    unreadable or not a regular file. The check is made on the opened file (no race);
    O_NONBLOCK keeps a FIFO with no writer from blocking the open."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"cannot open {what} {name}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise error(f"{what} {name} is {kind}; give a file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike, what: str, error: type[AnchorError]) -> bytes:
    """The whole of a regular file (see open_regular)."""
    with open_regular(path, what, error) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise error(f"cannot read {what} {os.fspath(path)}: {exc.strerror}") from None


def write_atomically(path: str | os.PathLike, data: bytes) -> None:
    """`data` at `path`, by a rename: a reader sees the old file or the new one. The
    temporary file's name is this process's own (two installs at once each rename theirs)."""
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:  # a folder in the way, a full disk: leave nothing behind
        try:
            os.unlink(tmp)
        except OSError:  # never made, or already renamed
            pass
        raise
