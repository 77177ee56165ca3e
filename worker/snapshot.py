"""Private snapshots of lexicon files for long-running workers.

A worker maps its lexica for days. If an operator rewrites a mapped file in place
(`cp new.kwg live.kwg` truncates and refills the same inode) every worker mapping it dies
of SIGBUS or silently reads different words. So a worker maps a snapshot instead: a copy
named by the sha256 of its content in a folder only this user can write, made once and
never modified. Workers of one machine with the same lexicon share one snapshot (and so
one copy in memory); replacing the original affects only workers started afterwards.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from anchor.engine import LexiconError
from anchor.engine.files import open_regular

CHUNK = 1 << 20


def default_folder() -> Path:
    """$ANCHOR_SNAPSHOT_DIR, else a per-user folder in /dev/shm (memory: the snapshot is
    the page cache), else in the temporary folder."""
    if os.environ.get("ANCHOR_SNAPSHOT_DIR"):
        return Path(os.environ["ANCHOR_SNAPSHOT_DIR"])
    base = Path("/dev/shm")
    if not (base.is_dir() and os.access(base, os.W_OK)):
        base = Path(tempfile.gettempdir())
    return base / f"anchor-lexica-{os.getuid()}"


def _private_folder(folder: Path) -> Path:
    """`folder`, created 0700 if missing; refused unless this user owns it and no one
    else may write to it (another user could plant a file under a snapshot's name)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        raise LexiconError(f"cannot use snapshot folder {folder}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise LexiconError(f"snapshot folder {folder} is not a folder this user owns")
    if info.st_mode & 0o022:
        raise LexiconError(f"snapshot folder {folder} is writable by others; make it 0700")
    return folder


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open_regular(path, "lexicon snapshot", LexiconError) as fh:
        while block := fh.read(CHUNK):
            sha.update(block)
    return sha.hexdigest()


def snapshot(path: str | os.PathLike, folder: Path | None = None) -> Path:
    """A read-only copy of the lexicon at `path`, named by its content, in `folder`."""
    folder = _private_folder(folder or default_folder())
    sha = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=".incoming-")
    tmp = Path(tmp_name)
    try:
        with open_regular(path, "lexicon", LexiconError) as src, os.fdopen(fd, "wb") as dst:
            while block := src.read(CHUNK):
                sha.update(block)
                dst.write(block)
        digest = sha.hexdigest()
        final = folder / f"{digest}.kwg"
        if final.exists() and _digest(final) == digest:
            return final
        tmp.chmod(0o444)
        os.replace(tmp, final)
        return final
    except OSError as exc:
        raise LexiconError(f"cannot snapshot lexicon {os.fspath(path)}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)
