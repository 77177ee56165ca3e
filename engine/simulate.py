"""Monte Carlo simulation: which of the top plays by equity does best when the game goes on.

For each candidate (the top K plays by static equity, exchanges included while the bag
allows), an iteration draws the opponent's rack and the bag's order from the tiles the
player cannot see, makes the candidate, and plays `plies` more moves, both sides taking
their best play by equity. Its value is the points spread over those moves plus the
value of the last leave each side kept (ours minus theirs); when a side goes out, the
game ends there and the spread takes twice the tiles left on the other rack.

Iteration i of a simulation with seed S always draws the same tiles (its generator is
seeded with "S:i"), and every candidate of an iteration sees the same draw (common
random numbers: the differences between candidates are what is measured, not the luck
of the draw). So iterations can be split across processes or machines in any way and
merged back into exactly the same answer: a job returns each candidate's value for each
of its iterations, and the statistics are computed from them in iteration order.

With an inference of what the opponent kept with their last move (engine.inference), an
iteration draws that leave first, by its chance (its own generator, seeded "S:i:infer"),
and the rest of the opponent's rack and the bag from the tiles left; an empty inference
(no rack explains the move) draws as if nothing were known.

The playouts run in the C core (playout.h), one call per iteration for every candidate;
`_playout` here is their reference. Each also reports the tiles still unplayed where it
stopped, so the win rate is a win model's chance (engine.winpct) rather than the share of
playouts that end ahead.
"""

from __future__ import annotations

import functools
import math
import operator
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

from .board import Board, letter_cell
from .endgame import endgame_value, static_choice
from .errors import InputError, WorkLimitError
from .legality import unseen_counts
from .moves import EXCHANGE, PASS, Move
from .notation import parse_rack
from .rules import BLANK, Ruleset
from .seeding import shuffle_tiles
from .solver import Solver
from .winpct import WinModel, model_for

if TYPE_CHECKING:
    from .inference import Inference

MAX_CANDIDATES = 50
MAX_PLIES = 6
RANKS = ("spread", "win")  # what a simulation ranks candidates by

# play_round(iterations, live) -> values[k][j] of candidate live[k] (every candidate when
# live is None) in iteration iterations[j]
PlayRound = Callable[[range, "list[int] | None"], list[list[float]]]
# (values, unplayed): values as PlayRound's, and beside each the tiles not on the board
# when that playout stopped
Played = tuple[list[list[float]], list[list[int]]]
PlayShare = Callable[[range, "list[int] | None"], Played]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A play (or exchange, or the pass) being simulated, with its static evaluation."""

    notation: str
    score: int
    equity: float
    move: Move


@dataclass(frozen=True, slots=True)
class CandidateStats:
    """What the simulation says of one candidate."""

    notation: str
    score: int
    equity: float  # static: score + leave value
    iterations: int
    mean: float  # mean value (spread + leave difference) over its iterations
    stdev: float
    win_rate: float  # mean chance of winning where each playout stopped (engine.winpct)
    pruned: bool  # dropped early: behind the leader with the confidence asked for


def unseen_tiles(rules: Ruleset, board: Board, rack: str) -> list[str]:
    """The tiles the player to move cannot see (the bag and the opponent's rack), in
    alphabet order, blanks last; InputError when board and rack use more tiles than the
    ruleset has."""
    left = unseen_counts(board, parse_rack(rules, rack))
    letters = [ch for ch, n in zip(rules.alphabet, left[1:], strict=True) for _ in range(n)]
    return letters + [BLANK] * left[0]


def candidates(solver: Solver, board: Board, rack: str, leaves, count: int) -> list[Candidate]:
    """The top `count` moves by static equity (exchanges while the bag holds a rack)."""
    if not 1 <= count <= MAX_CANDIDATES:
        raise InputError(f"candidates must be 1..{MAX_CANDIDATES}, not {count}")
    unseen = unseen_tiles(solver.rules, board, rack)
    bag = len(unseen) - solver.rules.rack_size
    if bag <= 0:  # the bag is empty: no leave values; going out counts (engine/endgame.py)
        moves = solver.generate_moves(board, rack)
        rules = solver.rules
        held = len(parse_rack(rules, rack))
        points = sum(rules.values.get(ch, 0) for ch in unseen)
        values = [
            endgame_value(rules, len(moves.placed(i)), s, held, points)
            for i, s in enumerate(moves.scores())
        ]
        order = sorted(range(len(values)), key=lambda i: (-values[i], i))[:count]
        return [
            Candidate(moves[i].notation, moves[i].score, float(values[i]), moves[i]) for i in order
        ]
    moves = solver.generate_moves(
        board,
        rack,
        limit=count,
        rank="equity",
        leaves=leaves,
        include_exchanges=solver.rules.can_exchange(bag),
        max_exchange=solver.rules.max_exchange(bag),
    )
    equities = moves.equities() or []
    return [Candidate(m.notation, m.score, e, m) for m, e in zip(moves, equities, strict=True)]


def iterate(
    solver: Solver,
    board: Board,
    rack: str,
    leaves,
    chosen: Sequence[Candidate],
    plies: int,
    seed: int,
    iterations: range,
    budget: Callable[[], float | None] | None = None,
    unplayed: list[list[int]] | None = None,
    inference: Inference | None = None,
) -> list[list[float]]:
    """values[c][j]: candidate c's value in iteration iterations[j]. `budget`, when given,
    is called before each iteration and raises when no time is left. `unplayed`, when
    given, gets the same shape: the tiles not on the board when each playout stopped (0
    when a side went out), for the win model. `inference`: what the opponent kept with
    their last move, the start of their rack in every iteration (tile_order)."""
    if not 1 <= plies <= MAX_PLIES:
        raise InputError(f"plies must be 1..{MAX_PLIES}, not {plies}")
    rules = solver.rules
    unseen = unseen_tiles(rules, board, rack)
    tile_of = {BLANK: 0, **rules.letter_index}
    unseen_ids = [tile_of[ch] for ch in unseen]
    native = _NativePlayouts(solver, board, rack, leaves, chosen, plies)
    mine = Counter(_letters(rules, parse_rack(rules, rack)))
    values: list[list[float]] = [[] for _ in chosen]
    ends: list[list[int]] = [[] for _ in chosen]
    tiles = bytes(unseen_ids)
    for i in iterations:
        left = budget() if budget is not None else None
        order = tile_order(seed, i, tiles, inference)
        if native.ready:
            try:
                got, stopped = native(order, left)
            except TimeoutError:
                if budget is not None:
                    budget()  # the caller's own error, now that its time is up
                raise WorkLimitError("the simulation ran past its time budget") from None
        else:
            letters = [_tile_letter(rules, t) for t in order]
            pairs = [_playout(solver, board, mine, letters, c.move, plies, leaves) for c in chosen]
            got, stopped = [v for v, _ in pairs], [n for _, n in pairs]
        for c, value in enumerate(got):
            values[c].append(value)
            ends[c].append(stopped[c])
    if unplayed is not None:
        unplayed[:] = ends
    return values


def tile_order(seed: int, i: int, tiles: bytes, inference: Inference | None = None) -> bytes:
    """Iteration i's unseen `tiles` (tile numbers, blank 0) in the order they come: the
    opponent's rack first, then the bag. Without an inference (or with an empty one) all of
    them shuffled (random.Random(f"{seed}:{i}").shuffle's order); with one, a leave it
    holds, drawn by its chance, then the other tiles shuffled the same way."""
    if inference is None or inference.empty:
        return shuffle_tiles(f"{seed}:{i}", tiles)
    leave = inference.sample(random.Random(f"{seed}:{i}:infer"))
    rest = bytearray(tiles)
    for t in leave:
        at = rest.find(t)
        if at < 0:
            raise InputError(
                "the inference's leaves hold tiles the player to move can see: it was made "
                "for another position or another watcher"
            )
        del rest[at]
    return bytes(leave) + shuffle_tiles(f"{seed}:{i}", bytes(rest))


class _NativePlayouts:
    """One position's candidates played out in the C core (playout.h); `_playout` below is
    the reference it is tested against, and what runs for leave values without a KLV2
    graph (a training model)."""

    __slots__ = ("ready", "_run")

    def __init__(self, solver: Solver, board: Board, rack: str, leaves, chosen, plies: int):
        graph = getattr(leaves, "graph", None)
        self.ready = graph is not None
        if not self.ready:
            return
        rules = solver.rules
        counts = bytearray(rules.size + 1)
        for t in parse_rack(rules, rack):
            counts[t] += 1
        nodes, below, values = graph()
        turns = [_turn(rules, c.move) for c in chosen]
        generator = solver._generator  # noqa: SLF001 - the engine's own native core
        self._run = functools.partial(
            generator.playouts, cells=board.cells, rack=bytes(counts), candidates=turns,
            plies=plies, graph=nodes, counts=below, values=values,
            out_factor=rules.end.going_out + int(rules.end.stuck_loses_own),
        )  # fmt: skip

    def __call__(self, order: bytes, seconds: float | None) -> tuple[list[float], list[int]]:
        """Each candidate's value and the tiles unplayed when its playout stopped."""
        return self._run(order=order, budget=seconds or 0.0)


def _turn(rules: Ruleset, move: Move) -> tuple[int, int, bytes, bytes]:
    """A candidate as playout.h reads it: (kind, score, placed triples, counts put back)."""
    back = bytearray(rules.size + 1)
    if move.kind == EXCHANGE:
        for ch in move.exchanged:
            back[0 if ch == BLANK else rules.letter_index[ch]] += 1
        return 1, move.score, b"", bytes(back)
    if move.kind == PASS:
        return 2, move.score, b"", bytes(back)
    placed = bytes(v for r, c, ch in move.placed for v in (r, c, letter_cell(rules, ch)))
    return 0, move.score, placed, bytes(back)


def _tile_letter(rules: Ruleset, tile: int) -> str:
    return BLANK if tile == 0 else rules.alphabet[tile - 1]


def _playout(
    solver, board, mine: Counter, order: list[str], move: Move, plies, leaves
) -> tuple[float, int]:
    """(value, tiles not on the board when it stopped: 0 when a side went out)."""
    rules = solver.rules
    opponent = Counter(order[: rules.rack_size])
    bag = order[rules.rack_size :]
    racks = [mine.copy(), opponent]
    kept: list[Counter | None] = [None, None]
    spread = 0.0
    side = 0
    for ply in range(plies + 1):
        if ply and not bag:  # nothing more is drawn: score, and going out counts
            found = solver.generate_moves(board, _rack_text(rules, racks[side]))
            held = sum(racks[side].values())
            best = static_choice(found, rules, held, _value(rules, racks[1 - side]))
            move = found[best] if best is not None else Move(0, -1, -1, "", "", (), PASS)
        elif ply:
            text = _rack_text(rules, racks[side])
            found = solver.generate_moves(
                board,
                text,
                limit=1,
                rank="equity",
                leaves=leaves,
                include_exchanges=rules.can_exchange(len(bag)),
                max_exchange=rules.max_exchange(len(bag)),
            )
            move = found[0] if len(found) else Move(0, -1, -1, "", "", (), PASS)
        rack = racks[side]
        if move.kind == "play":
            board = board.apply(move.placed)
            for _r, _c, letter in move.placed:
                rack[BLANK if letter.islower() else letter] -= 1
        elif move.kind == EXCHANGE:
            rack.subtract(Counter(move.exchanged))
        rack += Counter()
        racks[side] = rack
        kept[side] = rack.copy()
        spread += move.score if side == 0 else -move.score
        need = rules.rack_size - sum(rack.values())
        drawn, bag = bag[:need], bag[need:]
        rack.update(drawn)
        if move.kind == EXCHANGE:
            bag = bag + list(Counter(move.exchanged).elements())
        if not rack and not bag:  # out: the game ends, the ruleset's adjustment
            bonus = rules.end.out_bonus(_value(rules, racks[1 - side]))
            return spread + (bonus if side == 0 else -bonus), 0
        side = 1 - side
    value = spread  # leave values count only while tiles are still to be drawn
    if bag:
        value += _leave(rules, leaves, kept[0]) - _leave(rules, leaves, kept[1])
    return value, len(bag) + sum(racks[0].values()) + sum(racks[1].values())


def summarize(
    chosen: Sequence[Candidate],
    values: Sequence[Sequence[float]],
    lead: int = 0,
    pruned: Sequence[bool] | None = None,
    unplayed: Sequence[Sequence[int]] | None = None,
    model: WinModel | None = None,
    plies: int = 2,
    rank: str = "spread",
) -> list[CandidateStats]:
    """Statistics per candidate from its values (in iteration order), best first: by mean
    value, or with rank="win" by win rate (then mean). `lead`: the player's spread before
    the move. The win rate is the model's chance of winning from where each playout
    stopped (its lead, the tiles `unplayed`, who is on turn after the candidate and
    `plies` more moves); without a model, the share of playouts ending ahead."""
    if rank not in RANKS:
        raise InputError(f"rank must be one of {', '.join(RANKS)}, not {rank!r}")
    out = []
    for c, candidate in enumerate(chosen):
        v = values[c]
        n = len(v)
        mean, var = _mean_var(v)
        left = unplayed[c] if unplayed is not None else None
        wins = math.fsum(win_chances(v, left, lead, model, plies))
        out.append(
            CandidateStats(
                candidate.notation,
                candidate.score,
                round(candidate.equity, 3),
                n,
                mean,
                math.sqrt(var) if n > 1 else 0.0,
                wins / n if n else 0.0,
                bool(pruned and pruned[c]),
            )
        )
    if rank == "win":
        return sorted(out, key=lambda s: (s.pruned, -s.win_rate, -s.mean))
    return sorted(out, key=lambda s: (s.pruned, -s.mean))


def win_chances(
    values: Sequence[float],
    unplayed: Sequence[int] | None,
    lead: int,
    model: WinModel | None,
    plies: int,
) -> list[float]:
    """Each playout's chance of winning: the model's, from the lead where it stopped, the
    tiles still unplayed and who is on turn (the candidate and `plies` moves: ours again
    when `plies` is odd); without a model, 1 ahead, 0.5 level, 0 behind."""
    if model is not None and unplayed is not None:
        on_turn = plies % 2 == 1
        return model.chances([lead + x for x in values], unplayed, on_turn)
    return [1.0 if lead + x > 0 else 0.5 if lead + x == 0 else 0.0 for x in values]


def prune(
    values: Sequence[Sequence[float]], alive: Sequence[bool], confidence: float
) -> list[bool]:
    """Which candidates are still worth simulating: a candidate whose mean is below the
    leader's by more than the two standard errors allow at `confidence` (one-sided) is
    dropped. Decided from the values alone, so every process decides the same."""
    z = NormalDist().inv_cdf(confidence)
    stats: dict[int, tuple[float, float]] = {}
    for c, v in enumerate(values):
        if alive[c]:  # a pruned candidate stays pruned: its statistics decide nothing
            mean, var = _mean_var(v)
            stats[c] = (mean, var / len(v) if v else math.inf)
    leader = max(stats, key=lambda c: stats[c][0])
    lead_mean, lead_se2 = stats[leader]
    out = list(alive)
    for c, (mean, se2) in stats.items():
        if c != leader and lead_mean - mean > z * math.sqrt(lead_se2 + se2):
            out[c] = False
    return out


@dataclass(frozen=True, slots=True)
class Simulation:
    """A simulation's settings; `run` does it in this process, round by round, exactly as
    a client spreading the rounds over workers does."""

    candidates: int = 15
    plies: int = 2
    iterations: int = 1000
    seed: int = 1
    round_size: int = 100  # iterations between pruning decisions
    confidence: float | None = 0.99  # None: never stop early
    rank: str = "spread"  # or "win": the win model's chance, given the lead (summarize)

    def __post_init__(self) -> None:
        if self.rank not in RANKS:
            raise InputError(f"rank must be one of {', '.join(RANKS)}, not {self.rank!r}")

    def run(
        self,
        solver: Solver,
        board: Board,
        rack: str,
        leaves,
        lead: int = 0,
        budget: Callable[[], float | None] | None = None,
        inference: Inference | None = None,
    ) -> list[CandidateStats]:
        """Candidates, then rounds of iterations; `budget` is asked before each one;
        `inference`: what the opponent kept (iterate)."""
        chosen = candidates(solver, board, rack, leaves, self.candidates)
        return self.run_candidates(solver, board, rack, leaves, chosen, lead, budget, inference)

    def run_candidates(
        self,
        solver: Solver,
        board: Board,
        rack: str,
        leaves,
        chosen: list[Candidate],
        lead: int = 0,
        budget: Callable[[], float | None] | None = None,
        inference: Inference | None = None,
    ) -> list[CandidateStats]:
        """`run` on candidates of the caller's choosing (annotation adds the play made)."""

        def play(iterations: range, live: list[int] | None) -> Played:
            now = list(range(len(chosen))) if live is None else live
            stopped: list[list[int]] = []
            values = iterate(solver, board, rack, leaves, [chosen[c] for c in now], self.plies,
                             self.seed, iterations, budget, stopped, inference)  # fmt: skip
            return values, stopped

        model = model_for(solver.rules)
        values, alive, ends = self.schedule(play, lead, model)
        pruned = [not a for a in alive]
        return summarize(chosen, values, lead, pruned, ends, model, self.plies, self.rank)

    def schedule(
        self, play: PlayShare, lead: int, model: WinModel | None
    ) -> tuple[list[list[float]], list[bool], list[list[int]]]:
        """`rounds` keeping each candidate's unplayed tiles beside its values (what the win
        model needs, for pruning by win and for the summary): (values, alive, unplayed)."""
        ends: dict[int, list[int]] = {}

        def play_round(iterations: range, live: list[int] | None) -> list[list[float]]:
            values, stopped = play(iterations, live)
            for c, left in zip(range(len(values)) if live is None else live, stopped, strict=True):
                ends.setdefault(c, []).extend(left)
            return values

        def chances(c: int, v: list[float]) -> list[float]:
            return win_chances(v, ends.get(c, []), lead, model, self.plies)

        values, alive = self.rounds(play_round, chances)
        return values, alive, [ends.get(c, []) for c in range(len(values))]

    def rounds(
        self,
        play_round: PlayRound,
        chances: Callable[[int, list[float]], list[float]] | None = None,
    ) -> tuple[list[list[float]], list[bool]]:
        """The schedule every way of running a simulation follows (here, or split into
        jobs by anchor.client.simulation), so all prune the same candidates at the same
        moment: rounds of `round_size` iterations over the candidates still alive (all of
        them in the first round, which tells how many there are), pruned after each on
        what the simulation ranks by: the values, or with rank="win" `chances(c, values)`,
        candidate c's chance of winning in each of its playouts so far."""
        values: list[list[float]] | None = None
        alive: list[bool] = []
        for start in range(0, self.iterations, self.round_size):
            iterations = range(start, min(start + self.round_size, self.iterations))
            live = None if values is None else [c for c, ok in enumerate(alive) if ok]
            got = play_round(iterations, live)
            if values is None:
                values, alive = [list(v) for v in got], [True] * len(got)
            else:
                for c, vals in zip(live, got, strict=True):
                    values[c].extend(vals)
            if self.confidence is not None and sum(alive) > 1:
                measured = values
                if self.rank == "win" and chances is not None:
                    measured = [chances(c, v) if alive[c] else [] for c, v in enumerate(values)]
                alive = prune(measured, alive, self.confidence)
            if sum(alive) <= 1:
                break
        return values or [], alive


def _mean_var(v: Sequence[float]) -> tuple[float, float]:
    """Mean and sample variance (infinite below two values: nothing is known yet)."""
    n = len(v)
    mean = math.fsum(v) / n if n else 0.0
    if n < 2:
        return mean, math.inf
    # from the exact sum of squares (fsum): loops in C, for this runs on every value of
    # every live candidate after every round; the two terms differ by n times the
    # variance, so at most a few units in the last place are lost
    squares = math.fsum(map(operator.mul, v, v))
    return mean, max(0.0, squares - n * mean * mean) / (n - 1)


def _letters(rules: Ruleset, tiles) -> list[str]:
    return [BLANK if t == 0 else rules.alphabet[t - 1] for t in tiles]


def _rack_text(rules: Ruleset, rack: Counter) -> str:
    return "".join(ch * rack[ch] for ch in (*rules.alphabet, BLANK))


def _value(rules: Ruleset, rack: Counter) -> int:
    return sum(rules.values.get(ch, 0) * n for ch, n in rack.items())


def _leave(rules: Ruleset, leaves, rack: Counter | None) -> float:
    if not rack or leaves is None:
        return 0.0
    tiles = [0 if ch == BLANK else rules.letter_index[ch] for ch in rack.elements()]
    if len(tiles) >= rules.rack_size:  # a full rack is no leave (KLV2 lists up to 6)
        return 0.0
    return leaves.value(tiles)


class SimPlayer:
    """A self-play policy that simulates before each move (engine.selfplay.Policy): the
    best candidate by simulated value, or by chance of winning given its lead in the game
    (settings.rank). Near the end, when the bag cannot refill a rack, it plays like the
    equity player (the playouts would be all but certain). With `infer_racks`, it draws the
    opponent's rack from what their last move says they kept (engine.inference) whenever
    that takes no more than `infer_racks` racks to read, uniformly otherwise."""

    wants_lead = True  # play_game passes the player's lead (engine.selfplay)

    def __init__(
        self,
        leaves,
        settings: Simulation,
        budget: Callable[[], float | None] | None = None,
        infer_racks: int = 0,
    ) -> None:
        self.leaves = leaves
        self.settings = settings
        self.budget = budget  # asked before every iteration (a job's time cap)
        if infer_racks and not hasattr(leaves, "graph"):
            raise InputError("an inferring player reads moves with leave values (a KLV2 file)")
        self.infer_racks = infer_racks
        self.wants_last = infer_racks > 0  # play_game passes the last move and its board
        self.plays_generated = 0
        self.turn = 0
        self.inferred = 0  # simulations drawn from an inference, and those drawn uniformly
        self.uniform = 0  # (the move too costly to read, or explained by no rack)

    def __call__(
        self,
        solver: Solver,
        board: Board,
        rack: str,
        bag_size: int,
        lead: int = 0,
        last: tuple[Board, Move] | None = None,
    ) -> Move | None:
        self.turn += 1
        if bag_size == 0:  # nothing more is drawn: no leave values, going out counts
            from .selfplay import empty_bag_choice

            return empty_bag_choice(solver, board, rack)
        chosen = candidates(solver, board, rack, self.leaves, self.settings.candidates)
        if not chosen:
            return None
        if bag_size < solver.rules.rack_size or len(chosen) == 1:
            return chosen[0].move
        settings = Simulation(
            self.settings.candidates, self.settings.plies, self.settings.iterations,
            self.settings.seed * 1_000_003 + self.turn, self.settings.round_size,
            self.settings.confidence, self.settings.rank,
        )  # fmt: skip
        inference = self._infer(solver, rack, last) if self.wants_last else None
        best = settings.run(solver, board, rack, self.leaves, lead, self.budget, inference)[0]
        return next(c.move for c in chosen if c.notation == best.notation)

    def _infer(self, solver: Solver, rack: str, last: tuple[Board, Move] | None):
        """What the opponent kept with `last`, or None (draw uniformly)."""
        from .inference import infer

        found = None
        if last is not None and last[1].kind in (EXCHANGE, "play"):
            before, move = last
            play = move.play() if move.kind == "play" else None
            exchanged = len(parse_rack(solver.rules, move.exchanged)) if play is None else 0
            seconds = self.budget() if self.budget is not None else None
            try:
                found = infer(solver, before, self.leaves, play, score=move.score,
                              exchanged=exchanged, observer=rack, budget_s=seconds,
                              max_racks=self.infer_racks, top=0)  # fmt: skip
            except WorkLimitError:
                if self.budget is not None:
                    self.budget()  # the job's own time error when its time is up
                found = None  # more racks than this player reads
        if found is None or found.empty:
            self.uniform += 1
            return None
        self.inferred += 1
        return found
