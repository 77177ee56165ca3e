"""The pre-endgame with one tile in the bag: every play draws that tile and empties the bag,
so after it both racks are known up to which unseen tile was drawn. Each candidate play is
valued by solving the endgame that follows every possible draw exactly (the opponent to
move), averaged over the unseen tiles as they are likely to be drawn; its chance of winning
counts the draws after which the mover ends ahead (a tie half).

The pass (which leaves the tile in the bag for the opponent) is not among the candidates:
the pre-endgame of the other side would have to be solved beneath it.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from .board import Board
from .endgame import Table
from .errors import InputError, WorkLimitError
from .moves import Move
from .notation import format_rack
from .position import Position

MAX_CANDIDATES = 100
BAG_SIZES = range(1, 2)  # the bag sizes this pre-endgame solves (Position.preendgame)


@dataclass(frozen=True, slots=True)
class Draw:
    """One unseen tile the play may draw: how many of it are unseen, and the spread the
    mover gains to the end of the game after drawing it (the play's score included)."""

    tile: str
    count: int
    value: int
    exact: bool


@dataclass(frozen=True, slots=True)
class PreendgamePlay:
    move: Move
    mean: float  # the value averaged over the draws
    win_rate: float  # the share of draws after which the mover ends ahead (ties half)
    draws: tuple[Draw, ...]

    @property
    def exact(self) -> bool:
        return all(d.exact for d in self.draws)


@dataclass(frozen=True, slots=True)
class Preendgame:
    plays: tuple[PreendgamePlay, ...]  # best first: by mean, then chance of winning
    unseen: str  # the tiles the mover cannot see: the opponent's rack and the bag's one
    nodes: int
    seconds: float

    @property
    def exact(self) -> bool:
        return all(p.exact for p in self.plays)


def solve_preendgame(
    solver,
    board: Board,
    rack: str,
    candidates: int = 20,
    lead: int = 0,
    budget_s: float | None = None,
    table_mb: float = 16,
) -> Preendgame:
    """Value the top `candidates` plays by score (every one when fewer) of a position with
    one tile in the bag. `lead`: the mover's score less the opponent's, for the chance of
    winning. `budget_s`: seconds for the whole; each endgame gets an equal share of what is
    left, and one not proven in its share says so (`exact`). `table_mb`: the one table
    every endgame solved here shares."""
    rules = solver.rules
    if (
        isinstance(candidates, bool)
        or not isinstance(candidates, int)
        or not 1 <= candidates <= MAX_CANDIDATES
    ):
        raise InputError(f"candidates must be 1..{MAX_CANDIDATES}, not {candidates!r}")
    position = Position.of(board, rack).preendgame(BAG_SIZES)
    tiles = position.tiles()
    unseen = [t for t, n in enumerate(position.unseen()) for _ in range(n)]
    started = time.perf_counter()
    deadline = None if budget_s is None else started + budget_s
    moves = solver.generate_moves(board, rack, limit=candidates)
    draws = Counter(unseen)
    solves = len(moves) * len(draws)
    nodes = 0
    table = Table(table_mb)  # the draws' endgames share positions: one table for them all
    out = []
    for i in range(len(moves)):
        move = moves[i]
        after = board.apply(move.placed)
        kept = list(tiles)
        for _, _, letter in move.placed:
            kept.remove(0 if letter.islower() else rules.index(letter))
        results = []
        for tile, count in sorted(draws.items()):
            mine = [*kept, tile]
            theirs = list(unseen)
            theirs.remove(tile)
            seconds = None
            if deadline is not None:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise WorkLimitError(f"the pre-endgame needed more than {budget_s:g} s")
                seconds = max(0.001, remaining / max(1, solves))
            solves -= 1
            reply = solver.solve_endgame(
                after, format_rack(rules, tuple(theirs)), format_rack(rules, tuple(mine)),
                budget_s=seconds, table=table,
            )  # fmt: skip
            nodes += reply.nodes
            letter = "?" if tile == 0 else rules.letter(tile)
            results.append(Draw(letter, count, move.score - reply.value, reply.exact))
        total = sum(d.count for d in results)
        mean = sum(d.count * d.value for d in results) / total
        wins = sum(
            d.count * (1.0 if lead + d.value > 0 else 0.5 if lead + d.value == 0 else 0.0)
            for d in results
        )
        out.append(PreendgamePlay(move, mean, wins / total, tuple(results)))
    out.sort(key=lambda p: (-p.mean, -p.win_rate))
    text = "".join(
        "?" if t == 0 else rules.letter(t) for t in sorted(unseen, key=lambda t: (t == 0, t))
    )
    return Preendgame(tuple(out), text, nodes, time.perf_counter() - started)


__all__ = ["Draw", "Preendgame", "PreendgamePlay", "solve_preendgame", "MAX_CANDIDATES"]
