"""Can a real game reach this position? Tile supply and connectivity.

The generator plays any board it is given; a service that answers strangers checks first
that the rack and the board could come from one bag (no more of a letter, or of blanks,
than the ruleset's set holds) and that the tiles on the board hang together through the
centre square, as every legal sequence of plays leaves them.
"""

from __future__ import annotations

import array
import functools
from collections import Counter
from collections.abc import Iterable

from . import _movegen
from .board import Board
from .errors import InputError, RackError
from .rules import Ruleset

BLANK = "?"


def _describe(rules: Ruleset, tile: int) -> str:
    return "blanks" if tile == 0 else f"{rules.alphabet[tile - 1]}s"


def _supply(rules: Ruleset, tile: int) -> int:
    return rules.blanks if tile == 0 else rules.counts[rules.alphabet[tile - 1]]


@functools.cache
def _supplies(rules: Ruleset) -> tuple[int, ...]:
    """The set's count of every tile, by number (blank = 0)."""
    return tuple(_supply(rules, tile) for tile in range(rules.size + 1))


def check_rack(rules: Ruleset, tiles: Iterable[int]) -> None:
    """RackError when the rack holds more of a tile (blank = 0) than the set has."""
    for tile, n in sorted(Counter(tiles).items()):
        if n > _supply(rules, tile):
            raise RackError(
                f"the rack holds {n} {_describe(rules, tile)}; the {rules.name} set has "
                f"{_supply(rules, tile)}"
            )


def board_tiles(board: Board) -> Counter[int]:
    """Tiles on the board by tile number; a blank (whatever it stands for) counts as 0."""
    counts, _stray = _census(board)
    return Counter({tile: n for tile, n in enumerate(counts) if n})


def _left(board: Board, rack: Iterable[int]) -> tuple[list[int], int]:
    """The set less the board and the rack, by tile number (negative where they hold more
    than the set), and the census's stray square (see _census)."""
    counts, stray = _census(board)
    left = [have - n for have, n in zip(_supplies(board.rules), counts, strict=False)]
    for tile in rack:
        left[tile] -= 1
    return left, stray


def unseen_counts(board: Board, rack: Iterable[int] = (), strict: bool = True) -> list[int]:
    """How many of each tile (by number, blank = 0) the player to move cannot see: the
    set less the board and the rack. When those hold more of a tile than the set: an
    InputError, or with strict=False none of it unseen (a game record's odd rack)."""
    rules = board.rules
    left, _stray = _left(board, rack)
    if min(left) >= 0:
        return left
    if not strict:
        return [max(0, n) for n in left]
    extra = ", ".join(f"{-n} {_describe(rules, t)}" for t, n in enumerate(left) if n < 0)
    raise InputError(
        f"the board and rack hold more tiles than the {rules.name} set has: {extra} too many"
    )


def check_position(board: Board, rack: Iterable[int] = ()) -> None:
    """InputError when board and rack together hold more of a tile than the set, or the
    board's tiles are not one group through the centre square."""
    rules = board.rules
    left, stray = _left(board, rack)
    for tile, n in enumerate(left):
        if n < 0:
            have = _supplies(rules)[tile]
            raise InputError(
                f"the board and rack hold {have - n} {_describe(rules, tile)}; the "
                f"{rules.name} set has {have}"
            )
    _connected(board, stray)


@functools.cache
def _supply_counts(rules: Ruleset) -> bytes:
    """_supplies as the uint32 counts position_fits reads."""
    return array.array("I", _supplies(rules)).tobytes()


def fits(board: Board, rack: tuple[int, ...]) -> bool:
    """Whether check_rack and check_position would both pass, in one pass in C: what the
    service asks of every position, and all is usually well (they say what is not)."""
    rules = board.rules
    centre = rules.centre[0] * rules.cols + rules.centre[1]
    supply = _supply_counts(rules)
    return _movegen.position_fits(board.cells, rules.rows, rules.cols, centre, supply, bytes(rack))


def check_connected(board: Board) -> None:
    """InputError unless the board is empty or its tiles form one group covering the centre."""
    _connected(board, _census(board)[1])


def _census(board: Board) -> tuple[list[int], int]:
    """Tiles by number (blanks at 0) and the connection check's answer, from the C core."""
    rules = board.rules
    centre = rules.centre[0] * rules.cols + rules.centre[1]
    return _movegen.board_census(board.cells, rules.rows, rules.cols, centre)


def _connected(board: Board, stray: int) -> None:
    if stray == -2:
        row, col = board.rules.centre
        raise InputError(
            f"the board has tiles but its centre square ({row + 1}{chr(ord('A') + col)}) is "
            "empty: the first play covers it"
        )
    if stray >= 0:
        r, c = divmod(stray, board.rules.cols)
        raise InputError(
            f"the tile at {r + 1}{chr(ord('A') + c)} is not connected to the centre square: "
            "every play touches the tiles already down"
        )


def unseen(board: Board) -> Counter[int]:
    """The tiles not on the board (blank = 0): what a rack and the bag hold between them."""
    rules = board.rules
    left = Counter({i + 1: rules.counts[ch] for i, ch in enumerate(rules.alphabet)})
    left[0] = rules.blanks
    left.subtract(board_tiles(board))
    return +left


def random_rack(board: Board, rng, size: int | None = None) -> str:
    """A rack drawn at random (`rng`: a random.Random) from the tiles the board leaves."""
    rules = board.rules
    pool = sorted(unseen(board).elements())
    tiles = rng.sample(pool, min(size or rules.rack_size, len(pool)))
    return "".join(
        rules.alphabet[t - 1] if t else BLANK for t in sorted(tiles, key=lambda t: t or 99)
    )
