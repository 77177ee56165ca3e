"""Private snapshots of lexicon files for long-running workers.

A worker maps its lexica for days. If an operator rewrites a mapped file in place
(`cp new.kwg live.kwg` truncates and refills the same inode) every worker mapping it dies
of SIGBUS or silently reads different words. So a worker maps a snapshot instead: a copy
named by the sha256 of its content in a folder only this user can write, made once and
never modified. Workers of one machine with the same lexicon share one snapshot (and so
one copy in memory); replacing the original affects only workers started afterwards. A
lexicon's bingo-word file (`NAME.kwg.anagrams`) is copied beside its snapshot, under the
snapshot's name, where Lexicon.open looks for it.

Snapshots live in memory (/dev/shm, a k8s emptyDir of medium Memory), so they must not
pile up: each worker holds a shared lock (flock) on the snapshots it uses, from the moment
it creates or finds them; a snapshot no process holds is removed, by `release` when a
worker lets go of it (it exits, or the file was refused) and by `prune` at start-up (for
those a killed worker left).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import tempfile
from pathlib import Path

from anchor.engine import LexiconError
from anchor.engine.files import open_regular

CHUNK = 1 << 20
PREFIX = f"anchor-lexica-{os.getuid()}"
_HELD: dict[Path, int] = {}  # snapshot -> the descriptor this process holds its shared lock on


def default_folder() -> Path:
    """A folder of this user's own, in $ANCHOR_SNAPSHOT_DIR, else in /dev/shm (memory: the
    snapshot is the page cache), else in the temporary folder."""
    if os.environ.get("ANCHOR_SNAPSHOT_DIR"):
        return Path(os.environ["ANCHOR_SNAPSHOT_DIR"])
    base = Path("/dev/shm")
    if not (base.is_dir() and os.access(base, os.W_OK)):
        base = Path(tempfile.gettempdir())
    return base / PREFIX


def _private_folder(folder: Path) -> Path:
    """`folder` if this user owns it and no one else may write to it; else, when `folder`
    is a shared one (a k8s emptyDir is root-owned and 0777, like /tmp), a subfolder
    `anchor-lexica-UID` of it, created 0700. Refused otherwise: another user could plant
    a file under a snapshot's name."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        raise LexiconError(f"cannot use snapshot folder {folder}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise LexiconError(f"snapshot folder {folder} is not a folder")
    if info.st_uid == os.getuid() and not info.st_mode & 0o022:
        return folder
    if info.st_uid == os.getuid() or folder.name == PREFIX:
        raise LexiconError(f"snapshot folder {folder} is writable by others; make it 0700")
    return _private_folder(folder / PREFIX)


def _lock(fd: int, exclusive: bool = False) -> bool:
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX | fcntl.LOCK_NB) if exclusive else fcntl.LOCK_SH)
        return True
    except BlockingIOError:
        return False


def _hold(final: Path) -> bool:
    """Take a shared lock on the snapshot `final` for this process's life; False when it
    vanished (pruned) before the lock was taken."""
    if final in _HELD:
        return True
    try:
        fd = os.open(final, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    _lock(fd)
    if os.fstat(fd).st_nlink == 0:  # removed between open and lock: not a snapshot any more
        os.close(fd)
        return False
    _HELD[final] = fd
    return True


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open_regular(path, "lexicon snapshot", LexiconError) as fh:
        while block := fh.read(CHUNK):
            sha.update(block)
    return sha.hexdigest()


def snapshot(path: str | os.PathLike, folder: Path | None = None, name: str | None = None) -> Path:
    """A read-only copy of the lexicon at `path`, named by its content (or `name`), in
    `folder`; held (shared lock) until `release`."""
    folder = _private_folder(folder or default_folder())
    sha = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=".incoming-")
    _lock(fd)  # a copy being made is in use: prune leaves it alone ...
    guard = os.dup(fd)  # ... until it is a snapshot held in its own right
    tmp = Path(tmp_name)
    try:
        with open_regular(path, "lexicon", LexiconError) as src, os.fdopen(fd, "wb") as dst:
            fd = -1
            while block := src.read(CHUNK):
                sha.update(block)
                dst.write(block)
        digest = sha.hexdigest()
        final = folder / (name or f"{digest}.kwg")
        tmp.chmod(0o444)
        for _ in range(3):
            if final.exists() and _digest(final) == digest and _hold(final):
                return final
            try:  # a link never replaces: workers starting together share one inode
                os.link(tmp, final)
            except FileExistsError:
                if _digest(final) != digest:  # not what it should hold: replace it
                    os.replace(tmp, final)
                continue
            if _hold(final):
                return final
        raise LexiconError(f"cannot snapshot lexicon {os.fspath(path)}: it kept vanishing")
    except OSError as exc:
        raise LexiconError(f"cannot snapshot lexicon {os.fspath(path)}: {exc.strerror}") from None
    finally:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        os.close(guard)


def release(final: Path) -> bool:
    """Let go of a snapshot; remove it when no other process holds it. True if removed."""
    fd = _HELD.pop(Path(final), None)
    if fd is None:
        return False
    try:
        if _lock(fd, exclusive=True) and _same_file(fd, Path(final)):
            Path(final).unlink(missing_ok=True)
            return True
        return False
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open at `fd` (not one put in its place)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def release_all() -> None:
    for final in list(_HELD):
        release(final)


def prune(folder: Path | None = None) -> list[Path]:
    """Remove the snapshots (and half-made copies) in `folder` that no process holds: what
    killed workers and refused files left. Returns what was removed."""
    try:
        folder = _private_folder(folder or default_folder())
    except LexiconError:
        return []
    removed = []
    for entry in folder.iterdir():
        if entry in _HELD or not (
            entry.suffix in (".kwg", ".anagrams") or entry.name.startswith(".incoming-")
        ):
            continue
        try:
            fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if _lock(fd, exclusive=True) and _same_file(fd, entry):
                entry.unlink(missing_ok=True)
                removed.append(entry)
        finally:
            os.close(fd)
    return removed
