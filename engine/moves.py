"""Move values and the lazy ranked list the generator returns.

The C generator hands back packed 32-byte records (layout in core.h); a Move object
is made only when a caller reads that entry, so `len()` and `moves[:10]` stay cheap even
for positions with a hundred thousand plays.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import overload

from .board import ACROSS, BLANK_FLAG, DOWN, Board, cell_text, square_label
from .notation import Play, format_rack

RECORD = struct.Struct("=iBBBB24s")
EQUITY = struct.Struct("=f")  # beside each record when ranked by equity (native float32)
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
    equity: float | None = None  # score + value of the tiles kept (when ranked by equity)
    label: str = ""  # the notation, when whoever made the Move already wrote it

    @property
    def notation(self) -> str:
        """GCG-style: `8D WO(R)D`; `-ABC` for an exchange, `-` for a pass."""
        if self.label:
            return self.label
        if self.kind == EXCHANGE:
            return f"-{self.exchanged}"
        if self.kind == PASS:
            return "-"
        return self.play().notation

    def fields(self) -> tuple:
        """(notation, score, row, col, direction, word, placed): a result's view of it."""
        return (
            self.notation,
            self.score,
            self.row,
            self.col,
            self.direction,
            self.word,
            self.placed,
        )

    def entry(self) -> list:
        """fields() as a result's compact array (placed squares as arrays)."""
        return as_entry(self.fields())

    def play(self) -> Play:
        return Play(self.row, self.col, self.direction, self.word, self.placed)

    @property
    def tiles_used(self) -> int:
        return len(self.placed)

    def to_dict(self) -> dict:
        out = {
            "notation": self.notation,
            "score": self.score,
            "row": self.row,
            "col": self.col,
            "direction": self.direction,
            "word": self.word,
            "placed": [list(p) for p in self.placed],
        }
        if self.equity is not None:
            out["equity"] = round(self.equity, 3)
        return out

    def __str__(self) -> str:
        return f"{self.notation} {self.score}"


def decode(
    board: Board, record: bytes | memoryview, offset: int = 0, equity: float | None = None
) -> Move:
    """A Move from the record at `offset` (the board is the one moves were made on)."""
    label, score, row, col, direction, word, placed = fields(board, record, offset)
    return Move(score, row, col, direction, word, placed, equity=equity, label=label)


def as_entry(fields: tuple) -> list:
    """A move's fields as a result's compact array: [notation, score, row, col, direction,
    word, [[row, col, letter], ...]] (the C describe makes the same for record lists)."""
    *head, placed = fields
    return [*head, [list(square) for square in placed]]


def fields(board: Board, record: bytes | memoryview, offset: int = 0) -> tuple:
    """The record at `offset` as (notation, score, row, col, direction, word, placed),
    without making a Move. Word, placed tiles and notation come out of one pass over the
    main word's squares."""
    score, row, col, direction, length, tiles = RECORD.unpack_from(record, offset)
    text = cell_text(board.rules)
    cells, cols = board.cells, board.rules.cols
    step = 1 if direction == 0 else cols
    at = row * cols + col
    word, placed, notation = [], [], []
    through = False  # inside a run of tiles already on the board
    for i in range(length):
        tile = tiles[i]
        if tile:
            letter = text[tile]
            placed.append((row, col + i, letter) if direction == 0 else (row + i, col, letter))
            if through:
                notation.append(")")
                through = False
        else:
            letter = text[cells[at + i * step]]
            if not through:
                notation.append("(")
                through = True
        word.append(letter)
        notation.append(letter)
    if through:
        notation.append(")")
    direction_name = ACROSS if direction == 0 else DOWN
    label = f"{square_label(row, col, direction_name)} {''.join(notation)}"
    return label, score, row, col, direction_name, "".join(word), tuple(placed)


class MoveList(Sequence):
    """Ranked moves, best first; entries become Move objects only when read."""

    __slots__ = (
        "board",
        "total",
        "generated",
        "_records",
        "_extra",
        "_count",
        "_equities",
        "_order",
        "_limit",
        "_describe",
    )

    def __init__(
        self,
        board: Board,
        records: bytes,
        total: int | None,
        extra: tuple[Move, ...] = (),
        equities: bytes | None = None,
        generated: int | None = None,
        describe=None,
    ):
        self.board = board
        self._describe = describe  # the generator's record decoder (records -> fields), if any
        self.total = total  # every play in the position; None when a limit skipped some
        self.generated = total if generated is None else generated  # plays the search made
        self._records = records
        self._extra = extra
        self._count = len(records) // RECORD.size
        self._equities = equities  # float32 per record, read as needed (most lists are cut short)
        self._limit: int | None = None
        self._order = None  # with equities and extras: records and extras merged by equity
        if equities is not None and extra:
            # ties: plays first (in generation order), then extras in their own order
            keyed = [(-e, 0, i, i) for i, e in enumerate(array("f", equities))]
            keyed += [(-(m.equity or 0.0), 1, j, -1 - j) for j, m in enumerate(extra)]
            keyed.sort()
            self._order = [k[3] for k in keyed]

    def top(self, n: int) -> MoveList:
        """This list cut to its first n entries (in place; returns self)."""
        self._limit = n if self._limit is None else min(n, self._limit)
        return self

    def __len__(self) -> int:
        full = self._count + len(self._extra)
        return full if self._limit is None else min(full, self._limit)

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
        slot = self._slot(index)
        if slot < 0:
            return self._extra[-1 - slot]
        equity = None
        if self._equities is not None:
            equity = EQUITY.unpack_from(self._equities, 4 * slot)[0]
        return decode(self.board, self._records, slot * RECORD.size, equity)

    def _slot(self, index: int) -> int:
        """Where entry `index` (0 <= index < len) lives: a record number, or -1 - j for
        the j-th extra (exchanges and the pass)."""
        if self._order is not None:
            return self._order[index]
        return index if index < self._count else self._count - 1 - index

    def fields(self, lists: bool = False, first: int | None = None) -> list:
        """Every entry (or the `first` ones), in list order, as Move.fields() gives them:
        what a result needs, without making Move objects for the plays (decoded in C when
        the generator that made the list is at hand). lists: each entry, and each placed
        square, a list."""
        n = len(self) if first is None else min(first, len(self))
        used = min(n, self._count)  # the first n entries hold records 0.. in order (ranked)
        plays = self._decode(0, used, lists)
        if self._order is None and n == used:  # plays only, in record order
            return plays
        out = []
        for i in range(n):
            slot = self._slot(i)
            if slot >= 0:
                out.append(plays[slot])
            elif lists:
                out.append(self._extra[-1 - slot].entry())
            else:
                out.append(self._extra[-1 - slot].fields())
        return out

    def placed(self, index: int) -> tuple[tuple[int, int, str], ...]:
        """Entry `index`'s placed tiles (row, col, letter), without making a Move."""
        slot = self._slot(range(len(self))[index])
        if slot < 0:
            return self._extra[-1 - slot].placed
        return self._decode(slot, 1, False)[0][6]

    def _decode(self, start: int, count: int, lists: bool) -> list:
        """Records start.. start + count - 1 as Move.fields() gives them (in C when the
        generator that made the list is at hand); lists: entries and squares as lists."""
        if self._describe is not None:
            records = self._records[start * RECORD.size : (start + count) * RECORD.size]
            return self._describe(records, self.board.cells, cell_text(self.board.rules), lists)
        plays = [
            fields(self.board, self._records, i * RECORD.size) for i in range(start, start + count)
        ]
        return [as_entry(f) for f in plays] if lists else plays

    def scores(self) -> list[int]:
        """Every score, in list order, without making Move objects."""
        # the int32 score leads every record: read them as one strided view
        out = memoryview(self._records).cast("i")[:: RECORD.size // 4].tolist()
        if self._order is not None:
            out = [out[i] if i >= 0 else self._extra[-1 - i].score for i in self._order]
        else:
            out += [m.score for m in self._extra]
        return out[: len(self)]

    def equities(self) -> list[float] | None:
        """Every equity, in list order (None when ranked by score)."""
        if self._equities is None:
            return None
        values = array("f", self._equities)
        if self._order is not None:
            out = [values[i] if i >= 0 else self._extra[-1 - i].equity for i in self._order]
        else:
            out = values.tolist() + [m.equity for m in self._extra]
        return out[: len(self)]

    def __repr__(self) -> str:
        best = f", best {self[0]}" if len(self) else ""
        return f"<MoveList {len(self)} moves{best}>"


def exchanges(
    rules,
    rack: tuple[int, ...],
    leaves=None,
    limit: int | None = None,
    max_size: int | None = None,
) -> tuple[Move, ...]:
    """Every distinct exchange of a non-empty part of the rack, then the pass (score 0),
    in enumeration order: by size, then as itertools.combinations yields them from the
    sorted rack. With leaves, each carries the equity of the tiles it keeps, best first
    (ties in enumeration order). With `limit`, only the first `limit` of that list: the
    others are never built (a best-play search asks for one of ~120). `max_size`: the most
    tiles one exchange may put back (the bag's rule; 0: the pass alone)."""
    top = len(rack) if max_size is None else max(0, min(max_size, len(rack)))
    if leaves is not None and limit == 1 and rack:
        return (_best_exchange(rules, rack, leaves, top),)
    tiles = sorted(rack, key=_tile_key)
    seen: set[tuple[int, ...]] = set()
    combos: list[tuple[int, ...]] = []
    for size in range(1, top + 1):
        for combo in combinations(tiles, size):
            if combo not in seen:
                seen.add(combo)
                combos.append(combo)
    combos.append(())  # the pass: nothing put back
    if leaves is not None:
        steps_raw, values_raw = leaves.table(tuple(rack))
        steps = memoryview(steps_raw).cast("H")
        values = memoryview(values_raw).cast("f")
        key = steps.__getitem__
        equities = [values[sum(map(key, combo))] for combo in combos]
        order = sorted(range(len(combos)), key=lambda i: -equities[i])
    else:
        equities = [None] * len(combos)
        order = list(range(len(combos)))
    if limit is not None:
        order = order[:limit]
    return tuple(
        Move(0, -1, -1, "", "", (), EXCHANGE, format_rack(rules, combos[i]), equities[i])
        if combos[i]
        else Move(0, -1, -1, "", "", (), PASS, "", equities[i])
        for i in order
    )


def _best_exchange(rules, rack: tuple[int, ...], leaves, top: int) -> Move:
    """exchanges(..., limit=1) without listing the rest: the exchange (or pass) of the
    best equity, ties going to the first in enumeration order (smallest, then first in
    sorted order; the pass last). Every distinct sub-rack is one mixed-radix key of the
    rack's leave table (the C generator's), so the keys are built by arithmetic alone."""
    ordered = sorted(set(rack), key=_tile_key)
    have = [rack.count(t) for t in ordered]
    steps_raw, values_raw = leaves.table(tuple(rack))
    steps = memoryview(steps_raw).cast("H")
    values = memoryview(values_raw).cast("f")
    weights = [steps[t] for t in ordered]
    keys = [(0, 0)]  # (key, tiles put back)
    for weight, count in zip(weights, have, strict=True):
        keys = [(key + k * weight, n + k) for key, n in keys for k in range(count + 1)]
    keys = [key for key, n in keys if n <= top]
    passed = values[0]  # key 0: nothing put back, everything kept
    best_value = max((values[key] for key in keys if key), default=None)
    if best_value is None or passed > best_value:
        return Move(0, -1, -1, "", "", (), PASS, "", passed)
    combos = []
    for key in keys:
        if key and values[key] == best_value:
            used = [key // w % (n + 1) for w, n in zip(weights, have, strict=True)]
            combos.append(tuple(t for t, k in zip(ordered, used, strict=True) for _ in range(k)))
    first = min(combos, key=lambda c: (len(c), [_tile_key(t) for t in c]))
    return Move(0, -1, -1, "", "", (), EXCHANGE, format_rack(rules, first), best_value)


def _tile_key(tile: int) -> tuple[bool, int]:
    return tile == 0, tile  # blanks last


__all__ = ["Move", "MoveList", "decode", "fields", "exchanges", "BLANK_FLAG", "square_label"]
