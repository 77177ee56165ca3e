"""Endgame peers: the solves of one endgame in several processes that share memory, all on
one transposition table (engine/endgame_peers.h), as the threads of one solve are.

A `Peers` region is made by a process before it forks its workers (`anchor worker
--workers N`); each worker is a `Peer` of it (its number, 0..63). A solve with a peer
claims the slot of its endgame, named by a key of the lexicon, the rules, the position and
a secret of the region (so that no request can name another's slot), and searches with
every other solve of that endgame in the slot: ABDADA across processes, the first proof
ending every search. A slot keeps its table once its solves end, and the same endgame
asked again is answered from it. When every slot is being searched, a solve searches
alone, on its own table.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from . import _movegen
from .errors import InputError

MAX_PROCESSES = _movegen.PEERS_MAX_PROCESSES
MAX_SLOTS = _movegen.PEERS_MAX_SLOTS
MAX_KEY = (1 << 64) - 1 - MAX_PROCESSES  # keys 1..MAX_KEY; the rest mark slots being taken


class Peers:
    """A region of `slots` endgame tables of 2^bits entries each, shared by the processes
    forked after it was made. Its memory is the kernel's shared memory: a page is taken when
    first written and kept (the tables are a cache), at most `megabytes` in all."""

    __slots__ = ("slots", "bits", "_region", "_secret")

    def __init__(self, slots: int, bits: int):
        if isinstance(slots, bool) or not isinstance(slots, int) or not 1 <= slots <= MAX_SLOTS:
            raise InputError(f"endgame peers: slots must be 1..{MAX_SLOTS}, not {slots!r}")
        low, high = _movegen.ENDGAME_MIN_TABLE, _movegen.ENDGAME_MAX_TABLE
        if isinstance(bits, bool) or not isinstance(bits, int) or not low <= bits <= high:
            raise InputError(f"endgame peers: table bits must be {low}..{high}, not {bits!r}")
        size = _movegen.peers_bytes(slots, bits)
        self.slots, self.bits = slots, bits
        self._region = mmap.mmap(-1, size)  # MAP_SHARED: the processes forked later see it
        if hasattr(mmap, "MADV_HUGEPAGE"):
            self._region.madvise(mmap.MADV_HUGEPAGE)  # where shared memory may have them
        _movegen.peers_init(self._region, slots, bits)
        self._secret = os.urandom(16)

    @property
    def megabytes(self) -> float:
        return len(self._region) / (1 << 20)

    def peer(self, process: int) -> Peer:
        """This region as process `process` (0..63) uses it."""
        return Peer(self, process)

    def forget(self, process: int) -> None:
        """Process `process` ended without releasing its slots (killed): release them."""
        _movegen.peers_release(self._region, -1, Peer(self, process).process)

    def key(self, identity: bytes, cells: bytes, racks: tuple[bytes, bytes], passed: bool) -> int:
        """The slot key of an endgame: 64 bits of a keyed hash, never 0 or all ones."""
        import hashlib  # here, not at the top: OpenSSL's load is a tenth of a CLI start

        digest = hashlib.blake2b(key=self._secret, digest_size=8)
        for part in (identity, cells, *racks, b"\x01" if passed else b"\x00"):
            digest.update(len(part).to_bytes(4, "little"))
            digest.update(part)
        value = int.from_bytes(digest.digest(), "little")
        return min(max(value, 1), MAX_KEY)


class Peer:
    """A process's use of a Peers region: one solve at a time (a second solve of the process
    while one holds a slot searches alone; threads of one solve share through `threads`)."""

    __slots__ = ("peers", "process", "_busy")

    def __init__(self, peers: Peers, process: int):
        if not isinstance(peers, Peers):
            raise InputError(f"endgame peers: a Peers region, not {type(peers).__name__}")
        if isinstance(process, bool) or not isinstance(process, int):
            raise InputError(f"endgame peers: a process number is an int, not {process!r}")
        if not 0 <= process < MAX_PROCESSES:
            raise InputError(
                f"endgame peers: process must be 0..{MAX_PROCESSES - 1}, not {process}"
            )
        self.peers, self.process = peers, process
        self._busy = threading.Lock()

    @contextmanager
    def slot(self, key: int) -> Iterator[tuple[mmap.mmap, int] | None]:
        """(region, slot) of the endgame `key` while the block runs, or None when every
        slot is being searched for other endgames or this process searches one already."""
        if not self._busy.acquire(blocking=False):
            yield None
            return
        region, number = self.peers._region, -1
        try:
            number = _movegen.peers_claim(region, key, self.process)
            yield (region, number) if number >= 0 else None
        finally:
            if number >= 0:
                _movegen.peers_release(region, number, self.process)
            self._busy.release()


def identity(lexicon_buffer, rules) -> bytes:
    """What a table's values depend on besides the position: the lexicon's words and the
    rules a search plays by (the board, its premiums, tile values, rack size, bingo bonus,
    the end rules)."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    digest.update(memoryview(lexicon_buffer).cast("B"))
    digest.update(repr((rules.alphabet, rules.generator_args(), rules.end)).encode())
    return digest.digest()


__all__ = ["Peers", "Peer", "identity", "MAX_PROCESSES", "MAX_SLOTS"]
