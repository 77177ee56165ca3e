"""A whole simulation run by every job of its pool, each round's pieces shared
(PROTOCOL.md, pooled simulations).

Every job follows the same schedule (Simulation.schedule: rounds, pruning after each). A
round is cut into pieces; a job claims pieces one at a time from the round's counter,
plays and publishes each, and once none is left to claim reads the others' pieces and
merges them all in iteration order, so every job prunes alike and ends with the answer
one process gives. Nothing waits on a job that is not there: with one worker, its job
claims every piece; a job taken later finds the rounds played and only reads them. A
piece claimed but not published within the patience (a worker died, or was stopped at
its time cap) is played by the job waiting for it; a piece is the same whoever plays it.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Collection
from dataclasses import dataclass

import msgpack

from anchor.client import protocol as p
from anchor.engine import Board, Solver, WorkLimitError
from anchor.engine.inference import Inference
from anchor.engine.simulate import Candidate, Played, Simulation, iterate, summarize
from anchor.engine.winpct import model_for

from .exchange import Exchange

log = logging.getLogger("anchor.pooled")

PATIENCE = 2.0  # seconds a claimed piece may be missing before a waiting job plays it,
PATIENCE_FACTOR = 4  # ... or this many times the slowest piece played here, if longer
LATE_PIECE = "a piece claimed by another job did not come within the patience: played here"


@dataclass(frozen=True, slots=True)
class Setting:
    """What a pooled job plays: the position, its candidates and the request."""

    solver: Solver
    board: Board
    rack: str
    leaves: object  # Leaves, or a trained model
    chosen: list[Candidate]
    lead: int
    inference: Inference | None = None  # what the opponent kept (engine.inference)


class OutOfTime(Exception):
    """The job reached its deadline (the rounds merged so far stay in the pool)."""


class GivenUp(Exception):
    """The client set the pool's stop mark: nobody will read this simulation's answer."""


def run_pooled(
    request: p.SimulateRequest, setting: Setting, pools, budget, inferred: dict | None = None
) -> p.SimulateResult:
    """The simulation `request` asks for, its rounds shared through `pools(key, cap)`;
    `inferred`: what the answer says of the inference."""
    settings = Simulation(
        candidates=request.candidates,
        plies=request.plies,
        iterations=request.iterations,
        seed=request.seed,
        round_size=request.round_size,
        confidence=request.confidence or None,
        rank=request.rank,
    )
    table = [[c.notation, c.score, round(c.equity, 3)] for c in setting.chosen]
    rounds = math.ceil(request.iterations / request.round_size)
    exchange = pools(p.pool_key(request), cap=2 * rounds * request.pieces + 64)
    sharer = _Sharer(exchange, setting, request, table, budget)
    model = model_for(setting.solver.rules)
    try:
        values, alive, ends = settings.schedule(sharer.play, setting.lead, model)
    except OutOfTime:
        return p.SimulateResult(table, complete=False, merged=sharer.merged, inferred=inferred)
    except GivenUp:
        return p.SimulateResult(
            table, complete=False, merged=sharer.merged, stopped=True, inferred=inferred
        )
    pruned = [not a for a in alive]
    stats = summarize(setting.chosen, values, setting.lead, pruned, ends, model,
                      settings.plies, settings.rank)  # fmt: skip
    rows = [[s.notation, s.score, s.equity, s.iterations, s.mean, s.stdev, s.win_rate, s.pruned]
            for s in stats]  # fmt: skip
    return p.SimulateResult(table, summary=rows, merged=sharer.merged, inferred=inferred)


@dataclass(slots=True)
class _Ahead:
    """The first iterations of a piece of the next round, claimed and played while this
    round's last pieces are awaited, for the candidates alive then (pruning only drops
    candidates, and a candidate's value in an iteration is the same whichever others are
    played beside it: the survivors' values are kept)."""

    round_no: int
    piece: int
    run: range
    live: list[int]
    values: list[list[float]]
    ends: list[list[int]]
    done: int = 0  # iterations of `run` played


class _Sharer:
    """Plays one job's part of each round and gathers the rest from the exchange."""

    def __init__(self, exchange: Exchange, setting: Setting, request, table, budget):
        self.exchange = exchange
        self.setting = setting
        self.request = request
        self.stamp = hashlib.sha256(msgpack.packb(table)).digest()[:8]
        self.budget = budget
        self.slowest = 0.0
        self.held: tuple[int, int] | None = None  # (round, piece) claimed ahead
        self.ahead: _Ahead | None = None
        self.iteration = 0.0  # seconds an iteration took in the last piece played here
        self.merged = 0  # iterations of the rounds merged so far

    def play(self, iterations: range, live: list[int] | None) -> Played:
        """One round: (values, unplayed) of each live candidate, merged in order."""
        now = list(range(len(self.setting.chosen))) if live is None else live
        runs = p.split_round(iterations, self.request.pieces)
        round_no = iterations.start // self.request.round_size
        have = self._read(round_no, runs, len(now), 0.0)
        if len(have) < len(runs):
            self._claim_and_play(round_no, runs, now, have)
            self._gather(round_no, runs, now, have)
        values: list[list[float]] = [[] for _ in now]
        ends: list[list[int]] = [[] for _ in now]
        for i in range(len(runs)):
            for k, (v, u) in enumerate(zip(*have[i], strict=True)):
                values[k].extend(v)
                ends[k].extend(u)
        self.merged += len(iterations)
        return values, ends

    def _claim_and_play(self, round_no: int, runs: list[range], now, have: dict) -> None:
        """Play pieces of the round while there are any to claim; the claim made after
        the last is of the next round's, held until then."""
        held, self.held = self.held, None
        piece = held[1] if held and held[0] == round_no else self.exchange.claim(round_no)
        while piece < len(runs):
            if self.exchange.stopped:
                raise GivenUp
            if piece in have:
                piece = self.exchange.claim(round_no)
                continue
            have[piece] = self._play_piece(round_no, piece, runs[piece], now)
            blob = self._pack(have[piece])
            got = self.exchange.publish(round_no, piece, blob, len(runs), claim=True)
            if self.exchange.stopped:
                raise GivenUp
            if got[0] != round_no:
                self.held = got
                return
            piece = got[1]

    def _gather(self, round_no: int, runs: list[range], now, have: dict) -> None:
        """Wait for the pieces others claimed, playing ahead meanwhile when this job holds
        a piece of the next round; play those that do not come in time."""
        since = time.monotonic()
        ahead = self.ahead = self._ahead(round_no, runs, now)
        while len(have) < len(runs):
            patience = max(PATIENCE, PATIENCE_FACTOR * self.slowest)
            left = patience - (time.monotonic() - since)
            if left <= 0 or not self.exchange.shared:
                for piece in range(len(runs)):
                    if piece not in have:
                        log.warning(LATE_PIECE, extra={"round": round_no, "piece": piece})
                        have[piece] = self._play(runs[piece], now)
                        blob = self._pack(have[piece])
                        self.exchange.publish(round_no, piece, blob, len(runs), claim=False)
                return
            wait = min(left, self._time_left())
            if ahead is not None and ahead.done < len(ahead.run):
                wait = 0.0  # look, then play a few iterations more ahead
            before = len(have)
            have.update(self._read(round_no, runs, len(now), wait, have))
            if len(have) > before:
                since = time.monotonic()  # pieces are coming: whoever holds the rest is alive
            elif wait == 0.0 and ahead is not None:
                self._play_ahead(ahead)

    def _ahead(self, round_no: int, runs: list[range], now: list[int]) -> _Ahead | None:
        """Where to play ahead: the next round's piece this job holds, if there is one."""
        held, request = self.held, self.request
        start = runs[-1].stop
        if held is None or held[0] != round_no + 1 or start >= request.iterations:
            return None
        following = range(start, min(start + request.round_size, request.iterations))
        pieces = p.split_round(following, request.pieces)
        if held[1] >= len(pieces):
            return None
        values: list[list[float]] = [[] for _ in now]
        return _Ahead(round_no + 1, held[1], pieces[held[1]], list(now), values, [[] for _ in now])

    def _play_ahead(self, ahead: _Ahead) -> None:
        """About a millisecond of iterations ahead (at least one), then back to look."""
        count = max(1, int(0.001 / self.iteration)) if self.iteration > 0 else 1
        run = ahead.run[ahead.done : ahead.done + count]
        values, ends = self._play(run, ahead.live, timed=False)
        for k in range(len(ahead.live)):
            ahead.values[k].extend(values[k])
            ahead.ends[k].extend(ends[k])
        ahead.done += len(run)

    def _play_piece(self, round_no: int, piece: int, run: range, now: list[int]) -> tuple:
        """A piece's (values, unplayed), from what was played ahead of it and the rest."""
        ahead, self.ahead = self.ahead, None
        if ahead is None or (ahead.round_no, ahead.piece) != (round_no, piece) or not ahead.done:
            return self._play(run, now)
        where = {c: k for k, c in enumerate(ahead.live)}
        if not set(now) <= set(where):
            return self._play(run, now)  # (cannot happen: pruning only drops candidates)
        rest = range(run.start + ahead.done, run.stop)
        values, ends = self._play(rest, now) if rest else ([[] for _ in now], [[] for _ in now])
        return (
            [ahead.values[where[c]] + values[k] for k, c in enumerate(now)],
            [ahead.ends[where[c]] + ends[k] for k, c in enumerate(now)],
        )

    def _time_left(self) -> float:
        try:
            left = self.budget()
        except p.ProtocolError as exc:
            if exc.code == p.TIMEOUT:
                raise OutOfTime from None
            raise
        return math.inf if left is None else left

    def _play(self, run: range, now: list[int], timed: bool = True) -> tuple[list, list]:
        s = self.setting
        started = time.monotonic()
        stopped: list[list[int]] = []
        try:
            values = iterate(
                s.solver, s.board, s.rack, s.leaves, [s.chosen[c] for c in now],
                self.request.plies, self.request.seed, run, self.budget, stopped, s.inference,
            )  # fmt: skip
        except WorkLimitError:
            raise OutOfTime from None
        except p.ProtocolError as exc:
            if exc.code == p.TIMEOUT:
                raise OutOfTime from None
            raise
        if timed:
            took = time.monotonic() - started
            self.slowest = max(self.slowest, took)
            self.iteration = took / len(run)
        return values, stopped

    def _pack(self, piece: tuple[list, list]) -> bytes:
        return msgpack.packb([self.stamp, piece[0], piece[1]])

    def _read(
        self, round_no: int, runs: list[range], live: int, wait: float, have: Collection = ()
    ) -> dict:
        """The round's pieces that read as this simulation's, the first good one of each
        (after waiting up to `wait` for one not in `have`)."""
        out = {}
        for piece, blobs in self.exchange.pieces(round_no, wait, have).items():
            if piece >= len(runs) or piece in have:  # (read once: play-ahead looks often)
                continue
            for blob in blobs:
                got = self._unpack(blob, live, len(runs[piece]))
                if got is not None:
                    out[piece] = got
                    break
        return out

    def _unpack(self, blob: bytes, live: int, size: int) -> tuple[list, list] | None:
        """A piece's (values, unplayed) if it has this simulation's shape; None if not (a
        stranger's write: the piece is then played here). Candidates other than this
        job's are refused: the workers hold different lexica under one name."""
        if len(blob) > 64 + 2 * live * (5 + 9 * size):  # 9 bytes a float at most
            return None  # (not unpacked: a stranger's megabytes would be)
        try:
            stamp, values, ends = msgpack.unpackb(blob, strict_map_key=True)
        except (ValueError, TypeError, msgpack.UnpackException):
            return None
        if not (
            isinstance(values, list) and isinstance(ends, list)
            and len(values) == len(ends) == live
            and all(isinstance(v, list) and len(v) == size for v in values)
            and all(isinstance(u, list) and len(u) == size for u in ends)
            and all(type(x) in (int, float) for v in values for x in v)
            and all(type(x) is int and 0 <= x <= 10_000 for u in ends for x in u)
        ):  # fmt: skip
            return None
        if stamp != self.stamp:
            raise p.ProtocolError(
                p.BAD_POSITION,
                "the jobs sharing this simulation found different candidates: their workers "
                "hold different lexica or leaves under the same name",
            )
        return values, ends
