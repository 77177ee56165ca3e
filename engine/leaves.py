"""Leave values: what the tiles kept on the rack are worth, for ranking plays by equity
(score + leave value). Read from KLV2 files, the format of the wolges and MAGPIE engines:

    u32 node count, that many KWG nodes (a DAWG of leaves: sorted tile multisets,
    tile 0 = the blank, letters 1..N), u32 leave count, that many float32 values.

All little-endian. Leave i is the i-th leave in the DAWG's order (a word before its
extensions, siblings by tile), so a lookup walks the graph counting the words passed.
"""

from __future__ import annotations

import array
import math
import os
import struct
import sys
from collections.abc import Iterable, Mapping

from . import _movegen
from .errors import LexiconError
from .files import read_regular
from .lexicon import ACCEPTS, ARC_MASK, _build_kwg, sibling
from .rules import Ruleset

MAX_LETTERS = 63


class Leaves:
    """Leave values for one alphabet; `value(tiles)` of a multiset of tile numbers."""

    __slots__ = (
        "rules",
        "path",
        "_nodes",
        "_values",
        "_counts",
        "_cache",
        "_tables",
    )

    def __init__(self, data: bytes, rules: Ruleset, path: str | None = None):
        where = path or "leave data"
        self.rules, self.path = rules, path
        if len(data) < 8:
            raise LexiconError(f"{where} is not a KLV2 file: only {len(data)} bytes")
        (n,) = struct.unpack_from("<I", data, 0)
        end = 4 + 4 * n
        if n < 2 or end + 4 > len(data):
            raise LexiconError(
                f"{where} is not a KLV2 file: {n} nodes do not fit in {len(data)} bytes"
            )
        (count,) = struct.unpack_from("<I", data, end)
        if end + 4 + 4 * count != len(data):
            raise LexiconError(
                f"{where} is not a KLV2 file: {count} leave values need {end + 4 + 4 * count} "
                f"bytes, the file has {len(data)} (truncated, or a KLV of another version)"
            )
        graph = data[4:end]
        try:
            words, _max_len, _visited, _n, counts = _movegen.kwg_check(graph, rules.size, 0, True)
        except ValueError as exc:
            raise LexiconError(
                f"{where}: its leave graph is unusable for {rules.name}: {exc}"
            ) from None
        if words != count:
            raise LexiconError(
                f"{where}: the graph holds {words} leaves but the file gives {count} values"
            )
        self._nodes = array.array("I", graph)
        self._values = array.array("f", data[end + 4 :])
        if sys.byteorder != "little":  # pragma: no cover
            self._nodes.byteswap()
            self._values.byteswap()
        if not math.isfinite(sum(self._values)):  # float32s: the double sum cannot overflow
            bad = next(i for i, v in enumerate(self._values) if not math.isfinite(v))
            raise LexiconError(
                f"{where}: leave value #{bad} is {self._values[bad]}, not a finite number "
                "(equities could not be ranked)"
            )
        # the leaves below each node and its later siblings (C walk): at a list start,
        # every leave below the list
        self._counts = array.array("I", counts)
        self._cache: dict[tuple[int, ...], float] = {}
        self._tables: dict[tuple[int, ...], tuple[bytes, bytes]] = {}  # by sorted rack

    @classmethod
    def open(cls, path: str | os.PathLike, rules: Ruleset) -> Leaves:
        data = read_regular(path, "leave file", LexiconError)
        return cls(data, rules, os.fspath(path))

    def __len__(self) -> int:
        return len(self._values)

    def index(self, tiles: Iterable[int]) -> int | None:
        """Position of a leave (tile numbers, blank 0) in the file, None if absent."""
        nodes, counts = self._nodes, self._counts
        leave = sorted(tiles)
        if not leave:
            return None
        idx, start = 0, nodes[0] & ARC_MASK
        for k, tile in enumerate(leave):
            if not start:
                return None
            i = sibling(nodes, start, tile)
            if i < 0:
                return None
            for before in nodes[start:i]:  # the leaves below the siblings it passed
                idx += (1 if before & ACCEPTS else 0) + counts[before & ARC_MASK]
            node = nodes[i]
            if k == len(leave) - 1:
                return idx if node & ACCEPTS else None
            idx += 1 if node & ACCEPTS else 0
            start = node & ARC_MASK
        return None  # pragma: no cover

    def value(self, tiles: Iterable[int]) -> float:
        """Value of keeping these tiles (tile numbers, blank 0); 0 for the empty leave
        and for a leave the file does not list."""
        key = tuple(sorted(tiles))
        cached = self._cache.get(key)
        if cached is None:
            i = self.index(key)
            cached = float(self._values[i]) if i is not None else 0.0
            if len(self._cache) < 200_000:
                self._cache[key] = cached
        return cached

    def table(self, rack: tuple[int, ...]) -> tuple[bytes, bytes]:
        """For the C generator: key steps per tile and the value of the leave left by
        every sub-multiset of `rack` used, indexed by its mixed-radix key (built in C)."""
        key = tuple(rack)  # as given: the same rack text gives the same order
        table = self._tables.get(key)
        if table is None:
            have = bytearray(MAX_LETTERS + 1)
            for tile in rack:
                have[tile] += 1
            table = _movegen.leave_table(self._nodes, self._counts, self._values, bytes(have))
            if len(self._tables) >= 50_000:  # racks repeat in analysis; bound the memory
                self._tables.clear()
            self._tables[key] = table
        return table

    def graph(self) -> tuple[array.array, array.array, array.array]:
        """The leave graph for the C core's playouts: nodes, leaves below each list start,
        values (native byte order)."""
        return self._nodes, self._counts, self._values

    # ---------------------------------------------------------------- writing
    @staticmethod
    def to_bytes(values: Mapping[tuple[int, ...], float]) -> bytes:
        """A KLV2 file from {sorted leave tiles: value}."""
        leaves = sorted({tuple(sorted(k)) for k in values if k})
        graph = _build_kwg([bytes(k) for k in leaves])
        ordered = array.array("f", (values[k] for k in leaves))
        if sys.byteorder != "little":  # pragma: no cover
            ordered.byteswap()
        return (
            struct.pack("<I", len(graph) // 4)
            + graph
            + struct.pack("<I", len(leaves))
            + ordered.tobytes()
        )
