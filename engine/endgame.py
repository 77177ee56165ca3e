"""The exact endgame: once the bag is empty both racks are known and the right play is
found by search (endgame.c), not by equity.

`solve_part` answers an Endgame: the value (the spread the side to move gains from here to the
end of the game, the ruleset's going-out adjustment included: MAGPIE's V), the line both
sides play, the depth of the deepest search completed, whether that search reached the end
of the game on every line (`exact`), the positions searched and the time taken. Static
ranking with an empty bag (`endgame_equity`) is the fallback where no search is wanted.
"""

from __future__ import annotations

import array
import mmap
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass

from . import _movegen
from .board import Board
from .errors import InputError, WorkLimitError
from .moves import PASS, RECORD, Move, decode
from .peers import Peer
from .rules import MAX_LETTERS, Ruleset

MAX_PLIES = _movegen.ENDGAME_MAX_PLIES
MIN_TABLE_BITS = _movegen.ENDGAME_MIN_TABLE
MAX_TABLE_BITS = _movegen.ENDGAME_MAX_TABLE
MAX_THREADS = 64
ENTRY_BYTES = 16
DEFAULT_TABLE_MB = 64


@dataclass(frozen=True, slots=True)
class Endgame:
    """A solved (or, past its budget, best-known) endgame."""

    value: int  # spread gained by the side to move until the game ends
    moves: tuple[Move, ...]  # the line: the side to move's play, then the other's, ...
    depth: int  # plies of the deepest iteration completed
    exact: bool  # that iteration saw the end of the game on every line: value proven
    nodes: int  # positions searched
    seconds: float

    @property
    def best(self) -> Move:
        """The play to make (the first of the line)."""
        return self.moves[0]

    def to_dict(self) -> dict:
        return {
            "value": self.value,
            "moves": [m.notation for m in self.moves],
            "scores": [m.score for m in self.moves],
            "depth": self.depth,
            "exact": self.exact,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


def static_choice(moves, rules: Ruleset, held: int, opponent_points: int) -> int | None:
    """The index in `moves` (a MoveList) of the best play by endgame_value, ties to the
    first; None when there is none."""
    scores = moves.scores()
    best, best_value = None, None
    for i, score in enumerate(scores):
        value = endgame_value(rules, len(moves.placed(i)), score, held, opponent_points)
        if best_value is None or value > best_value:
            best, best_value = i, value
    return best


class EndValues:
    """Leave values for an empty bag, in the form the generator reads a leave table: 0 for
    any tiles kept, the going-out adjustment `bonus` for keeping none, moved half a point
    towards zero. Values are whole points, so a play going out ranks just below one that
    does not and is worth the same (that one scores more) and above any worth less: ranked
    by equity with these, plays come in static_choice's order (value, then score, then
    generation), and best-first finds the first without generating the rest. playout.c's
    end_values is the same table."""

    __slots__ = ("bonus",)

    def __init__(self, bonus: int):
        self.bonus = bonus

    def table(self, rack: tuple[int, ...]) -> tuple[bytes, bytes]:
        """Key steps (tile by tile, mixed radix, as LeaveModel.table) and the values."""
        have: dict[int, int] = {}
        for tile in rack:
            have[tile] = have.get(tile, 0) + 1
        steps = [0] * (MAX_LETTERS + 1)
        radix = 1
        for tile in sorted(have):
            steps[tile] = radix
            radix *= have[tile] + 1
        values = array.array("f", bytes(4 * radix))
        shift = -0.5 if self.bonus > 0 else 0.5 if self.bonus < 0 else 0.0
        values[radix - 1] = self.bonus + shift  # every tile used: the rack goes out
        return array.array("H", steps).tobytes(), values.tobytes()


def best_by_endgame_value(solver, board: Board, rack: str, opponent_points: int):
    """static_choice(generate_moves(board, rack), ...) without ranking every play: the
    first play ranked by equity on EndValues. None when the rack has no play."""
    bonus = EndValues(solver.rules.end.out_bonus(opponent_points))
    moves = solver.generate_moves(board, rack, limit=1, rank="equity", leaves=bonus)
    return moves[0] if len(moves) else None


def endgame_value(rules: Ruleset, placed: int, score: int, held: int, opponent_points: int) -> int:
    """A play's static value with the bag empty: its score, plus the ruleset's going-out
    adjustment when it plays the rack's last tile. Leave values mean nothing once nothing
    more is drawn; the exact solve is what ranks plays, this is the quick order beside it."""
    return score + (rules.end.out_bonus(opponent_points) if placed == held else 0)


def table_bits(table_mb: float) -> int:
    """log2 of the table entries that fit in `table_mb` MiB (at least the C minimum)."""
    if (
        not isinstance(table_mb, int | float)
        or isinstance(table_mb, bool)
        or not 0 < table_mb < float("inf")
    ):
        raise InputError(f"table_mb must be a positive number of MiB, not {table_mb!r}")
    entries = int(table_mb * (1 << 20)) // ENTRY_BYTES
    bits = max(MIN_TABLE_BITS, entries.bit_length() - 1)
    if bits > MAX_TABLE_BITS:
        raise InputError(f"table_mb {table_mb:g} is more than the solver's table can address")
    return bits


def passed_before(rules: Ruleset, scoreless: int) -> bool:
    """Whether the search starts as if the last turn was a pass, given the scoreless turns
    already played in a row. With the bag empty a pass leaves the position as it was, so
    a limit of N scoreless turns has the value of ending the game at the second pass in a
    row, counted from a pass when N - scoreless is odd (DESIGN-NOTES.md, "Endgame")."""
    limit = rules.end.scoreless_turns
    if not isinstance(scoreless, int) or isinstance(scoreless, bool) or not 0 <= scoreless < limit:
        raise InputError(
            f"scoreless turns must be 0..{limit - 1} ({limit} end a {rules.name} game), "
            f"not {scoreless!r}"
        )
    return (limit - scoreless) % 2 == 1


def check_tiles(rules: Ruleset, board: Board, racks: tuple[tuple[int, ...], ...]) -> None:
    """Refuse a position holding more of a tile than the set has (blanks by their tile)."""
    used = [0] * (rules.size + 1)
    for cell in board.cells:
        if cell:
            used[0 if cell & 0x80 else cell & 0x7F] += 1
    for rack in racks:
        for tile in rack:
            used[tile] += 1
    if used[0] > rules.blanks:
        raise InputError(
            f"board and racks hold {used[0]} blanks; the {rules.name} set has {rules.blanks}"
        )
    for tile in range(1, rules.size + 1):
        letter = rules.letter(tile)
        if used[tile] > rules.counts[letter]:
            raise InputError(
                f"board and racks hold {used[tile]} {letter}; "
                f"the {rules.name} set has {rules.counts[letter]}"
            )


def line_moves(board: Board, records: bytes) -> tuple[Move, ...]:
    """The C solver's line as Moves, each decoded on the board the ones before it leave."""
    out = []
    for offset in range(0, len(records), RECORD.size):
        if records[offset + 7] == 0:  # length 0: a pass
            out.append(Move(0, -1, -1, "", "", (), PASS))
            continue
        move = decode(board, records, offset)
        out.append(move)
        board = board.apply(move.placed)
    return tuple(out)


class Table:
    """A transposition table kept across solves: one game's empty-bag turns, or a
    pre-endgame's draws, are positions of one another's searches (the table's keys are the
    positions': board and both racks), so a later solve starts from what an earlier one
    proved. Bound to the first Solver and end rules it serves (another's would read wrong
    values: the table starts empty again); a solve that finds it in use by another thread
    uses a table of its own."""

    __slots__ = ("bits", "_entries", "_owner", "_lock")

    def __init__(self, table_mb: float = DEFAULT_TABLE_MB, written: bool = False):
        """written: every page written now, not at its first use; for a table searched
        while other threads of the process search (a pre-endgame's threads): see
        _table_memory. A solve on several threads writes them itself."""
        self.bits = table_bits(table_mb)
        self._entries = _table_memory(ENTRY_BYTES << self.bits, written)
        self._owner: tuple | None = None
        self._lock = threading.Lock()

    @property
    def megabytes(self) -> float:
        return len(self._entries) / (1 << 20)

    def clear(self) -> None:
        """Empty the table (waiting for a solve using it to finish)."""
        with self._lock:
            self._entries[:] = bytes(len(self._entries))
            self._owner = None

    def _take(self, generator, end) -> mmap.mmap | None:
        """The entries for a solve with `generator` and `end`, or None when busy."""
        if not self._lock.acquire(blocking=False):
            return None
        owner = (generator, end)
        if self._owner is not None and (self._owner[0] is not generator or self._owner[1] != end):
            self._entries[:] = bytes(len(self._entries))
        self._owner = owner
        return self._entries

    def _give_back(self) -> None:
        self._lock.release()


def _table_memory(size: int, written: bool) -> mmap.mmap:
    """Zeroed memory for a kept table, on huge pages where the kernel gives them (as
    endgame.h's endgame_table_new); `written`: every page written now (a page first read
    maps the zero page, and the write that replaces it, while other threads of the process
    run, costs a TLB flush on every CPU they run on)."""
    memory = mmap.mmap(-1, size)
    if size >= 2 << 20 and hasattr(mmap, "MADV_HUGEPAGE"):
        memory.madvise(mmap.MADV_HUGEPAGE)
    if written:
        memory[:: mmap.PAGESIZE] = bytes(-(-size // mmap.PAGESIZE))
    return memory


@dataclass(frozen=True, slots=True)
class Split:
    """Which of the root's plays one search looks at (numbered in the root's canonical
    order, a function of the position alone, the pass last): number i when first <= i,
    i < last (None: no end) and (i - first) % parts == part. With `floor`, a value another
    part already reached: plays worth less are only bounded."""

    first: int = 0
    last: int | None = None
    parts: int = 1
    part: int = 0
    floor: int | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """One split search's answer: its Endgame, the canonical number of its line's first
    play, whether every play it looked at was worth less than the floor, and whether the
    split left it none to look at."""

    endgame: Endgame
    root: int
    below_floor: bool
    no_plays: bool


def solve_part(
    generator,
    rules: Ruleset,
    board: Board,
    rack: tuple[int, ...],
    opponent: tuple[int, ...],
    plies: int | None = None,
    budget_s: float | None = None,
    table_mb: float = DEFAULT_TABLE_MB,
    scoreless: int = 0,
    split: Split = Split(),
    max_nodes: int | None = None,
    table: Table | None = None,
    threads: int = 1,
    peer: Peer | None = None,
    identity: bytes = b"",
) -> Part:
    """The endgame with `rack` to move against `opponent` (tile numbers), on the root's
    plays `split` names (all by default): Solver.solve_endgame and its split. `table`: one
    kept across solves (table_mb is then its size, not this solve's). threads: searches at
    once on the table (a proven value and its line are the same for any number; an unproven
    answer, cut by plies, budget_s or max_nodes, may differ with more than one). peer: the
    solve searches with the other processes' solves of this endgame (engine/peers.py;
    identity: the lexicon's and rules', peers.identity), on their table rather than
    `table`; a split, a depth limit (plies) or a table kept searches alone."""
    if plies is None:
        plies = MAX_PLIES
    elif isinstance(plies, bool) or not isinstance(plies, int) or not 1 <= plies <= MAX_PLIES:
        raise InputError(f"plies must be 1..{MAX_PLIES} or None (search to the end), not {plies!r}")
    if budget_s is not None and not (
        isinstance(budget_s, int | float) and not isinstance(budget_s, bool) and 0 < budget_s <= 1e6
    ):
        raise InputError(f"budget_s must be a number of seconds in (0, 1e6], not {budget_s!r}")
    for name, tiles in (("rack", rack), ("opponent's rack", opponent)):
        if not tiles:
            raise InputError(f"the {name} is empty: the game is over, there is no endgame to solve")
        if len(tiles) > rules.rack_size:
            raise InputError(
                f"the {name} holds {len(tiles)} tiles; "
                f"a rack of {rules.name} holds {rules.rack_size}"
            )
    whole = isinstance(max_nodes, int) and not isinstance(max_nodes, bool)
    if max_nodes is not None and not (whole and 1 <= max_nodes < 1 << 62):
        raise InputError(f"max_nodes must be a whole number >= 1 or None, not {max_nodes!r}")
    check_tiles(rules, board, (rack, opponent))
    bits = table.bits if isinstance(table, Table) else table_bits(table_mb)
    passed = passed_before(rules, scoreless)
    counts = [bytearray(rules.size + 1), bytearray(rules.size + 1)]
    for side, tiles in enumerate((rack, opponent)):
        for t in tiles:
            counts[side][t] += 1
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise InputError(f"threads must be 1..{MAX_THREADS}, not {threads!r}")
    if table is not None and not isinstance(table, Table):
        raise InputError(f"table must be an endgame Table, not {type(table).__name__}")
    if peer is not None and not isinstance(peer, Peer):
        raise InputError(f"peer must be an endgame Peer, not {type(peer).__name__}")
    end = rules.end
    entries = None
    together = peer is not None and table is None and split == Split() and plies == MAX_PLIES
    racks = (bytes(counts[0]), bytes(counts[1]))
    claim = (
        peer.slot(peer.peers.key(identity, board.cells, racks, passed))
        if together
        else nullcontext()
    )
    started = time.perf_counter()
    with claim as claimed:
        region, number = claimed or (None, -1)
        try:
            entries = table._take(generator, end) if table is not None else None
            value, depth, exact, nodes, records, root, below, none = generator.endgame(
                board.cells, *racks, plies, budget_s or 0.0, bits, passed, end.going_out,
                end.stuck_loses_own, end.scoreless_loses_own, split.first,
                -1 if split.last is None else split.last, split.parts, split.part, split.floor,
                max_nodes or 0, entries, threads, region, number,
            )  # fmt: skip
        except TimeoutError:
            limit = f"{budget_s:g} s" if budget_s is not None else f"{max_nodes:,} positions"
            raise WorkLimitError(
                f"the endgame search did not finish its first iteration within {limit}"
            ) from None
        except ValueError as exc:  # a split out of range
            raise InputError(str(exc)) from None
        finally:
            if entries is not None:
                table._give_back()
    seconds = time.perf_counter() - started
    endgame = Endgame(value, line_moves(board, records), depth, bool(exact), nodes, seconds)
    return Part(endgame, root, bool(below), bool(none))


__all__ = [
    "endgame_value",
    "static_choice",
    "Endgame",
    "MAX_PLIES",
    "DEFAULT_TABLE_MB",
    "Part",
    "Split",
    "Table",
    "solve_part",
    "table_bits",
    "passed_before",
]
