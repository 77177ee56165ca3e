"""One analysis of one position: its plays ranked, the ranking chosen by the bag.

`analyze` is the engine's single entry for "what can the player to move do here": the
position is checked (racks, tile supply, connection), the bag decides what is offered
(exchanges only while the ruleset allows them, the pass always) and how plays are ranked
(by score; by equity with leave values while tiles remain to be drawn; by score plus the
going-out adjustment once the bag is empty), and the result is what a caller shows or
sends: compact rows, the total, the equities, the time the search took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .leaves import Leaves
from .moves import PASS, Move
from .position import Position
from .solver import Solver


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """What to rank and how much of it. `leaves`: rank by equity with these leave values
    (None: by score). `limit`: keep the top N (None: all). `count_all`: with a limit, count
    every play all the same (as slow as no limit). `exchanges`: add the exchanges the bag
    allows and the pass. `breakdown`: each play's words and bingo bonus. `budget`: seconds
    the search may take (WorkLimitError past it)."""

    mode: str = "both"
    limit: int | None = None
    count_all: bool = False
    exchanges: bool = False
    breakdown: bool = False
    leaves: Leaves | None = None
    budget: float | None = None


@dataclass(frozen=True, slots=True)
class Ranked:
    """A position's plays, best first. `rows`: each play as Move.entry() gives it
    ([notation, score, row, col, direction, word, [[row, col, letter], ...]]), with a
    breakdown map last when asked for. `total`: plays in the position (None when a limit
    skipped some unseen). `equities`: beside the rows when ranked by equity or with the bag
    empty. `bag`: tiles in the bag (None when nothing asked depended on it)."""

    rows: list[list]
    total: int | None
    equities: list[float] | None
    seconds: float
    bag: int | None


def analyze(solver: Solver, position: Position, options: AnalysisOptions) -> Ranked:
    """The player to move's plays in `position`, checked and ranked as the bag decides."""
    position.playable()
    rules = solver.rules
    bag = None  # read only when something depends on it: most requests are by score alone
    if options.exchanges or options.leaves is not None:
        unseen = position.unseen()
        bag = position.bag_size(unseen)
        if options.leaves is not None and bag == 0:  # the opponent holds every unseen tile
            points = sum(n * rules.tile_values[t] for t, n in enumerate(unseen))
            return _empty_bag(solver, position, options, points)
    started = time.perf_counter()
    moves = solver.generate_moves(
        position.board,
        position.rack,
        mode=options.mode,
        limit=options.limit,
        count_all=options.count_all,
        include_exchanges=options.exchanges,
        max_exchange=rules.max_exchange(bag) if bag is not None else None,
        rank="equity" if options.leaves is not None else "score",
        leaves=options.leaves,
        budget=options.budget,
    )
    seconds = time.perf_counter() - started
    if options.breakdown:
        rows = [_with_breakdown(solver, position, move) for move in moves]
    else:  # straight from the packed records, no Move objects
        rows = moves.fields(lists=True)
    equities = moves.equities() if options.leaves is not None else None
    return Ranked(rows, moves.total, equities, seconds, bag)


def _with_breakdown(solver: Solver, position: Position, move: Move) -> list:
    """A move's row with its words and bingo bonus."""
    breakdown: dict = {"words": [], "bingo": 0}
    if move.kind == "play":
        score = solver.score_play(position.board, move.play())
        breakdown = {
            "words": [[w.word, w.coordinate, w.score] for w in score.words],
            "bingo": score.bingo,
        }
    return [*move.entry(), breakdown]


def _empty_bag(solver: Solver, position: Position, options: AnalysisOptions, points: int) -> Ranked:
    """By equity once the bag is empty: every play ranked by its score plus the going-out
    adjustment (endgame.endgame_value), reported as its equity; with `exchanges`, the pass
    (the only non-play left) after the plays worth as much as it."""
    from .endgame import endgame_value  # the endgame module loads only once a bag is empty

    started = time.perf_counter()
    moves = solver.generate_moves(
        position.board, position.rack, mode=options.mode, budget=options.budget
    )
    held = len(position.tiles())
    values = [
        endgame_value(solver.rules, len(moves.placed(i)), s, held, points)
        for i, s in enumerate(moves.scores())
    ]
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))
    if options.exchanges:
        order.append(-1)  # the pass: worth 0, after the plays worth as much
        order.sort(key=lambda i: (-(values[i] if i >= 0 else 0), i < 0, i))
    total = len(order)
    if options.limit is not None:
        order = order[: options.limit]
    seconds = time.perf_counter() - started
    passed = Move(0, -1, -1, "", "", (), PASS)
    if options.breakdown:
        rows = [_with_breakdown(solver, position, moves[i] if i >= 0 else passed) for i in order]
    else:
        fields = moves.fields(lists=True)
        rows = [fields[i] if i >= 0 else passed.entry() for i in order]
    equities = [float(values[i]) if i >= 0 else 0.0 for i in order]
    return Ranked(rows, total, equities, seconds, 0)
