"""The pre-endgame: 1 to 4 tiles in the bag. The mover sees its rack and the unseen tiles
(the opponent's rack and the bag together), so each candidate is valued over every way the
unseen tiles can lie: each `k`-tile set the bag may hold (weighted by how many ways the
unseen tiles give it) and, when the bag outlasts the play, every order it is drawn in.

- A play that empties the bag (it lays at least as many tiles as the bag holds) leaves both
  racks known: the endgame after it, the opponent to move, is solved (exactly, or to the
  depth of the stage, said so).
- A play that does not (the pass, an exchange, a play of fewer tiles than the bag holds)
  leaves the opponent to move with tiles still to draw. From there each side makes its
  *modelled* move, the one a static ranking puts first (by equity with leave values, by
  score without), with the draws it makes taken over every order of the bag, until the
  bag is empty; then the endgame is solved. Those values rest on the model (`modelled`):
  an opponent who reasons better than that can do better against them.

Candidates go through two stages: every candidate valued with each endgame searched a few
plies deep, then the best of those (`finalists`) with each endgame solved to the end. In the
second stage a candidate is dropped as soon as even winning every outcome left could not
lift its chance of winning to the best finished one's (`cut`): it cannot be the best play.
DESIGN-NOTES.md, "Pre-endgame", gives the model and its costs.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from math import comb

from .board import Board
from .endgame import MAX_PLIES, Table
from .errors import InputError, WorkLimitError
from .moves import EXCHANGE, PASS, Move
from .notation import format_rack, parse_rack
from .position import Position
from .solver import Solver

MAX_CANDIDATES = 100
MAX_BAG = 4
BAG_SIZES = range(1, MAX_BAG + 1)  # the bag sizes this pre-endgame solves (Position.preendgame)
# (endgame plies, candidates valued) per stage; None: to the end of the game. MAGPIE's
# pre-endgame halves its field over the same depths.
STAGES = ((2, 32), (3, 16), (4, 8), (5, 4), (6, 2))
EXACT_STAGES = ((2, 32), (None, 4))  # the last stage proves its candidates' values
QUICK_STAGES = ((1, 16), (2, 4))  # an annotation's turns: seconds at most, most of them
MAX_STAGES = 8
MAX_THREADS = 64
MAX_PARTS = 64
PASSED = Move(0, -1, -1, "", "", (), PASS)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One set of tiles the bag may hold: `count` ways of dealing the unseen tiles give it
    (its weight), and what the mover gains to the end of the game after the candidate,
    its score included (mean over the orders the bag is drawn in, when that matters)."""

    bag: str
    count: int
    value: float
    wins: float  # share of the draw orders after which the mover ends ahead
    ties: float
    exact: bool  # every endgame beneath it searched to the end of the game


@dataclass(frozen=True, slots=True)
class PreendgamePlay:
    move: Move
    mean: float  # spread gained to the end of the game, over every outcome
    wins: float  # chance the mover ends ahead (the lead counted)
    ties: float
    losses: float
    outcomes: tuple[Outcome, ...]
    exact: bool  # every endgame solved to the end (no stage depth, no budget cut)
    modelled: bool  # values rest on modelled moves (the bag outlasts this play)
    stage: int  # the deepest stage that valued it (1 first)
    plies: int | None  # that stage's endgame depth (None: to the end of the game)
    cut: bool = False  # dropped in stage 2: it cannot win as often as the best
    win_bound: float | None = None  # with `cut`: the most its chance of winning could be

    @property
    def win_rate(self) -> float:
        """Wins and half the ties: what candidates are ranked by, then the mean."""
        return self.wins + self.ties / 2


@dataclass(frozen=True, slots=True)
class Preendgame:
    plays: tuple[PreendgamePlay, ...]  # best first (finalists of stage 2, then the rest)
    unseen: str  # the tiles the mover cannot see: the opponent's rack and the bag's
    bag: int
    nodes: int  # endgame positions searched
    solves: int  # endgames solved
    seconds: float
    budget_hit: bool = False  # the time ran out: a stage's values were left as they were
    stages: tuple[tuple[int | None, int, float], ...] = ()  # (plies, valued, seconds) each

    @property
    def exact(self) -> bool:
        return all(p.exact for p in self.plays)


def sub_bags(tiles: tuple[int, ...], k: int) -> list[tuple[tuple[int, ...], int]]:
    """Every distinct k-tile part of the multiset `tiles` with the number of ways of picking
    it (the product of binomials): the weights of a uniformly random draw of k tiles."""
    kinds = sorted(Counter(tiles).items())
    out: list[tuple[tuple[int, ...], int]] = []

    def walk(i: int, left: int, chosen: list[int], ways: int) -> None:
        if left == 0:
            out.append((tuple(chosen), ways))
            return
        if i == len(kinds):
            return
        tile, have = kinds[i]
        for n in range(min(have, left), -1, -1):
            walk(i + 1, left - n, chosen + [tile] * n, ways * comb(have, n))

    walk(0, k, [], 1)
    return out


def _less(tiles: tuple[int, ...], gone: tuple[int, ...]) -> tuple[int, ...]:
    left = list(tiles)
    for t in gone:
        left.remove(t)
    return tuple(sorted(left))


@dataclass(slots=True)
class _Search:
    """What one pre-endgame keeps while it values candidates: the solver, the endgame table
    every solve shares, the deadline, counters, and the values of positions met before
    (different outcomes reach the same racks and bag)."""

    solver: object
    leaves: object
    table: Table
    deadline: float | None
    nodes: int = 0
    solves: int = 0
    known: dict = field(default_factory=dict)

    def tiles_of(self, move: Move, rack: tuple[int, ...]) -> tuple[tuple[int, ...], tuple]:
        """The rack `move` leaves, and the tiles it puts back (exchange) or lays."""
        rules = self.solver.rules
        if move.kind == PASS:
            return rack, ()
        if move.kind == EXCHANGE:
            thrown = parse_rack(rules, move.exchanged)
            return _less(rack, thrown), thrown
        laid = tuple(0 if letter.islower() else rules.index(letter) for _, _, letter in move.placed)
        return _less(rack, laid), laid

    def modelled(self, board: Board, rack: tuple[int, ...], bag: int) -> Move:
        """The move a static ranking puts first with `bag` tiles in the bag."""
        solver, rules = self.solver, self.solver.rules
        moves = solver.generate_moves(
            board, format_rack(rules, rack), limit=1, include_exchanges=True,
            max_exchange=rules.max_exchange(bag),
            rank="score" if self.leaves is None else "equity", leaves=self.leaves,
        )  # fmt: skip
        return moves[0] if len(moves) else PASSED

    def endgame(self, board, mover, other, scoreless, plies) -> tuple[int, bool]:
        remaining = None
        if self.deadline is not None:
            remaining = self.deadline - time.perf_counter()
            if remaining <= 0:
                raise _OutOfTime
        rules = self.solver.rules
        try:
            found = self.solver.solve_endgame(
                board, format_rack(rules, mover), format_rack(rules, other), plies=plies,
                budget_s=remaining, scoreless_turns=scoreless, table=self.table,
            )  # fmt: skip
        except WorkLimitError:
            raise _OutOfTime from None
        self.nodes += found.nodes
        self.solves += 1
        if remaining is not None and not found.exact and time.perf_counter() >= self.deadline:
            raise _OutOfTime  # cut by the deadline, not by the stage's depth
        return found.value, found.exact

    def spreads(self, board, mover, other, bag, scoreless, plies) -> tuple[dict, bool]:
        """The spreads the side to move gains until the game ends, as {spread: chance}, and
        whether every endgame beneath was searched to the end. `bag`: the tiles still to
        draw, in no order (each draw is a uniformly random part of it)."""
        key = (board.cells, mover, other, bag, scoreless, plies)
        hit = self.known.get(key)
        if hit is not None:
            return hit
        if not bag:
            value, exact = self.endgame(board, mover, other, scoreless, plies)
            answer = ({value: 1.0}, exact)
        else:
            move = self.modelled(board, mover, len(bag))
            answer = self.after(board, move, mover, other, bag, scoreless, plies)
        self.known[key] = answer
        return answer

    def after(self, board, move, mover, other, bag, scoreless, plies) -> tuple[dict, bool]:
        """The spreads the mover gains by making `move` (its score included) and drawing."""
        rules = self.solver.rules
        end = rules.end
        kept, used = self.tiles_of(move, mover)
        if move.kind != "play":
            if scoreless + 1 >= end.scoreless_turns:  # the game ends here
                value = 0
                if end.scoreless_loses_own:
                    value = sum(rules.tile_values[t] for t in other) - sum(
                        rules.tile_values[t] for t in mover
                    )
                return {value: 1.0}, True
            drawn_n, next_scoreless, next_board = len(used), scoreless + 1, board
        else:
            drawn_n, next_scoreless, next_board = len(used), 0, board.apply(move.placed)
        drawn_n = min(drawn_n, len(bag))
        total = comb(len(bag), drawn_n)
        spreads: dict = {}
        exact = True
        for drawn, ways in sub_bags(bag, drawn_n):
            left = _less(bag, drawn)
            if move.kind == EXCHANGE:
                left = tuple(sorted(left + used))
            rack = tuple(sorted(kept + drawn))
            below, sure = self.spreads(next_board, other, rack, left, next_scoreless, plies)
            exact = exact and sure
            share = ways / total
            for spread, chance in below.items():
                mine = move.score - spread
                spreads[mine] = spreads.get(mine, 0.0) + share * chance
        return spreads, exact


class _OutOfTime(Exception):
    """The pre-endgame's time ran out inside a stage."""


def _value_candidate(search: _Search, board, move, rack, unseen, k, scoreless, lead, plies,
                     stop_below: float | None):  # fmt: skip
    """A candidate's outcomes over every set of tiles the bag may hold, and None; with
    `stop_below`, once its chance of winning cannot reach that, the outcomes so far and the
    most its chance could be."""
    rules = search.solver.rules
    kept, used = search.tiles_of(move, rack)
    bags = sub_bags(unseen, k)
    total = comb(len(unseen), k)
    outcomes = []
    won = 0.0  # wins and half ties so far, as a share of every outcome
    left = 1.0
    for bag, ways in bags:
        other = _less(unseen, bag)
        spreads, exact = search.after(board, move, rack, other, bag, scoreless, plies)
        mean = sum(s * c for s, c in spreads.items())
        wins = sum(c for s, c in spreads.items() if lead + s > 0)
        ties = sum(c for s, c in spreads.items() if lead + s == 0)
        outcomes.append(Outcome(format_rack(rules, bag), ways, mean, wins, ties, exact))
        share = ways / total
        won += share * (wins + ties / 2)
        left -= share
        if stop_below is not None and won + left < stop_below - 1e-12:
            return outcomes, won + left
    return outcomes, None


def _summary(move, outcomes, modelled, stage, plies, total) -> PreendgamePlay:
    mean = sum(o.count * o.value for o in outcomes) / total
    wins = sum(o.count * o.wins for o in outcomes) / total
    ties = sum(o.count * o.ties for o in outcomes) / total
    losses = max(0.0, 1.0 - wins - ties)
    exact = all(o.exact for o in outcomes)
    return PreendgamePlay(
        move, mean, wins, ties, losses, tuple(outcomes), exact, modelled, stage, plies
    )


def _rank_key(play: PreendgamePlay):
    """Chance of winning, then mean, then notation: one order however the field was dealt
    (threads, jobs)."""
    return (-play.win_rate, -play.mean, play.move.notation)


def check_stages(stages) -> tuple[tuple[int | None, int], ...]:
    """The stages as (plies, candidates) pairs, checked: plies 1..MAX_PLIES or None (to
    the end), candidates at least 1 and not growing from one stage to the next."""
    if not isinstance(stages, list | tuple) or not 1 <= len(stages) <= MAX_STAGES:
        raise InputError(
            f"stages must be 1..{MAX_STAGES} (plies, candidates) pairs, not {stages!r}"
        )
    out = []
    for stage in stages:
        if not isinstance(stage, list | tuple) or len(stage) != 2:
            raise InputError(f"a stage is a (plies, candidates) pair, not {stage!r}")
        plies, keep = stage
        if plies is not None and (
            isinstance(plies, bool) or not isinstance(plies, int) or not 1 <= plies <= MAX_PLIES
        ):
            raise InputError(f"a stage's plies must be 1..{MAX_PLIES} or None, not {plies!r}")
        if isinstance(keep, bool) or not isinstance(keep, int) or not 1 <= keep <= MAX_CANDIDATES:
            raise InputError(f"a stage's candidates must be 1..{MAX_CANDIDATES}, not {keep!r}")
        if out and keep > out[-1][1]:
            raise InputError(
                f"stages may not value more candidates than the one before: {stages!r}"
            )
        out.append((plies, keep))
    return tuple(out)


def solve_preendgame(
    solver,
    board: Board,
    rack: str,
    candidates: int = 32,
    lead: int = 0,
    budget_s: float | None = None,
    table_mb: float = 16,
    leaves=None,
    scoreless: int = 0,
    stages=STAGES,
    cut: bool = True,
    threads: int = 1,
    also: tuple[str, ...] = (),
    only: tuple[str, ...] = (),
    part: int = 0,
    parts: int = 1,
) -> Preendgame:
    """Value the top `candidates` moves (by equity with `leaves`, else by score; exchanges
    where the bag allows them) and the pass, with 1 to 4 tiles in the bag.

    stages: (plies, n) pairs: each stage values the top n of the one before (the first,
    of the candidates by static rank) with every endgame searched `plies` deep (None: to
    the end of the game). cut: in the last stage, drop a candidate an earlier stage valued
    once it cannot win as often as the best finished one (its earlier values stand).
    lead: the mover's score less the opponent's (for the chances of winning). scoreless:
    scoreless turns already played in a row. budget_s:
    seconds for the whole; when they run out, the last stage finished stands (WorkLimitError
    if the first did not finish). table_mb: the endgame table every solve here shares.
    threads: candidates valued at once, each thread on its own solver and table of
    table_mb (a proven value and the best play are the same for any number; which
    candidates the last stage cuts, and values of depth-limited stages, may differ).
    also: moves (notation) valued in every stage whatever their rank, like the play a
    record made; one the rack cannot make is left out. only: these moves (notation) and no
    others are the candidates (the pass only when listed; InputError naming any the rack
    cannot make). part, parts: one stage split
    over jobs (client/preendgame.py): this job values every parts-th candidate of the
    stage's field from the part-th, as threads share a stage."""
    rules = solver.rules
    if (
        isinstance(candidates, bool)
        or not isinstance(candidates, int)
        or not 1 <= candidates <= MAX_CANDIDATES
    ):
        raise InputError(f"candidates must be 1..{MAX_CANDIDATES}, not {candidates!r}")
    stages = check_stages(stages)
    if isinstance(lead, bool) or not isinstance(lead, int) or abs(lead) > 1 << 20:
        raise InputError(f"lead must be a whole number of points, not {lead!r}")
    if budget_s is not None and not (
        isinstance(budget_s, int | float) and not isinstance(budget_s, bool) and 0 < budget_s <= 1e6
    ):
        raise InputError(f"budget_s must be a number of seconds in (0, 1e6], not {budget_s!r}")
    limit = rules.end.scoreless_turns
    if isinstance(scoreless, bool) or not isinstance(scoreless, int) or not 0 <= scoreless < limit:
        raise InputError(
            f"scoreless turns must be 0..{limit - 1} ({limit} end a {rules.name} game), "
            f"not {scoreless!r}"
        )
    position = Position.of(board, rack, zero_turns=scoreless).preendgame(BAG_SIZES)
    if leaves is not None and not hasattr(leaves, "table"):
        leaves = solver.leaves(leaves)
    tiles = tuple(sorted(position.tiles()))
    unseen_counts = position.unseen()
    unseen = tuple(t for t, n in enumerate(unseen_counts) for _ in range(n))
    k = position.bag_size(unseen_counts)
    started = time.perf_counter()
    deadline = None if budget_s is None else started + budget_s
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise InputError(f"threads must be 1..{MAX_THREADS}, not {threads!r}")
    whole = isinstance(parts, int) and not isinstance(parts, bool) and 1 <= parts <= MAX_PARTS
    if not whole or isinstance(part, bool) or not isinstance(part, int) or not 0 <= part < parts:
        raise InputError(
            f"part must be 0..parts-1 and parts 1..{MAX_PARTS}, not {part!r}/{parts!r}"
        )
    if parts > 1 and len(stages) != 1:
        raise InputError("a pre-endgame split over jobs runs one stage a job (the client ranks)")
    if only:
        moves: list[Move] = []
        missing: list[str] = []
        _also(solver, board, rack, moves, only, rules.max_exchange(k), missing)
        if missing:  # a candidate asked for by name must be a move
            most = rules.max_exchange(k)
            why = ""
            if any(a.startswith("-") and len(a) > 1 for a in missing) and most < rules.rack_size:
                rule = f"an exchange puts back at most {most}" if most else "no exchange is allowed"
                why = f"; with {k} in the bag {rule}"
            raise InputError(
                f"only: {', '.join(repr(a) for a in missing)} "
                f"{'is not a move' if len(missing) == 1 else 'are not moves'} of rack "
                f"{rack} on this board{why}; name moves as `anchor analyze` writes them: "
                "'8H WORD', '-AB' for an exchange of A and B, '-' for the pass"
            )
    else:
        moves = list(
            solver.generate_moves(
                board, rack, limit=candidates, include_exchanges=True,
                max_exchange=rules.max_exchange(k),
                rank="score" if leaves is None else "equity", leaves=leaves,
            )
        )  # fmt: skip
        if not any(m.kind == PASS for m in moves):
            moves.append(PASSED)  # the pass is always a candidate, past the count
    pass_index = next((i for i, m in enumerate(moves) if m.kind == PASS), None)
    kept_in = _also(solver, board, rack, moves, also, rules.max_exchange(k))
    written = min(threads, len(moves)) > 1  # searched while the other threads search
    searches = [_Search(solver, leaves, Table(table_mb, written), deadline)]
    for _ in range(
        1, min(threads, len(moves))
    ):  # a solver each (a generator's scratch is its own), a table each
        searches.append(
            _Search(Solver(solver.lexicon, rules), leaves, Table(table_mb, written), deadline)
        )
    total = comb(len(unseen), k)

    def modelled(move: Move) -> bool:
        return move.kind != "play" or len(move.placed) < k

    def value_share(field_, plies, number, last, t: int) -> dict[int, PreendgamePlay | None]:
        """Thread t's share of the stage (every `threads`-th candidate), each valued on
        its own solver and table, cut against the best this share has finished: the
        same answer on every run for a given number of threads."""
        found: dict[int, PreendgamePlay | None] = {}
        best = None
        for i in field_[t :: len(searches)]:
            stop = best if cut and last and i in best_known else None  # only what stands
            outcomes, bound = _value_candidate(
                searches[t], board, moves[i], tiles, unseen, k, scoreless, lead, plies, stop
            )
            if bound is not None:  # its earlier stage's values stand, with the bound
                found[i] = _with_cut(best_known[i], bound)
                continue
            found[i] = _summary(moves[i], outcomes, modelled(moves[i]), number, plies, total)
            best = max(best or 0.0, found[i].win_rate)
        return found

    best_known: dict[int, PreendgamePlay] = {}  # each candidate's deepest finished stage
    order = list(range(len(moves)))  # the ranking so far: static, then each stage's
    budget_hit = False
    done: list[tuple[int | None, int, float]] = []
    for number, (plies, keep) in enumerate(stages, 1):
        last = number == len(stages)
        field_ = order[:keep]
        if number == 1 and pass_index is not None and pass_index not in field_:
            field_.append(pass_index)  # the pass is valued in the first stage
        field_ += [i for i in kept_in if i not in field_]
        field_ = field_[part::parts]
        if number > 1 and len(field_) < 2 and not last:
            continue
        begun = time.perf_counter()

        valued: dict[int, PreendgamePlay | None] = {}
        try:
            stage = partial(value_share, field_, plies, number, last)
            if len(searches) == 1:
                valued = stage(0)
            else:
                with ThreadPoolExecutor(len(searches)) as pool:
                    for share in pool.map(stage, range(len(searches))):
                        valued.update(share)
        except _OutOfTime:
            budget_hit = True
            if number == 1:
                raise WorkLimitError(
                    f"the pre-endgame's first stage needed more than {budget_s:g} s"
                ) from None
            break
        done.append((plies, len(field_), time.perf_counter() - begun))
        for i, play in valued.items():
            if play is not None:
                best_known[i] = play
        ranked = sorted((i for i in field_ if valued.get(i) and not valued[i].cut),
                        key=lambda i: _rank_key(valued[i]))  # fmt: skip
        order = ranked + [i for i in order if i not in ranked]
    plays = [best_known[i] for i in order if i in best_known]
    text = "".join(
        "?" if t == 0 else rules.letter(t) for t in sorted(unseen, key=lambda t: (t == 0, t))
    )
    return Preendgame(
        tuple(plays), text, k, sum(s.nodes for s in searches), sum(s.solves for s in searches),
        time.perf_counter() - started, budget_hit, tuple(done),
    )  # fmt: skip


def _notation_key(notation: str) -> str:
    """A move's notation compared as a move: an exchange by its tiles in any order."""
    return "-" + "".join(sorted(notation[1:])) if notation.startswith("-") else notation


def _also(
    solver, board: Board, rack: str, moves: list, also, max_exchange: int, missing=None
) -> list[int]:
    """The indices in `moves` of the moves `also` names, appending those the candidates
    lack (found among every move of the rack; an exchange by its tiles in any order).
    `missing`, when given, gets each name no move of the rack answers to, once."""

    if isinstance(also, str) or not all(isinstance(a, str) for a in also):
        raise InputError(f"also must be a list of moves in notation, not {also!r}")
    indices = []
    every = None
    for given in also:
        name = _notation_key(given.strip())
        found = next((i for i, m in enumerate(moves) if _notation_key(m.notation) == name), None)
        if found is None:
            if every is None:
                every = solver.generate_moves(
                    board, rack, include_exchanges=True, max_exchange=max_exchange
                )
            match = next((m for m in every if _notation_key(m.notation) == name), None)
            if match is None:
                if missing is not None and name not in map(_notation_key, missing):
                    missing.append(given.strip())
                continue
            moves.append(match)
            found = len(moves) - 1
        indices.append(found)
    return indices


def _with_cut(play: PreendgamePlay, bound: float) -> PreendgamePlay:
    return PreendgamePlay(
        play.move, play.mean, play.wins, play.ties, play.losses, play.outcomes, play.exact,
        play.modelled, play.stage, play.plies, True, bound,
    )  # fmt: skip


__all__ = [
    "BAG_SIZES",
    "EXACT_STAGES",
    "QUICK_STAGES",
    "MAX_BAG",
    "MAX_CANDIDATES",
    "Outcome",
    "Preendgame",
    "PreendgamePlay",
    "STAGES",
    "check_stages",
    "solve_preendgame",
    "sub_bags",
]
