"""The wire protocol's requests: versioned msgpack maps (PROTOCOL.md), one declared
dataclass a kind, and the limits a server sets on them.

Decoding is strict and bounded: a payload over MAX_PAYLOAD bytes, anything that is not
one msgpack map with string keys, an unknown version, kind or field, a wrong type, a
value out of range, a batch over the server's cap — each is refused with a ProtocolError
carrying a stable error code. Nothing here knows how analysis is done, and importing it
loads neither the engine nor the C extension.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .results import (  # noqa: F401  (re-exported: the results are part of the protocol)
    MOVE_FIELDS,
    Analysis,
    AnnotateResult,
    Batch,
    EndgameResult,
    Failure,
    Game,
    InferResult,
    PreendgameResult,
    Result,
    SelfPlayResult,
    SimulateResult,
    Timings,
    answer,
    check_result,
    move_dict,
    move_dicts,
    read_result,
)
from .wire import (  # noqa: F401  (re-exported: clients know them as protocol's)
    BAD_ENCODING,
    BAD_GAME,
    BAD_POSITION,
    BAD_RACK,
    BAD_VALUE,
    BATCH_TOO_LARGE,
    ERROR_CODES,
    INTERNAL,
    LIMIT_TOO_LARGE,
    MALFORMED,
    MAX_PAYLOAD,
    MAX_STRING,
    MISSING_FIELD,
    NOT_A_MAP,
    PAYLOAD_TOO_LARGE,
    RESULT_TOO_LARGE,
    TIMEOUT,
    UNKNOWN_FIELD,
    UNKNOWN_LEAVES,
    UNKNOWN_LEXICON,
    UNKNOWN_RULESET,
    UNSUPPORTED_VERSION,
    VERSION,
    WRONG_TYPE,
    Declared,
    ProtocolError,
    Wire,
    check_version,
    error_result,
    item,
    kind_of,
    pack,
    unpack,
    wire,
)

MAX_BATCH = 1000  # the protocol's ceiling; a server may set a lower one (Limits.batch)
MODES = ("both", "across", "down")
RANKS = ("score", "equity")  # how analyze ranks: by score, or score + the leave's value
# The job function a client enqueues, by name (the client never imports the worker).
# Workers also accept the name used before the packages moved under `anchor`.
JOB_FUNCTION = "anchor.worker.jobs.analyze"
JOB_FUNCTION_ALIASES = ("worker.jobs.analyze",)

# Priority lanes: a worker takes a job from the first lane that has one. The interactive
# lane is the base queue itself (what clients before lanes used); the others are suffixed.
INTERACTIVE, BATCH = "interactive", "batch"
LANES = (INTERACTIVE, BATCH)


def lane_queue(base: str, lane: str) -> str:
    """The RQ queue name of `lane` of the queue `base`: `anchor`, `anchor:batch`."""
    if lane not in LANES:
        raise ValueError(f"unknown lane {lane!r}: expected one of {', '.join(LANES)}")
    return base if lane == INTERACTIVE else f"{base}:{lane}"


# Why a job failed (rather than answering ok: false): the first word of a failed job's
# exc_string when the worker refused it, and ServiceError.code on the client.
FORBIDDEN_FUNCTION = "forbidden_function"  # the job names a function the worker does not run
MALFORMED_JOB = "malformed"  # the job hash has fields RQ cannot read, or no request argument
REDIS_FULL = "redis_full"  # Redis refused a write: it is at maxmemory (client side)
ABANDONED = "abandoned"  # the worker holding it died, and it had no retries left
FAILURE_CODES = (FORBIDDEN_FUNCTION, MALFORMED_JOB, PAYLOAD_TOO_LARGE, REDIS_FULL, ABANDONED)

# The engine's bounds, restated so that the protocol loads no engine; tests hold them
# equal (tests/test_protocol.py, tests/test_endgame.py).
MAX_SIM_CANDIDATES = 50  # engine/simulate.py
MAX_SIM_PLIES = 6
MAX_ENDGAME_PLIES = 64  # engine/endgame.py
SIM_RANKS = ("spread", "win")  # mean spread, or the win model's chance given the lead
# endgame: equity, then the solver; siminfer: sim, the opponent's rack drawn from what their
# last move says they kept
POLICIES = ("score", "equity", "sim", "endgame", "siminfer")
MAX_SIM_ITERATIONS = 10_000  # per simulate job; a simulation is split into many jobs
MAX_POOL_PIECES = 64  # a pooled simulation's round is cut into at most this many pieces
POOL_TTL = 3600  # seconds a pool's Redis keys outlive their last write
POOL_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MAX_ANNOTATE_SIM_ITERATIONS = 2000  # per turn of an annotation, per move of a sim player
MAX_GAMES = 100  # per self-play job
MAX_GCG = 512 * 1024
MAX_TOP = 50
MAX_ENDGAME_THREADS = 64
MAX_PREENDGAME_CANDIDATES = 100  # engine/preendgame.py
MAX_PREENDGAME_STAGES = 8
MAX_PREENDGAME_PARTS = 64  # engine/preendgame.py's MAX_PARTS
# MAGPIE's halving schedule, the pre-endgame's default (engine/preendgame.py's STAGES)
PREENDGAME_STAGES = ((2, 32), (3, 16), (4, 8), (5, 4), (6, 2))
MAX_INFER_RACKS = 20_000_000  # an exchange from a full English bag tries ~3.2 million
MAX_INFER_THREADS = 64
MAX_INFER_TOP = 100
MAX_INFER_PARTS = 64  # engine/inference.py's MAX_PARTS
MAX_INFER_MARGIN = 1000  # points (engine/inference.py)
MAX_SEED = 2**63 - 1
NAME = (1, 200)  # a ruleset's, lexicon's or leave values' name: characters


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps a server sets (PROTOCOL.md, "Limits"); a request may ask for less, never more.
    None means no cap (embedded mode: the user's own machine)."""

    job_seconds: float | None = 30.0  # time one job may take; past it: `timeout`, final
    result_bytes: int | None = 8 << 20  # packed result; past it: `result_too_large`
    moves: int | None = 1000  # moves a position returns when it gives no `limit`; most it may ask
    batch: int = MAX_BATCH  # positions in a batch; past it: `batch_too_large`
    result_ttl: int = 3600  # seconds results (and failures) are kept in Redis
    retries: int = 2  # retries of a job whose worker died
    endgame_table_mb: float | None = 256.0  # an endgame's transposition table, at most
    endgame_threads: int | None = 1  # threads one endgame job searches on (a worker a core)
    infer_racks: int | None = 4_000_000  # racks one inference may try (MAX_INFER_RACKS)
    infer_threads: int | None = 1  # threads one inference job runs on (a worker a core)

    def __post_init__(self) -> None:
        checks = (
            ("job_seconds", self.job_seconds, 0.01, 86_400.0, True),
            ("result_bytes", self.result_bytes, 1024, 512 << 20, True),
            ("moves", self.moves, 1, 10_000_000, True),
            ("batch", self.batch, 1, MAX_BATCH, False),
            ("result_ttl", self.result_ttl, 1, 30 * 86_400, False),
            ("retries", self.retries, 0, 100, False),
            ("endgame_table_mb", self.endgame_table_mb, 1, 65536, True),
            ("endgame_threads", self.endgame_threads, 1, MAX_ENDGAME_THREADS, True),
            ("infer_racks", self.infer_racks, 1, MAX_INFER_RACKS, True),
            ("infer_threads", self.infer_threads, 1, MAX_INFER_THREADS, True),
        )
        for name, value, low, high, optional in checks:
            if value is None and optional:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (low <= value <= high)
            ):
                raise ValueError(f"limit {name} must be {low}..{high}, not {value!r}")

    @classmethod
    def unbounded(cls) -> Limits:
        """No caps but the protocol's own: what embedded mode (one user, own machine) uses."""
        return cls(
            job_seconds=None,
            result_bytes=None,
            moves=None,
            endgame_table_mb=None,
            endgame_threads=None,
            infer_racks=None,
            infer_threads=None,
        )


class Kind(Declared):
    """A request kind: a declared map with `v` and `kind` beside its fields. Subclasses
    name their KIND and check what spans fields in `validate`."""

    __slots__ = ()

    def validate(self, limits: Limits) -> None:
        """Refuse (ProtocolError) what no one field shows: fields that go together."""

    @classmethod
    def decode(cls, obj: dict, limits: Limits) -> Kind:
        request = cls.from_map(obj, "", _ENVELOPE)
        request.validate(limits)
        return request

    def encode(self) -> dict:
        return {"v": VERSION, "kind": self.KIND, **self.to_map()}


_ENVELOPE = frozenset({"v", "kind"})


def _name(doc: str) -> dict:
    return wire(str, *NAME, doc)


def _normalise(request: Any, name: str, value: Any) -> None:
    """Set a frozen field to its canonical form (after decoding: tuples, floats)."""
    object.__setattr__(request, name, value)


@dataclass(frozen=True, slots=True)
class Options(Declared):
    breakdown: bool = field(
        default=False, metadata=wire(bool, doc="add each play's words and bingo")
    )
    exchanges: bool = field(
        default=False,
        metadata=wire(
            bool, doc="add every distinct exchange the bag allows and the pass (score 0)"
        ),
    )


@dataclass(frozen=True, slots=True)
class Position(Declared):
    """One position to analyse: a CGP (full, or its board field) or board rows."""

    cgp: str | None = field(
        default=None,
        metadata=wire(str, 0, MAX_STRING, "a CGP position (full, or just its board field)"),
    )
    rows: tuple[str, ...] | None = field(
        default=None,
        metadata=wire(
            list, 0, 64, "the board as rows: `.` empty, uppercase a tile, lowercase a blank",
            items=item(str, 0, 64, code=WRONG_TYPE), code=WRONG_TYPE,
        ),
    )  # fmt: skip
    rack: str | None = field(
        default=None,
        metadata=wire(
            str, 0, 64, "the rack, e.g. `AEINRS?`; nil: a full CGP's first rack", code=BAD_RACK
        ),
    )
    mode: str = field(default="both", metadata=wire(str, doc="the directions", choices=MODES))
    limit: int | None = field(
        default=None,
        metadata=wire(
            int, 0, None,
            "only the best `limit` plays (below); nil: every play",
        ),
    )  # fmt: skip

    def validate(self, limits: Limits, where: str) -> None:
        if (self.cgp is None) == (self.rows is None):
            raise ProtocolError(MISSING_FIELD, f"{where} needs exactly one of 'cgp' and 'rows'")
        if self.limit is not None and limits.moves is not None and self.limit > limits.moves:
            raise ProtocolError(
                LIMIT_TOO_LARGE,
                f"{where}: 'limit' {self.limit} is over this server's cap of {limits.moves} "
                "moves a position ('total' still counts every play)",
            )


_POSITION_KEYS = Position.field_names()
_POSITION_DEFAULTS = frozenset({"mode", "limit"})  # a batch's top-level defaults


@dataclass(frozen=True, slots=True)
class Request(Kind):
    """Analyze one position (kind "analyze", the position's fields at the top of the map)
    or many (kind "batch": `positions`, one result each)."""

    ruleset: str = field(default="english", metadata=_name("ruleset name"))
    lexicon: str | None = field(default=None, metadata=_name("lexicon name; nil: the ruleset's"))
    positions: tuple[Position, ...] = field(
        default=(),
        metadata=wire(
            list, 0, MAX_BATCH,
            "batch only: maps of the position fields (the top-level `mode` and `limit` are "
            "their defaults); at most the server's `--max-batch`",
            items=Wire((Position,)),
        ),
    )  # fmt: skip
    batch: bool = False  # the kind: a batch answers with one result per position
    options: Options = field(
        default_factory=Options, metadata=wire(Options, doc="`breakdown`, `exchanges` (below)")
    )
    rank: str = field(
        default="score", metadata=wire(str, doc="what ranks the plays", choices=RANKS)
    )
    leaves: str | None = field(
        default=None, metadata=_name("leave values by name; only with rank `equity`")
    )

    KIND = "analyze"  # or "batch"

    @classmethod
    def decode(cls, obj: dict, limits: Limits) -> Request:
        batch = obj.get("kind") == "batch"
        top = {k: v for k, v in obj.items() if k not in _POSITION_KEYS and k != "positions"}
        request = cls.from_map(top, "", _ENVELOPE)
        if request.rank != "equity" and request.leaves is not None:
            raise ProtocolError(BAD_VALUE, "'leaves' is used only with rank 'equity'")
        if not batch:
            if "positions" in obj:
                raise ProtocolError(
                    UNKNOWN_FIELD, "'positions' belongs to batch requests (kind 'batch')"
                )
            position = Position.from_map({k: v for k, v in obj.items() if k in _POSITION_KEYS}, "")
            position.validate(limits, "request")
            _normalise(request, "positions", (position,))
            return request
        for key in _POSITION_KEYS - _POSITION_DEFAULTS:
            if key in obj:
                raise ProtocolError(UNKNOWN_FIELD, f"a batch request gives {key!r} per position")
        raw = obj.get("positions")
        if raw is None:
            raise ProtocolError(MISSING_FIELD, "a batch request needs 'positions'")
        if not isinstance(raw, list):
            raise ProtocolError(WRONG_TYPE, f"'positions' must be an array, not {kind_of(raw)}")
        if len(raw) > limits.batch:
            raise ProtocolError(
                BATCH_TOO_LARGE, f"{len(raw)} positions; a batch here holds at most {limits.batch}"
            )
        defaults = {k: obj[k] for k in _POSITION_DEFAULTS if k in obj}
        positions = []
        for i, entry in enumerate(raw):
            where = f"positions[{i}]"
            if not isinstance(entry, dict):
                raise ProtocolError(WRONG_TYPE, f"{where} must be a map, not {kind_of(entry)}")
            position = Position.from_map({**defaults, **entry}, f"{where}: ")
            position.validate(limits, where)
            positions.append(position)
        _normalise(request, "positions", tuple(positions))
        _normalise(request, "batch", True)
        return request

    def encode(self) -> dict:
        out = {"v": VERSION, "kind": "batch" if self.batch else "analyze"}
        out.update(Request(self.ruleset, self.lexicon, (), False, self.options, self.rank,
                           self.leaves).to_map())  # fmt: skip
        if self.batch:
            out["positions"] = [p.to_map() for p in self.positions]
        else:
            (position,) = self.positions
            out.update(position.to_map())
        return out


@dataclass(frozen=True, slots=True)
class SelfPlayRequest(Kind):
    """Play `games` whole games (seeds seed, seed+1, ...) and return their records."""

    ruleset: str = field(default="english", metadata=_name("ruleset name"))
    lexicon: str | None = field(default=None, metadata=_name("lexicon name"))
    seed: int = field(default=0, metadata=wire(int, 0, MAX_SEED, "the first game's seed"))
    games: int = field(default=1, metadata=wire(int, 1, MAX_GAMES, "games in this job"))
    players: int = field(default=2, metadata=wire(int, 2, 4, "players a game"))
    check: bool = field(default=True, metadata=wire(bool, doc="verify every invariant every turn"))
    policies: tuple[str, ...] = field(
        default=(),
        metadata=wire(
            list, 0, 4, "once, or once a seat; [] is `score` (`endgame`: equity, then the solver)",
            items=item(str, choices=POLICIES),
        ),
    )  # fmt: skip
    leaves: str | None = field(default=None, metadata=_name("leave values by name"))
    alternate: bool = field(
        default=False, metadata=wire(bool, doc="rotate the seats every other game")
    )
    records: bool = field(
        default=True,
        metadata=wire(bool, doc="each game's GCG record in `gcg` (false: empty, a smaller result)"),
    )
    model: tuple[float, ...] = field(
        default=(),
        metadata=wire(
            list, 0, 128, "a leave model's parameters (training) instead of `leaves`",
            items=item((int, float), -1e6, 1e6),
        ),
    )  # fmt: skip
    sim_iterations: int = field(
        default=100,
        metadata=wire(int, 1, MAX_ANNOTATE_SIM_ITERATIONS, "`sim` players: iterations a move"),
    )
    sim_candidates: int = field(
        default=10, metadata=wire(int, 1, MAX_SIM_CANDIDATES, "`sim` players: candidates simulated")
    )
    sim_plies: int = field(
        default=2, metadata=wire(int, 1, MAX_SIM_PLIES, "`sim` players: moves played on")
    )
    sim_rank_by: str = field(
        default="spread",
        metadata=wire(
            str, doc="`sim` players rank by mean spread or chance of winning", choices=SIM_RANKS
        ),
    )
    sim_infer_racks: int = field(
        default=100_000,
        metadata=wire(
            int, 1, MAX_INFER_RACKS,
            "`siminfer` players: racks an inference may read (more: drawn uniformly); "
            "infer_racks caps it",
        ),
    )  # fmt: skip

    KIND = "selfplay"

    def __post_init__(self) -> None:
        _normalise(self, "policies", tuple(self.policies))
        _normalise(self, "model", tuple(float(x) for x in self.model))

    def validate(self, limits: Limits) -> None:
        if "siminfer" in self.policies and self.model:
            raise ProtocolError(
                BAD_VALUE, "'siminfer' reads moves with leave values ('leaves'), not a 'model'"
            )
        if self.policies and len(self.policies) not in (1, self.players):
            raise ProtocolError(
                BAD_VALUE,
                f"'policies' must be 1 or {self.players} of {', '.join(POLICIES)}, "
                f"not {len(self.policies)}",
            )


@dataclass(frozen=True, slots=True)
class AnnotateRequest(Kind):
    """Annotate one recorded game (GCG text): best plays, rank and points given up."""

    gcg: str = field(metadata=wire(str, 0, MAX_GCG, "the game record (GCG text)"))
    ruleset: str = field(default="english", metadata=_name("ruleset name"))
    lexicon: str | None = field(default=None, metadata=_name("lexicon name"))
    top: int = field(default=5, metadata=wire(int, 0, MAX_TOP, "best plays listed a turn"))
    leaves: str | None = field(
        default=None, metadata=_name("leave values by name: rank by equity, report equity given up")
    )
    sim_iterations: int = field(
        default=0,
        metadata=wire(
            int, 0, MAX_ANNOTATE_SIM_ITERATIONS, "> 0: also simulate each play (needs `leaves`)"
        ),
    )
    sim_candidates: int = field(
        default=10, metadata=wire(int, 1, MAX_SIM_CANDIDATES, "candidates simulated")
    )
    sim_plies: int = field(default=2, metadata=wire(int, 1, MAX_SIM_PLIES, "moves played on"))
    seed: int = field(default=1, metadata=wire(int, 0, MAX_SEED, "the simulation's seed"))
    sim_rank_by: str = field(
        default="spread",
        metadata=wire(str, doc="what the simulated rows rank by", choices=SIM_RANKS),
    )

    infer_racks: int = field(
        default=0,
        metadata=wire(
            int, 0, MAX_INFER_RACKS,
            "each play's rack inference, reading at most this many racks (0: none); "
            "infer_racks caps it",
        ),
    )  # fmt: skip
    preendgame: bool = field(
        default=False, metadata=wire(bool, doc="turns with 1..4 in the bag: their pre-endgame")
    )
    preendgame_stages: tuple = field(
        default=(),
        metadata=wire(
            list, 0, MAX_PREENDGAME_STAGES,
            "as `preendgame`'s `stages`; [] 1 ply over 16, 2 plies over 4",
            items=item(list, 2, 2, items=item(int, 0, MAX_PREENDGAME_CANDIDATES)),
        ),
    )  # fmt: skip

    KIND = "annotate"

    def validate(self, limits: Limits) -> None:
        check_stages(self.preendgame_stages, "preendgame_stages")
        if self.sim_iterations and self.leaves is None:
            raise ProtocolError(
                BAD_VALUE, "'sim_iterations' needs 'leaves': the simulated players rank by equity"
            )
        if self.infer_racks and self.leaves is None:
            raise ProtocolError(
                BAD_VALUE, "'infer_racks' needs 'leaves': a move is read by its equity"
            )


@dataclass(frozen=True, slots=True)
class SimulateRequest(Kind):
    """A share of a Monte Carlo simulation: iterations [first, first + iterations) of
    the candidates numbered in `only` (all when empty) among the top `candidates` plays by
    equity. Any split of a simulation's iterations merges into the same answer."""

    cgp: str = field(metadata=wire(str, 0, MAX_STRING, "the position (a full CGP)"))
    ruleset: str = field(default="english", metadata=_name("ruleset name"))
    lexicon: str | None = field(default=None, metadata=_name("lexicon name"))
    leaves: str | None = field(default=None, metadata=_name("leave values by name"))
    rack: str | None = field(
        default=None, metadata=wire(str, 0, 64, "the rack; nil: the CGP's first")
    )
    candidates: int = field(
        default=15, metadata=wire(int, 1, MAX_SIM_CANDIDATES, "the top plays by static equity")
    )
    plies: int = field(default=2, metadata=wire(int, 1, MAX_SIM_PLIES, "moves played on"))
    seed: int = field(default=1, metadata=wire(int, 0, MAX_SEED, "the simulation's seed"))
    first: int = field(default=0, metadata=wire(int, 0, 2**40, "the first iteration"))
    iterations: int = field(
        default=100, metadata=wire(int, 1, MAX_SIM_ITERATIONS, "iterations in this job")
    )
    only: tuple[int, ...] = field(
        default=(),
        metadata=wire(
            list, 0, MAX_SIM_CANDIDATES, "candidate numbers simulated; [] all",
            items=item(int, 0, MAX_SIM_CANDIDATES - 1),
        ),
    )  # fmt: skip

    pool: str | None = field(
        default=None,
        metadata=wire(str, 1, 64, "the whole simulation, its rounds shared by the pool's jobs"),
    )
    round_size: int = field(
        default=100,
        metadata=wire(int, 1, MAX_SIM_ITERATIONS, "with `pool`: iterations between prunings"),
    )
    confidence: float = field(
        default=0.99,
        metadata=wire((int, float), 0, 0.999999, "with `pool`: pruning's confidence; 0 none"),
    )
    rank: str = field(
        default="spread",
        metadata=wire(str, doc="with `pool`: what pruning ranks by", choices=SIM_RANKS),
    )
    pieces: int = field(
        default=1,
        metadata=wire(int, 1, MAX_POOL_PIECES, "with `pool`: pieces a round is cut into"),
    )
    infer_play: str | None = field(
        default=None,
        metadata=wire(
            str, 1, 64, "the opponent's last play, on the board ('8D WO(R)D'): draw their "
            "rack from what it says they kept",
        ),
    )  # fmt: skip
    infer_score: int | None = field(
        default=None,
        metadata=wire(int, 0, 1 << 20, "with `infer_play`: its score; nil: as the board scores it"),
    )
    infer_exchanged: int = field(
        default=0,
        metadata=wire(int, 0, 16, "the opponent's last move was an exchange of this many tiles"),
    )
    infer_margin: float = field(
        default=5.0,
        metadata=wire(
            (int, float), -MAX_INFER_MARGIN, MAX_INFER_MARGIN,
            "with an inference: points of equity their move may give up",
        ),
    )  # fmt: skip

    KIND = "simulate"

    def __post_init__(self) -> None:
        _normalise(self, "only", tuple(sorted(set(self.only))))
        _normalise(self, "confidence", float(self.confidence))

    @property
    def infers(self) -> bool:
        """Whether the opponent's rack is drawn from an inference of their last move."""
        return self.infer_play is not None or self.infer_exchanged > 0

    def validate(self, limits: Limits) -> None:
        if self.infer_play is not None and self.infer_exchanged:
            raise ProtocolError(
                BAD_VALUE, "'infer_play' and 'infer_exchanged' together: the last move was one"
            )
        if any(c >= self.candidates for c in self.only):
            raise ProtocolError(
                BAD_VALUE, f"'only' must list candidate numbers 0..{self.candidates - 1}"
            )
        if self.pool is None:
            return
        if not set(self.pool) <= POOL_CHARACTERS:
            raise ProtocolError(
                BAD_VALUE, "'pool' may hold only letters, digits, '-' and '_' (it names Redis keys)"
            )
        if self.first or self.only:
            raise ProtocolError(
                BAD_VALUE, "a job with 'pool' runs the whole simulation: 'first' must be 0 "
                "and 'only' empty",
            )  # fmt: skip


def pool_key(request: SimulateRequest) -> str:
    """Where a pooled simulation's jobs meet in Redis: `anchor:pool:<pool>:<digest>`, the
    digest that of the whole request, so jobs asking for different simulations never
    share values whatever pool name they give (the stream; its claims: `...:claims`)."""
    import hashlib  # here, not at the top: OpenSSL's load is a tenth of a CLI start

    digest = hashlib.sha256(encode_request(request)).hexdigest()[:32]
    return f"anchor:pool:{request.pool}:{digest}"


def pool_stop_key(key: str) -> str:
    """For the pool at `key` (pool_key): set by a client that gives the simulation up, so
    its jobs stop at their next claim (answering `complete: false`) instead of playing on
    for nobody."""
    return key + ":stop"


def split_round(iterations: range, pieces: int) -> list[range]:
    """A pooled round cut into `pieces` runs (no more than its iterations), as even as can
    be, the first ones one longer."""
    count = min(pieces, len(iterations))
    size, extra = divmod(len(iterations), count)
    out, at = [], iterations.start
    for i in range(count):
        step = size + (i < extra)
        out.append(range(at, at + step))
        at += step
    return out


@dataclass(frozen=True, slots=True)
class EndgameRequest(Kind):
    """An endgame with the bag empty, solved exactly (kind "endgame"). The racks come from
    the CGP (the player to move first) unless given. A hard one is split over the fleet:
    each job searches the root plays `first`, `first + parts`, ... (numbered in the root's
    canonical order, which is a function of the position) below `last`, against `floor`,
    a value another job already reached."""

    cgp: str = field(metadata=wire(str, 1, MAX_STRING, "the position (CGP); both racks"))
    ruleset: str = field(default="english", metadata=wire(str, 1, 200, "ruleset name"))
    lexicon: str | None = field(default=None, metadata=wire(str, 1, 200, "lexicon name"))
    rack: str | None = field(default=None, metadata=wire(str, 1, 64, "the rack to move"))
    opponent: str | None = field(default=None, metadata=wire(str, 1, 64, "the other rack"))
    plies: int | None = field(
        default=None, metadata=wire(int, 1, MAX_ENDGAME_PLIES, "deepest line (nil: to the end)")
    )
    seconds: float | None = field(
        default=None, metadata=wire((int, float), 0.001, 86_400, "time budget; job_seconds caps it")
    )
    table_mb: float | None = field(
        default=None,
        metadata=wire((int, float), 1, 65_536, "table memory; endgame_table_mb caps it"),
    )
    scoreless: int | None = field(
        default=None,
        metadata=wire(int, 0, 99, "scoreless turns already in a row; nil: the CGP's count"),
    )
    first: int = field(default=0, metadata=wire(int, 0, 1 << 20, "first root play searched"))
    last: int | None = field(default=None, metadata=wire(int, 1, 1 << 20, "root plays below this"))
    parts: int = field(default=1, metadata=wire(int, 1, 1024, "split into this many parts"))
    part: int = field(default=0, metadata=wire(int, 0, 1023, "this job's part"))
    floor: int | None = field(
        default=None,
        metadata=wire(int, -(1 << 28), 1 << 28, "a value reached: bound what is worth less"),
    )
    threads: int | None = field(
        default=None,
        metadata=wire(
            int, 1, MAX_ENDGAME_THREADS, "search threads; nil: endgame_threads, which caps it"
        ),
    )

    KIND = "endgame"

    def validate(self, limits: Limits) -> None:
        if self.part >= self.parts:
            raise ProtocolError(
                BAD_VALUE, f"'part' must be below 'parts' ({self.parts}), not {self.part}"
            )


def check_stages(stages: tuple, name: str) -> None:
    """A pre-endgame's `[plies, n]` stages: plies 0..MAX_ENDGAME_PLIES, n never growing."""
    before = MAX_PREENDGAME_CANDIDATES
    for i, (plies, n) in enumerate(stages):
        if not (0 <= plies <= MAX_ENDGAME_PLIES and 1 <= n <= before):
            raise ProtocolError(
                BAD_VALUE, f"'{name}[{i}]' must be [plies 0..{MAX_ENDGAME_PLIES}, "
                f"candidates 1..{before}] (no more than the stage before), not {[plies, n]}",
            )  # fmt: skip
        before = n


@dataclass(frozen=True, slots=True)
class PreendgameRequest(Kind):
    """The pre-endgame, 1 to 4 tiles in the bag (kind "preendgame"): the top candidates
    and the pass, each valued over every way the unseen tiles can lie, in stages that
    search the endgames deeper as they narrow the field (PROTOCOL.md, preendgame)."""

    cgp: str = field(
        metadata=wire(str, 1, MAX_STRING, "the position (CGP); the mover's rack first")
    )
    ruleset: str = field(default="english", metadata=wire(str, 1, 200, "ruleset name"))
    lexicon: str | None = field(default=None, metadata=wire(str, 1, 200, "lexicon name"))
    leaves: str | None = field(
        default=None, metadata=_name("leave values: candidates and modelled moves by equity")
    )
    rack: str | None = field(default=None, metadata=wire(str, 1, 64, "the rack to move"))
    candidates: int = field(
        default=32,
        metadata=wire(int, 1, MAX_PREENDGAME_CANDIDATES, "moves valued (and the pass)"),
    )
    stages: tuple = field(
        default=(),
        metadata=wire(
            list, 0, MAX_PREENDGAME_STAGES,
            "`[plies, n]` each: the top n valued, endgames `plies` deep (0: to the end); "
            "[] MAGPIE's 2..6 plies over 32..2",
            items=item(list, 2, 2, items=item(int, 0, MAX_PREENDGAME_CANDIDATES)),
        ),
    )  # fmt: skip
    cut: bool = field(
        default=True, metadata=wire(bool, doc="drop, in the last stage, what cannot win")
    )
    threads: int | None = field(
        default=None,
        metadata=wire(
            int, 1, MAX_ENDGAME_THREADS, "candidates valued at once; nil: endgame_threads, its cap"
        ),
    )
    seconds: float | None = field(
        default=None, metadata=wire((int, float), 0.001, 86_400, "time budget; job_seconds caps it")
    )
    only: tuple[str, ...] = field(
        default=(),
        metadata=wire(
            list, 0, MAX_PREENDGAME_CANDIDATES + 1,
            "these moves are the candidates (one the rack cannot make: bad_position); [] the top",
            items=item(str, 1, 64),
        ),
    )  # fmt: skip
    parts: int = field(
        default=1,
        metadata=wire(int, 1, MAX_PREENDGAME_PARTS, "one stage split into this many jobs"),
    )
    part: int = field(
        default=0, metadata=wire(int, 0, MAX_PREENDGAME_PARTS - 1, "with `parts`: this job's part")
    )

    KIND = "preendgame"

    def validate(self, limits: Limits) -> None:
        check_stages(self.stages, "stages")
        if self.part >= self.parts:
            raise ProtocolError(
                BAD_VALUE, f"'part' must be below 'parts' ({self.parts}), not {self.part}"
            )
        if self.parts > 1 and len(self.stages) != 1:
            raise ProtocolError(
                BAD_VALUE, "a pre-endgame split into 'parts' runs one stage a job: give one "
                "'stages' entry (the client ranks between stages)",
            )  # fmt: skip


@dataclass(frozen=True, slots=True)
class InferRequest(Kind):
    """Rack inference (kind "infer"): the racks that explain the move the player to move
    in `cgp` made (a play and its score, or an exchange of `exchanged` tiles), seen by the
    other player, whose rack is the CGP's second (or `observer`)."""

    cgp: str = field(
        metadata=wire(str, 1, MAX_STRING, "the position before the move; the watcher's rack second")
    )
    ruleset: str = field(default="english", metadata=_name("ruleset name"))
    lexicon: str | None = field(default=None, metadata=_name("lexicon name"))
    leaves: str | None = field(default=None, metadata=_name("the mover's leave values by name"))
    play: str | None = field(
        default=None, metadata=wire(str, 1, 64, "the play made, like '8D WORD'")
    )
    score: int | None = field(
        default=None, metadata=wire(int, 0, 1 << 20, "its score; nil: as the board scores it")
    )
    exchanged: int = field(
        default=0, metadata=wire(int, 0, 16, "tiles exchanged instead of a play")
    )
    observer: str | None = field(
        default=None, metadata=wire(str, 0, 64, "the watcher's rack; nil: the CGP's second")
    )
    margin: float = field(
        default=5.0,
        metadata=wire(
            (int, float), -MAX_INFER_MARGIN, MAX_INFER_MARGIN, "points of equity a move may give up"
        ),
    )
    top: int = field(default=15, metadata=wire(int, 0, MAX_INFER_TOP, "leaves listed"))
    threads: int | None = field(
        default=None,
        metadata=wire(int, 1, MAX_INFER_THREADS, "threads; nil: infer_threads, which caps it"),
    )
    seconds: float | None = field(
        default=None, metadata=wire((int, float), 0.001, 86_400, "time budget; job_seconds caps it")
    )
    part: int = field(
        default=0, metadata=wire(int, 0, MAX_INFER_PARTS - 1, "with `parts`: this job's part")
    )
    parts: int = field(
        default=1,
        metadata=wire(int, 1, MAX_INFER_PARTS, "> 1: the racks dealt out to this many jobs"),
    )

    KIND = "infer"  # a play and an exchange together, or neither: the engine's bad_position


KINDS: dict[str, type[Kind]] = {
    "analyze": Request,
    "batch": Request,
    SelfPlayRequest.KIND: SelfPlayRequest,
    AnnotateRequest.KIND: AnnotateRequest,
    SimulateRequest.KIND: SimulateRequest,
    EndgameRequest.KIND: EndgameRequest,
    PreendgameRequest.KIND: PreendgameRequest,
    InferRequest.KIND: InferRequest,
}
AnyRequest = (
    Request | SelfPlayRequest | AnnotateRequest | SimulateRequest | EndgameRequest
    | PreendgameRequest | InferRequest
)  # fmt: skip


def wire_keys(kind: str) -> frozenset[str]:
    """Every key a request map of `kind` may carry."""
    cls = KINDS[kind]
    extra = _POSITION_KEYS if cls is Request else frozenset()
    return _ENVELOPE | cls.field_names() | extra


def decode_request(payload: bytes, limits: Limits | None = None) -> AnyRequest:
    """Bytes from the queue -> a request of its kind, or ProtocolError."""
    return parse_request(unpack(payload), limits or Limits())


def parse_request(obj: Any, limits: Limits | None = None) -> AnyRequest:
    """A decoded msgpack object -> a request of its kind, every field checked (against
    `limits` where the server bounds it)."""
    check_version(obj)
    kind = obj.get("kind", "analyze")
    if kind is None:
        kind = "analyze"
    if not isinstance(kind, str):
        raise ProtocolError(WRONG_TYPE, f"'kind' must be a string, not {kind_of(kind)}")
    cls = KINDS.get(kind)
    if cls is None:
        raise ProtocolError(
            BAD_VALUE,
            f"'kind' must be one of {', '.join(repr(k) for k in KINDS)}, not {kind[:40]!r}",
        )
    return cls.decode(obj, limits or Limits())


def encode_request(request: AnyRequest) -> bytes:
    """A request as the bytes a worker decodes; refused when over MAX_PAYLOAD."""
    payload = pack(request.encode())
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(
            PAYLOAD_TOO_LARGE, f"request is {len(payload)} bytes; the limit is {MAX_PAYLOAD}"
        )
    return payload
