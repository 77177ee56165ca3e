"""Running a protocol request against the engine: the one implementation both the worker
and the client's embedded (no Redis) mode use, so their answers are identical. Each kind
has its function here (analysis in .analysis); each returns its typed result. The engine
modules of the other kinds are imported by their functions, on first use: one position's
analysis in-process (`anchor analyze`) does not load annotation, self-play, simulation or
training (a CLI command pays every import at each start)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePath
from typing import TYPE_CHECKING

from anchor.client import protocol as p
from anchor.dictionaries.lexica import DEFAULT_LEXICON
from anchor.engine import InputError, Solver, WorkLimitError

from .analysis import analyze_position, engine_position, run_analysis
from .errors import engine_errors
from .registry import LexiconRegistry

if TYPE_CHECKING:
    from anchor.engine.leaves import Leaves
    from anchor.engine.peers import Peer
    from anchor.engine.training import LeaveModel

    from .exchange import Pools

__all__ = ["Deadline", "LexiconRegistry", "analyze_position", "run", "run_request"]


class Deadline:
    """When a request must be done (time.monotonic()); None-safe helpers for the engine."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.at = None if seconds is None else time.monotonic() + seconds

    def budget(self) -> float | None:
        """Seconds left for the next engine call; ProtocolError `timeout` when none are."""
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.expired()
        return left

    def expired(self) -> p.ProtocolError:
        allowed = f"{self.seconds:g} s" if self.seconds is not None else "time"
        return p.ProtocolError(
            p.TIMEOUT,
            f"the request needed more than the {allowed} it was given; ask for less "
            "(a smaller batch, a limit, fewer games) or allow it more time",
        )


def run_request(
    request: p.AnyRequest,
    registry: LexiconRegistry,
    limits: p.Limits | None = None,
    deadline: Deadline | None = None,
) -> dict:
    """A request -> its result map (what a worker sends back), within `limits` (default:
    none but the protocol's) and `deadline`. Errors of a whole request raise ProtocolError;
    in a batch, a bad position gets its own error result and the others go on."""
    started = time.perf_counter()
    result = run(request, registry, limits, deadline)
    return result.to_wire((time.perf_counter() - started) * 1e6)


def run(
    request: p.AnyRequest,
    registry: LexiconRegistry,
    limits: p.Limits | None = None,
    deadline: Deadline | None = None,
    pools: Pools | None = None,
    peer: Peer | None = None,
) -> p.Result:
    """A request -> its typed result (run_request without the packing). `pools`: where
    pooled simulations meet (the worker's Redis; None: this process's memory). `peer`: an
    endgame is searched with the same endgame's jobs on the workers forked alongside."""
    limits = limits or p.Limits.unbounded()
    deadline = deadline or Deadline(limits.job_seconds)
    own = getattr(request, "seconds", None)  # a request's own time limit, when it has one
    job = deadline.seconds  # the job's, as it began
    try:
        if isinstance(request, p.Request):
            return run_analysis(request, registry, limits, deadline.budget)
        if isinstance(request, p.SimulateRequest):
            return run_simulate(request, registry, limits, deadline, pools)
        if isinstance(request, p.EndgameRequest):
            return run_endgame(request, registry, limits, deadline, peer)
        return _RUNS[type(request)](request, registry, limits, deadline)
    except WorkLimitError as exc:
        if own is not None and (job is None or own < job):  # its own limit ran out first
            raise p.ProtocolError(
                p.TIMEOUT,
                f"{exc}: the request allowed {own:g} s ('seconds'; the CLI's --budget), part "
                "of it kept to send the answer; allow it more",
            ) from None
        raise deadline.expired() from None


def _policy(
    name: str, leaves, request: p.SelfPlayRequest, seed: int, budget=None, infer_racks=None
):
    from anchor.engine.selfplay import EndgamePlayer, EquityPlayer, Greedy

    if name == "equity":
        return EquityPlayer(leaves)
    if name == "endgame":
        return EndgamePlayer(EquityPlayer(leaves), budget=budget)
    if name in ("sim", "siminfer"):  # the simulation's modules only for its players
        from anchor.engine.simulate import SimPlayer, Simulation

        settings = Simulation(
            candidates=request.sim_candidates,
            plies=request.sim_plies,
            iterations=request.sim_iterations,
            seed=seed,
            round_size=max(1, min(100, request.sim_iterations // 5)),
            confidence=0.95,
            rank=request.sim_rank_by,
        )
        racks = min(request.sim_infer_racks, infer_racks or request.sim_infer_racks)
        return SimPlayer(leaves, settings, budget, racks if name == "siminfer" else 0)
    return Greedy()


def run_selfplay(
    request: p.SelfPlayRequest, registry: LexiconRegistry, limits: p.Limits, deadline: Deadline
) -> p.SelfPlayResult:
    """Whole games with every invariant checked (when asked); one record per game."""
    from anchor.engine.selfplay import InvariantError, play_game

    solver = registry.solver(request.ruleset, request.lexicon)
    leaves = _players_leaves(request, registry, solver)
    games = []
    names = list(request.policies or ("score",))
    if len(names) == 1:
        names *= request.players
    for i in range(request.games):
        seed = request.seed + i
        seated = (
            names[seed % len(names) :] + names[: seed % len(names)] if request.alternate else names
        )
        budget = deadline.budget
        policies = [
            _policy(name, leaves, request, seed, budget, limits.infer_racks) for name in seated
        ]
        try:
            game = play_game(
                solver,
                seed,
                players=request.players,
                check=request.check,
                policies=policies,
                budget=deadline.budget,
            )
        except InvariantError as exc:  # an engine bug: report it with the seed that shows it
            raise p.ProtocolError(p.INTERNAL, f"seed {request.seed + i}: {exc}") from None
        games.append(
            p.Game(
                seed=game.seed,
                policies=list(seated),
                scores=list(game.scores),
                turns=len(game.turns),
                end=game.end,
                plays=game.plays_generated,
                move_us=[round(s * 1e6, 1) for s in game.move_times],
                gcg=game.to_gcg(request.lexicon or DEFAULT_LEXICON.get(request.ruleset))
                if request.records
                else "",
            )
        )
    return p.SelfPlayResult(tuple(games))


def _players_leaves(
    request: p.SelfPlayRequest, registry: LexiconRegistry, solver: Solver
) -> Leaves | LeaveModel | None:
    """The leave values the seats that rank by equity use: a model being trained, or
    leave values by name."""
    if request.model:
        from anchor.engine.training import LeaveModel

        try:
            return LeaveModel(solver.rules, request.model)
        except ValueError as exc:
            raise p.ProtocolError(p.BAD_VALUE, str(exc)) from None
    if {"equity", "sim", "endgame", "siminfer"} & set(request.policies):
        return registry.leaves(request.ruleset, request.lexicon, request.leaves)
    return None


def run_annotate(
    request: p.AnnotateRequest, registry: LexiconRegistry, limits: p.Limits, deadline: Deadline
) -> p.AnnotateResult:
    """A recorded game, every turn analysed (and simulated, when asked)."""
    from anchor.engine.annotate import annotate_game
    from anchor.engine.gcg import parse_gcg
    from anchor.engine.simulate import Simulation

    solver = registry.solver(request.ruleset, request.lexicon)
    with engine_errors(p.BAD_GAME, rack=p.BAD_GAME):
        leaves = None
        if request.leaves is not None:
            leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
        game = parse_gcg(request.gcg, source="game")
        sim = None
        if request.sim_iterations:
            sim = Simulation(
                candidates=request.sim_candidates,
                plies=request.sim_plies,
                iterations=request.sim_iterations,
                seed=request.seed,
                round_size=max(1, min(100, request.sim_iterations // 4)),
                rank=request.sim_rank_by,
            )
        named = request.lexicon or DEFAULT_LEXICON.get(request.ruleset) or game.lexicon
        if named and ("/" in named or named.endswith(".kwg")):
            # a file (embedded mode): named as a worker serving it would be (twl06=TWL06.kwg)
            named = PurePath(named).stem.lower()
        racks = min(request.infer_racks, limits.infer_racks or request.infer_racks)
        stages = None
        if request.preendgame:
            from anchor.engine import preendgame

            stages = _stages(request.preendgame_stages, preendgame.QUICK_STAGES)
        annotation = annotate_game(
            game, solver, request.top, leaves, deadline.budget, sim, named, racks, stages
        )
    return p.AnnotateResult(annotation)


def _threads(asked: int | None, cap: int | None) -> int:
    """The threads a job runs on: what it asks (nil: the server's cap), never past the cap."""
    threads = asked or cap or 1
    return threads if cap is None else min(threads, cap)


def _seconds(asked: float | None, deadline: Deadline) -> float | None:
    """The time a job may take: what is left of the job's, or less when it asks for less."""
    seconds = deadline.budget()
    if asked is not None:
        seconds = asked if seconds is None else min(seconds, asked)
    return seconds


def run_endgame(
    request: p.EndgameRequest,
    registry: LexiconRegistry,
    limits: p.Limits,
    deadline: Deadline,
    peer: Peer | None = None,
) -> p.EndgameResult:
    """An endgame (or, with a split, one part of one), within the server's time and table
    caps: past the time, the deepest search completed answers with `exact` false. With a
    `peer`, a whole endgame is searched on one table with the same endgame's other jobs
    running on the workers forked alongside (the same answer, sooner)."""
    from anchor.engine import endgame

    solver, position = engine_position(
        registry, request, request.cgp, rack=request.rack, opponent=request.opponent
    )
    table_mb = request.table_mb or endgame.DEFAULT_TABLE_MB
    if limits.endgame_table_mb is not None:
        table_mb = min(table_mb, limits.endgame_table_mb)
    threads = _threads(request.threads, limits.endgame_threads)
    seconds = _seconds(request.seconds, deadline)
    if seconds is not None:
        seconds = max(0.001, seconds - 0.05)  # leave time to write the answer
    scoreless = position.zero_turns if request.scoreless is None else request.scoreless
    with engine_errors(p.BAD_POSITION):
        position = position.endgame()
        split = endgame.Split(
            request.first, request.last, request.parts, request.part, request.floor
        )
        part = solver.solve_endgame_part(
            position.board, position.rack, position.opponent or "", split,
            plies=request.plies, budget_s=seconds, table_mb=table_mb, scoreless=scoreless,
            threads=threads, peer=peer,
        )  # fmt: skip
    found = part.endgame
    return p.EndgameResult(
        found.value, [[m.notation, m.score] for m in found.moves], found.depth, found.exact,
        found.nodes, round(found.seconds, 6), part.root, part.below_floor, part.no_plays,
    )  # fmt: skip


def run_preendgame(
    request: p.PreendgameRequest, registry: LexiconRegistry, limits: p.Limits, deadline: Deadline
) -> p.PreendgameResult:
    """A pre-endgame (1 to 4 tiles in the bag), within the job's time and the server's caps
    on endgame threads and table memory."""
    from anchor.engine import preendgame

    solver, position = engine_position(registry, request, request.cgp, rack=request.rack)
    leaves = None
    if request.leaves is not None:
        leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    seconds = _seconds(request.seconds, deadline)
    if seconds is not None:
        seconds = max(0.001, seconds - 0.05)  # leave time to write the answer
    table_mb = 16.0
    if limits.endgame_table_mb is not None:
        table_mb = min(table_mb, limits.endgame_table_mb)
    stages = _stages(request.stages, preendgame.STAGES)
    with engine_errors(p.BAD_POSITION):
        position.preendgame(preendgame.BAG_SIZES)  # the opponent's rack checked too
        found = solver.solve_preendgame(
            position.board, position.rack, candidates=request.candidates, lead=position.lead,
            budget_s=seconds, leaves=leaves, scoreless=position.zero_turns, stages=stages,
            cut=request.cut, threads=_threads(request.threads, limits.endgame_threads),
            table_mb=table_mb, only=request.only, part=request.part, parts=request.parts,
        )  # fmt: skip
    return preendgame_result(found)


def preendgame_result(found) -> p.PreendgameResult:
    """An engine Preendgame as the protocol answers it (PROTOCOL.md, preendgame)."""
    return p.PreendgameResult(
        [preendgame_play(pl) for pl in found.plays], found.unseen, found.bag, found.exact,
        found.nodes, found.solves, round(found.seconds, 6),
        [[plies or 0, n, round(t, 6)] for plies, n, t in found.stages], found.budget_hit,
    )  # fmt: skip


def _stages(asked: tuple, default: tuple) -> tuple:
    """A request's `[plies, n]` stages for the engine (plies 0: None, to the end)."""
    return tuple((plies or None, n) for plies, n in asked) or default


def preendgame_play(play) -> dict:
    """One valued candidate as the result carries it (PROTOCOL.md, preendgame)."""
    return {
        "move": play.move.notation,
        "score": play.move.score,
        "mean": play.mean,  # not rounded: a client ranks split answers as the engine does
        "wins": play.wins,
        "ties": play.ties,
        "losses": play.losses,
        "exact": play.exact,
        "modelled": play.modelled,
        "stage": play.stage,
        "plies": play.plies or 0,
        "cut": play.cut,
        "win_bound": None if play.win_bound is None else round(play.win_bound, 6),
        "outcomes": [
            [o.bag, o.count, round(o.value, 4), round(o.wins, 6), round(o.ties, 6), o.exact]
            for o in play.outcomes
        ],
    }


def run_infer(
    request: p.InferRequest, registry: LexiconRegistry, limits: p.Limits, deadline: Deadline
) -> p.InferResult:
    """Rack inference: the racks that explain the mover's move, within the server's caps
    (with `parts`, this job's part of them: the server's cap of racks bounds each part)."""
    from anchor.engine.inference import infer_part, merge_parts

    solver, position = engine_position(registry, request, request.cgp)
    leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    threads = _threads(request.threads, limits.infer_threads)
    seconds = _seconds(request.seconds, deadline)
    observer = request.observer if request.observer is not None else position.opponent or ""
    split = "ask for less, split it over jobs (`parts`), or a worker allowing more"
    with engine_errors(p.BAD_POSITION), _racks_capped(split):
        if position.rack:
            raise InputError(
                "the CGP's first rack is the player whose move is inferred: leave it empty "
                "('/WATCHER' gives the watcher's rack)"
            )
        if request.part >= request.parts:
            raise p.ProtocolError(p.BAD_VALUE, "'part' must be below 'parts'")
        found = infer_part(
            solver, position.board, leaves, request.play, score=request.score,
            exchanged=request.exchanged, observer=observer, margin=request.margin,
            threads=threads, budget_s=seconds, max_racks=limits.infer_racks or 1 << 40,
            part=request.part, parts=request.parts,
        )  # fmt: skip
        if request.parts > 1:
            return p.InferResult({}, found.to_wire())
        inference = merge_parts(solver.rules, [found], request.top)
    return p.InferResult(inference.to_dict(request.top))


@contextmanager
def _racks_capped(advice: str = "ask for less, or a worker allowing more") -> Iterator[None]:
    """An inference over the server's cap of racks is `limit_too_large`, not a timeout."""
    try:
        yield
    except WorkLimitError as exc:
        if "racks" not in str(exc):
            raise
        why = f"{exc} (the server's infer_racks); {advice}"
        raise p.ProtocolError(p.LIMIT_TOO_LARGE, why) from None


def run_simulate(
    request: p.SimulateRequest,
    registry: LexiconRegistry,
    limits: p.Limits,
    deadline: Deadline,
    pools: Pools | None = None,
) -> p.SimulateResult:
    """One share of a simulation: every candidate's value for each of its iterations; with
    `pool`, the whole simulation, its rounds shared with the pool's other jobs (pooled.py)
    through `pools` (the worker's Redis; in-process, this process's memory)."""
    from anchor.engine import simulate

    from .exchange import MEMORY_POOLS
    from .pooled import Setting, run_pooled

    solver, position = engine_position(registry, request, request.cgp, rack=request.rack)
    leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    if request.infer_score is not None and request.infer_play is None:
        raise p.ProtocolError(p.BAD_VALUE, "'infer_score' is the score of 'infer_play': give both")
    with engine_errors(p.BAD_POSITION), _racks_capped():
        position.playable()
        rack = position.rack
        inference = _last_move(request, solver, position, leaves, limits, deadline)
        chosen = simulate.candidates(solver, position.board, rack, leaves, request.candidates)
        inferred = inference.to_dict(INFERRED_TOP) if inference is not None else None
        if request.pool is not None:
            setting = Setting(
                solver, position.board, rack, leaves, chosen, position.lead, inference
            )
            return run_pooled(request, setting, pools or MEMORY_POOLS, deadline.budget, inferred)
        only = request.only or tuple(range(len(chosen)))
        if any(c >= len(chosen) for c in only):
            raise p.ProtocolError(
                p.BAD_VALUE, f"'only' names candidate {max(only)}; there are {len(chosen)}"
            )
        unplayed: list[list[int]] = []
        values = simulate.iterate(
            solver, position.board, rack, leaves, [chosen[c] for c in only], request.plies,
            request.seed, range(request.first, request.first + request.iterations),
            budget=deadline.budget, unplayed=unplayed, inference=inference,
        )  # fmt: skip
    table = [[c.notation, c.score, round(c.equity, 3)] for c in chosen]
    return p.SimulateResult(table, list(only), values, unplayed, inferred=inferred)


INFERRED_TOP = 5  # leaves a simulation's answer lists of its inference


def _last_move(request: p.SimulateRequest, solver, position, leaves, limits, deadline):
    """The inference a simulation draws the opponent's rack from (None: uniformly). The
    jobs of one simulation ask a worker for the same one: the last few are kept."""
    from anchor.engine.inference import infer_last

    if not request.infers:
        return None
    key = (solver, leaves, request.infer_play, request.infer_score, request.infer_exchanged,
           float(request.infer_margin), position.board.cells, position.rack)  # fmt: skip
    with _INFERRED_LOCK:
        found = _INFERRED.get(key)
    if found is None:
        found = infer_last(
            solver, position.board, position.rack, leaves, request.infer_play,
            request.infer_score, request.infer_exchanged, margin=request.infer_margin,
            threads=_threads(None, limits.infer_threads), budget_s=deadline.budget(),
            max_racks=limits.infer_racks or 1 << 40, top=INFERRED_TOP,
        )  # fmt: skip
        with _INFERRED_LOCK:
            while len(_INFERRED) >= INFERRED_KEPT:
                _INFERRED.pop(next(iter(_INFERRED)))  # the oldest
            _INFERRED[key] = found
    return found


INFERRED_KEPT = 4  # inferences a worker keeps (each up to a few MB)
_INFERRED: dict = {}
_INFERRED_LOCK = threading.Lock()


_RUNS: dict[type, Callable[..., p.Result]] = {
    p.SelfPlayRequest: run_selfplay,
    p.AnnotateRequest: run_annotate,
    p.EndgameRequest: run_endgame,
    p.PreendgameRequest: run_preendgame,
    p.InferRequest: run_infer,
}
