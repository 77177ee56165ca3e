"""Move values and the lazy ranked list the generator returns.

The C generator hands back packed 32-byte records (layout in _movegen.c); a Move object
is made only when a caller reads that entry, so `len()` and `moves[:10]` stay cheap even
for positions with a hundred thousand plays.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import overload

from .board import ACROSS, BLANK_FLAG, DOWN, Board, cell_letter, square_label
from .notation import Play, format_rack

RECORD = struct.Struct("=iBBBB24s")
PLAY, EXCHANGE, PASS = "play", "exchange", "pass"


@dataclass(frozen=True, slots=True)
class Move:
    """One legal play (or, when asked for, an exchange or a pass) and its score."""

    score: int
    row: int
    col: int
    direction: str
    word: str  # the whole main word, blanks lowercase; "" for exchanges and passes
    placed: tuple[tuple[int, int, str], ...]  # (row, col, letter) of new tiles, 0-based
    kind: str = PLAY
    exchanged: str = ""  # tiles put back, for an exchange

    @property
    def notation(self) -> str:
        """GCG-style: `8D WO(R)D`; `-ABC` for an exchange, `-` for a pass."""
        if self.kind == EXCHANGE:
            return f"-{self.exchanged}"
        if self.kind == PASS:
            return "-"
        return self.play().notation

    def play(self) -> Play:
        return Play(self.row, self.col, self.direction, self.word, self.placed)

    @property
    def tiles_used(self) -> int:
        return len(self.placed)

    def to_dict(self) -> dict:
        return {
            "notation": self.notation,
            "score": self.score,
            "row": self.row,
            "col": self.col,
            "direction": self.direction,
            "word": self.word,
            "placed": [list(p) for p in self.placed],
        }

    def __str__(self) -> str:
        return f"{self.notation} {self.score}"


def decode(board: Board, record: bytes | memoryview, offset: int = 0) -> Move:
    """A Move from the record at `offset` (the board is the one moves were made on)."""
    score, row, col, direction, length, tiles = RECORD.unpack_from(record, offset)
    rules = board.rules
    dr, dc = (0, 1) if direction == 0 else (1, 0)
    word, placed = [], []
    for i in range(length):
        r, c = row + dr * i, col + dc * i
        tile = tiles[i]
        if tile:
            letter = cell_letter(rules, tile)
            placed.append((r, c, letter))
        else:
            letter = cell_letter(rules, board.cell(r, c))
        word.append(letter)
    return Move(score, row, col, ACROSS if direction == 0 else DOWN, "".join(word), tuple(placed))


class MoveList(Sequence):
    """Ranked moves, best first; entries become Move objects only when read."""

    __slots__ = ("board", "total", "_records", "_extra", "_count")

    def __init__(self, board: Board, records: bytes, total: int, extra: tuple[Move, ...] = ()):
        self.board = board
        self.total = total  # plays found before any limit
        self._records = records
        self._extra = extra
        self._count = len(records) // RECORD.size

    def __len__(self) -> int:
        return self._count + len(self._extra)

    @overload
    def __getitem__(self, index: int) -> Move: ...
    @overload
    def __getitem__(self, index: slice) -> list[Move]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("move index out of range")
        if index >= self._count:
            return self._extra[index - self._count]
        return decode(self.board, self._records, index * RECORD.size)

    def scores(self) -> list[int]:
        """Every score, without making Move objects."""
        out = [s for (s, *_rest) in RECORD.iter_unpack(self._records)]
        return out + [m.score for m in self._extra]

    def __repr__(self) -> str:
        best = f", best {self[0]}" if len(self) else ""
        return f"<MoveList {len(self)} moves{best}>"


def exchanges(rules, rack: tuple[int, ...]) -> tuple[Move, ...]:
    """Every distinct exchange of a non-empty part of the rack, then the pass (score 0)."""
    tiles = sorted(rack, key=lambda t: (t == 0, t))
    seen: set[tuple[int, ...]] = set()
    out = []
    for size in range(1, len(tiles) + 1):
        for combo in combinations(tiles, size):
            if combo in seen:
                continue
            seen.add(combo)
            out.append(Move(0, -1, -1, "", "", (), EXCHANGE, format_rack(rules, combo)))
    out.append(Move(0, -1, -1, "", "", (), PASS))
    return tuple(out)


__all__ = ["Move", "MoveList", "decode", "exchanges", "BLANK_FLAG", "square_label"]
