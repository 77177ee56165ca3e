"""The wire protocol: versioned msgpack maps for requests and results (PROTOCOL.md).

Decoding is strict and bounded: a payload over MAX_PAYLOAD bytes, anything that is not
one msgpack map with string keys, an unknown version or field, a wrong type, a batch over
MAX_BATCH positions — each is refused with a ProtocolError carrying a stable error code.
Nothing here knows how analysis is done; it only says what a request and a result are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack

VERSION = 1
MAX_PAYLOAD = 1 << 20  # 1 MiB: a batch of MAX_BATCH CGP positions is ~200 KB
MAX_BATCH = 1000  # the protocol's ceiling; a server may set a lower one (Limits.batch)
MAX_STRING = 4096  # a CGP is ~100-250 characters
MODES = ("both", "across", "down")
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


# Error codes: stable strings a client can switch on (PROTOCOL.md explains each).
PAYLOAD_TOO_LARGE = "payload_too_large"
MALFORMED = "malformed"
BAD_ENCODING = "bad_encoding"
NOT_A_MAP = "not_a_map"
UNSUPPORTED_VERSION = "unsupported_version"
UNKNOWN_FIELD = "unknown_field"
MISSING_FIELD = "missing_field"
WRONG_TYPE = "wrong_type"
BAD_VALUE = "bad_value"
BATCH_TOO_LARGE = "batch_too_large"
UNKNOWN_RULESET = "unknown_ruleset"
UNKNOWN_LEXICON = "unknown_lexicon"
UNKNOWN_LEAVES = "unknown_leaves"
BAD_POSITION = "bad_position"
BAD_RACK = "bad_rack"
INTERNAL = "internal"
BAD_GAME = "bad_game"
LIMIT_TOO_LARGE = "limit_too_large"
RESULT_TOO_LARGE = "result_too_large"
TIMEOUT = "timeout"
ERROR_CODES = (
    PAYLOAD_TOO_LARGE,
    MALFORMED,
    BAD_ENCODING,
    NOT_A_MAP,
    UNSUPPORTED_VERSION,
    UNKNOWN_FIELD,
    MISSING_FIELD,
    WRONG_TYPE,
    BAD_VALUE,
    BATCH_TOO_LARGE,
    UNKNOWN_RULESET,
    UNKNOWN_LEXICON,
    BAD_POSITION,
    BAD_RACK,
    INTERNAL,
    BAD_GAME,
    UNKNOWN_LEAVES,
    LIMIT_TOO_LARGE,
    RESULT_TOO_LARGE,
    TIMEOUT,
)

# Why a job failed (rather than answering ok: false): the first word of a failed job's
# exc_string when the worker refused it, and ServiceError.code on the client.
FORBIDDEN_FUNCTION = "forbidden_function"  # the job names a function the worker does not run
MALFORMED_JOB = "malformed"  # the job hash has fields RQ cannot read, or no request argument
REDIS_FULL = "redis_full"  # Redis refused a write: it is at maxmemory (client side)
ABANDONED = "abandoned"  # the worker holding it died, and it had no retries left
FAILURE_CODES = (FORBIDDEN_FUNCTION, MALFORMED_JOB, REDIS_FULL, ABANDONED)


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

    def __post_init__(self) -> None:
        checks = (
            ("job_seconds", self.job_seconds, 0.01, 86_400.0, True),
            ("result_bytes", self.result_bytes, 1024, 512 << 20, True),
            ("moves", self.moves, 1, 10_000_000, True),
            ("batch", self.batch, 1, MAX_BATCH, False),
            ("result_ttl", self.result_ttl, 1, 30 * 86_400, False),
            ("retries", self.retries, 0, 100, False),
            ("endgame_table_mb", self.endgame_table_mb, 1, 65536, True),
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
        return cls(job_seconds=None, result_bytes=None, moves=None, endgame_table_mb=None)


class ProtocolError(Exception):
    """A request or result that breaks the protocol; `code` is one of ERROR_CODES."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def to_result(self) -> dict:
        return error_result(self.code, self.message)


@dataclass(frozen=True, slots=True)
class Options:
    breakdown: bool = False  # per-move words and bingo
    exchanges: bool = False  # add exchanges and the pass


@dataclass(frozen=True, slots=True)
class Position:
    """One position to analyse: a CGP (full, or its board field) or board rows."""

    cgp: str | None = None
    rows: tuple[str, ...] | None = None
    rack: str | None = None  # None: the CGP's player to move
    mode: str = "both"
    limit: int | None = None  # None: every play


@dataclass(frozen=True, slots=True)
class Request:
    ruleset: str = "english"
    lexicon: str | None = None  # None: the ruleset's default lexicon
    positions: tuple[Position, ...] = ()
    batch: bool = False  # a batch answers with one result per position
    options: Options = field(default_factory=Options)
    rank: str = "score"  # or "equity": score + value of the tiles kept
    leaves: str | None = None  # leave values by name (equity); None: the lexicon's


@dataclass(frozen=True, slots=True)
class SelfPlayRequest:
    """Play `games` whole games (seeds seed, seed+1, ...) and return their records."""

    ruleset: str = "english"
    lexicon: str | None = None
    seed: int = 0
    games: int = 1
    players: int = 2
    check: bool = True  # verify every invariant every turn
    policies: tuple[str, ...] = ()  # per seat ("score", "equity", "sim"); one applies to all
    leaves: str | None = None  # leave values by name for "equity" players
    alternate: bool = False  # rotate the seats every other game (who starts alternates)
    model: tuple[float, ...] = ()  # a leave model's parameters (training) instead of leaves
    sim_iterations: int = 100  # for "sim" players: iterations a turn,
    sim_candidates: int = 10  # candidates simulated,
    sim_plies: int = 2  # moves played on,
    sim_rank_by: str = "spread"  # and what they rank by (SIM_RANKS)


MAX_GAMES = 100  # per self-play job


@dataclass(frozen=True, slots=True)
class AnnotateRequest:
    """Annotate one recorded game (GCG text): best plays, rank and points given up."""

    gcg: str
    ruleset: str = "english"
    lexicon: str | None = None
    top: int = 5
    leaves: str | None = None  # leave values by name: rank by equity, report equity given up
    sim_iterations: int = 0  # > 0: also rank each play by simulation (needs leaves)
    sim_candidates: int = 10
    sim_plies: int = 2
    seed: int = 1
    sim_rank_by: str = "spread"  # what the simulated rows rank by (SIM_RANKS)


MAX_ANNOTATE_SIM_ITERATIONS = 2000  # per turn


MAX_GCG = 512 * 1024
MAX_TOP = 50


@dataclass(frozen=True, slots=True)
class SimulateRequest:
    """A share of a Monte Carlo simulation: iterations [first, first + iterations) of
    the candidates numbered in `only` (all when empty) among the top `candidates` plays by
    equity. Any split of a simulation's iterations merges into the same answer."""

    cgp: str
    ruleset: str = "english"
    lexicon: str | None = None
    leaves: str | None = None
    rack: str | None = None  # default: the CGP's player to move
    candidates: int = 15
    plies: int = 2
    seed: int = 1
    first: int = 0
    iterations: int = 100
    only: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Wire:
    """How one request field travels: its msgpack type(s) and, for numbers, its range
    (inclusive); the field's Python default is the default on the wire. Decoding, encoding
    and PROTOCOL.md's table of the kind follow from these, so they cannot drift apart."""

    types: tuple[type, ...]
    low: float | None = None
    high: float | None = None
    doc: str = ""


def wire(types: type | tuple[type, ...], low=None, high=None, doc: str = ""):
    """A dataclass field's Wire (in its metadata)."""
    return {"wire": Wire(types if isinstance(types, tuple) else (types,), low, high, doc)}


# The engine's bounds (engine/endgame.py), restated so that the protocol loads no engine;
# tests/test_endgame.py holds them equal.
MAX_ENDGAME_PLIES = 64


@dataclass(frozen=True, slots=True)
class EndgameRequest:
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
    scoreless: int = field(default=0, metadata=wire(int, 0, 99, "scoreless turns already in a row"))
    first: int = field(default=0, metadata=wire(int, 0, 1 << 20, "first root play searched"))
    last: int | None = field(default=None, metadata=wire(int, 1, 1 << 20, "root plays below this"))
    parts: int = field(default=1, metadata=wire(int, 1, 1024, "split into this many parts"))
    part: int = field(default=0, metadata=wire(int, 0, 1023, "this job's part"))
    floor: int | None = field(
        default=None,
        metadata=wire(int, -(1 << 28), 1 << 28, "a value reached: bound what is worth less"),
    )

    KIND = "endgame"


def _type_names(types: tuple[type, ...]) -> str:
    return "a number" if float in types else " or ".join(_kind_name(t) for t in types)


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True, slots=True)
class PreendgameRequest:
    """The pre-endgame with one tile in the bag (kind "preendgame"): each of the top plays
    by score valued by solving the endgame after every possible draw."""

    cgp: str = field(
        metadata=wire(str, 1, MAX_STRING, "the position (CGP); the mover's rack first")
    )
    ruleset: str = field(default="english", metadata=wire(str, 1, 200, "ruleset name"))
    lexicon: str | None = field(default=None, metadata=wire(str, 1, 200, "lexicon name"))
    rack: str | None = field(default=None, metadata=wire(str, 1, 64, "the rack to move"))
    candidates: int = field(
        default=20, metadata=wire(int, 1, 100, "plays valued, the top by score")
    )
    seconds: float | None = field(
        default=None, metadata=wire((int, float), 0.001, 86_400, "time budget; job_seconds caps it")
    )

    KIND = "preendgame"


def _declared_fields(cls) -> list:
    from dataclasses import fields as dataclass_fields

    return [f for f in dataclass_fields(cls) if "wire" in f.metadata]


def encode_declared(request) -> dict:
    """A declared request as its wire map: the version, the kind, and every field that
    differs from its default."""
    from dataclasses import MISSING

    out: dict = {"v": VERSION, "kind": request.KIND}
    for f in _declared_fields(type(request)):
        value = getattr(request, f.name)
        if f.default is MISSING or value != f.default:
            out[f.name] = value
    return out


def decode_declared(cls, obj: dict):
    """A wire map -> the declared request `cls`, every field checked against its Wire."""
    from dataclasses import MISSING

    known = {"v", "kind"} | {f.name for f in _declared_fields(cls)}
    _no_unknown(obj, known, f"{cls.KIND} request")
    values = {}
    for f in _declared_fields(cls):
        spec: Wire = f.metadata["wire"]
        if f.name not in obj or obj[f.name] is None:
            if f.default is MISSING:
                raise ProtocolError(
                    MISSING_FIELD, f"{cls.KIND} request: field '{f.name}' ({spec.doc}) is missing"
                )
            continue
        value = obj[f.name]
        if not isinstance(value, spec.types) or isinstance(value, bool):
            raise ProtocolError(
                WRONG_TYPE, f"'{f.name}' must be {_type_names(spec.types)}, not {_kind(value)}"
            )
        size = len(value) if isinstance(value, str) else value
        if spec.low is not None and not spec.low <= size <= spec.high:
            what = "characters long" if isinstance(value, str) else "in range"
            raise ProtocolError(
                BAD_VALUE,
                f"'{f.name}' must be {_number(spec.low)}..{_number(spec.high)} {what}, "
                f"not {size!r}",
            )
        values[f.name] = value
    return cls(**values)


def declared_table(cls) -> str:
    """PROTOCOL.md's table of a declared request kind."""
    from dataclasses import MISSING

    rows = ["| field | type | range | default | meaning |", "|---|---|---|---|---|"]
    for f in _declared_fields(cls):
        spec: Wire = f.metadata["wire"]
        kind = _type_names(spec.types)
        span = (
            ""
            if spec.low is None
            else f"{_number(spec.low)}..{_number(spec.high)}"
            + (" chars" if str in spec.types else "")
        )
        default = (
            "required"
            if f.default is MISSING
            else ("nil" if f.default is None else repr(f.default))
        )
        rows.append(f"| `{f.name}` | {kind} | {span} | {default} | {spec.doc} |")
    return "\n".join(rows)


MAX_SIM_ITERATIONS = 10_000  # per job; a simulation is split into many jobs
# The engine's own bounds (engine/simulate.py), restated so that a game server importing
# the protocol loads no engine; tests/test_protocol.py holds the two equal.
MAX_SIM_CANDIDATES = 50
MAX_SIM_PLIES = 6
SIM_RANKS = ("spread", "win")  # mean spread, or the win model's chance given the lead


# ------------------------------------------------------------------- requests
_TOP = {
    "v",
    "kind",
    "ruleset",
    "lexicon",
    "cgp",
    "rows",
    "rack",
    "mode",
    "limit",
    "options",
    "positions",
    "rank",
    "leaves",
}
_POSITION = {"cgp", "rows", "rack", "mode", "limit"}
_OPTIONS = {"breakdown", "exchanges"}


_SELFPLAY = {
    "v",
    "kind",
    "ruleset",
    "lexicon",
    "seed",
    "games",
    "players",
    "check",
    "policies",
    "leaves",
    "alternate",
    "model",
    "sim_iterations",
    "sim_candidates",
    "sim_plies",
    "sim_rank_by",
}
POLICIES = ("score", "equity", "sim", "endgame")  # endgame: equity, then the solver
_ANNOTATE = {
    "v", "kind", "ruleset", "lexicon", "gcg", "top", "leaves",
    "sim_iterations", "sim_candidates", "sim_plies", "seed", "sim_rank_by",
}  # fmt: skip
_SIMULATE = {
    "v", "kind", "ruleset", "lexicon", "leaves", "cgp", "rack", "candidates", "plies",
    "seed", "first", "iterations", "only",
}  # fmt: skip


def decode_request(
    payload: bytes, limits: Limits | None = None
) -> Request | SelfPlayRequest | AnnotateRequest | SimulateRequest:
    """Bytes from the queue -> Request (or SelfPlayRequest), or ProtocolError."""
    return parse_request(unpack(payload), limits or Limits())


def encode_request(
    request: Request | SelfPlayRequest | AnnotateRequest | SimulateRequest | EndgameRequest,
) -> bytes:
    if isinstance(request, EndgameRequest | PreendgameRequest):
        return pack(encode_declared(request))
    if isinstance(request, SimulateRequest):
        out = {
            "v": VERSION,
            "kind": "simulate",
            "ruleset": request.ruleset,
            "cgp": request.cgp,
            "candidates": request.candidates,
            "plies": request.plies,
            "seed": request.seed,
            "first": request.first,
            "iterations": request.iterations,
        }
        for key in ("lexicon", "leaves", "rack"):
            if getattr(request, key) is not None:
                out[key] = getattr(request, key)
        if request.only:
            out["only"] = list(request.only)
        return pack(out)
    if isinstance(request, AnnotateRequest):
        out = {
            "v": VERSION,
            "kind": "annotate",
            "ruleset": request.ruleset,
            "gcg": request.gcg,
            "top": request.top,
        }
        if request.lexicon is not None:
            out["lexicon"] = request.lexicon
        if request.leaves is not None:
            out["leaves"] = request.leaves
        if request.sim_iterations:
            out.update(
                sim_iterations=request.sim_iterations,
                sim_candidates=request.sim_candidates,
                sim_plies=request.sim_plies,
                seed=request.seed,
            )
            if request.sim_rank_by != "spread":
                out["sim_rank_by"] = request.sim_rank_by
        return pack(out)
    if isinstance(request, SelfPlayRequest):
        out = {
            "v": VERSION,
            "kind": "selfplay",
            "ruleset": request.ruleset,
            "seed": request.seed,
            "games": request.games,
            "players": request.players,
            "check": request.check,
        }
        if request.lexicon is not None:
            out["lexicon"] = request.lexicon
        if request.policies:
            out["policies"] = list(request.policies)
        if request.leaves is not None:
            out["leaves"] = request.leaves
        if request.alternate:
            out["alternate"] = True
        if request.model:
            out["model"] = list(request.model)
        if "sim" in request.policies:
            out.update(
                sim_iterations=request.sim_iterations,
                sim_candidates=request.sim_candidates,
                sim_plies=request.sim_plies,
            )
            if request.sim_rank_by != "spread":
                out["sim_rank_by"] = request.sim_rank_by
        return pack(out)
    out: dict[str, Any] = {
        "v": VERSION,
        "kind": "batch" if request.batch else "analyze",
        "ruleset": request.ruleset,
    }
    if request.rank != "score":
        out["rank"] = request.rank
    if request.leaves is not None:
        out["leaves"] = request.leaves
    if request.lexicon is not None:
        out["lexicon"] = request.lexicon
    opts = {k: True for k in _OPTIONS if getattr(request.options, k)}
    if opts:
        out["options"] = opts
    if request.batch:
        out["positions"] = [_position_map(p) for p in request.positions]
    else:
        (position,) = request.positions
        out.update(_position_map(position))
    payload = pack(out)
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(
            PAYLOAD_TOO_LARGE, f"request is {len(payload)} bytes; the limit is {MAX_PAYLOAD}"
        )
    return payload


def _position_map(p: Position) -> dict:
    out: dict[str, Any] = {}
    if p.cgp is not None:
        out["cgp"] = p.cgp
    if p.rows is not None:
        out["rows"] = list(p.rows)
    if p.rack is not None:
        out["rack"] = p.rack
    if p.mode != "both":
        out["mode"] = p.mode
    if p.limit is not None:
        out["limit"] = p.limit
    return out


def parse_request(obj: Any, limits: Limits | None = None) -> Request:
    """A decoded msgpack object -> Request, checking every field against `limits`."""
    limits = limits or Limits()
    if not isinstance(obj, dict):
        raise ProtocolError(NOT_A_MAP, f"a request is a map, not {_kind(obj)}")
    if "v" not in obj:
        raise ProtocolError(MISSING_FIELD, "field 'v' (the protocol version) is missing")
    version = obj["v"]
    if not isinstance(version, int) or isinstance(version, bool) or version != VERSION:
        raise ProtocolError(
            UNSUPPORTED_VERSION, f"protocol version {version!r} is not supported; use {VERSION}"
        )
    kind = _get(obj, "kind", str, "analyze")
    if kind == PreendgameRequest.KIND:
        return decode_declared(PreendgameRequest, obj)
    if kind == EndgameRequest.KIND:
        request = decode_declared(EndgameRequest, obj)
        if request.part >= request.parts:
            raise ProtocolError(
                BAD_VALUE, f"'part' must be below 'parts' ({request.parts}), not {request.part}"
            )
        return request
    if kind == "selfplay":
        return _selfplay(obj)
    if kind == "simulate":
        return _simulate(obj)
    if kind == "annotate":
        return _annotate(obj)
    _no_unknown(obj, _TOP, "request")
    if kind not in ("analyze", "batch"):
        raise ProtocolError(
            BAD_VALUE,
            "'kind' must be one of 'analyze', 'batch', 'selfplay', 'simulate', 'annotate', "
            f"'endgame', 'preendgame', not {kind!r}",
        )
    ruleset = _string(obj, "ruleset", "english")
    lexicon = _get(obj, "lexicon", str, None)
    options = _options(_get(obj, "options", dict, {}))
    rank = _get(obj, "rank", str, "score")
    if rank not in ("score", "equity"):
        raise ProtocolError(BAD_VALUE, f"'rank' must be 'score' or 'equity', not {rank!r}")
    leaves = _get(obj, "leaves", str, None)
    if leaves is not None and rank != "equity":
        raise ProtocolError(BAD_VALUE, "'leaves' is used only with rank 'equity'")
    extra = {"rank": rank, "leaves": leaves}
    if kind == "batch":
        for key in _POSITION:
            if key in obj and key not in ("mode", "limit"):
                raise ProtocolError(UNKNOWN_FIELD, f"a batch request gives {key!r} per position")
        raw = _get(obj, "positions", list, None)
        if raw is None:
            raise ProtocolError(MISSING_FIELD, "a batch request needs 'positions'")
        if len(raw) > limits.batch:
            raise ProtocolError(
                BATCH_TOO_LARGE, f"{len(raw)} positions; a batch here holds at most {limits.batch}"
            )
        defaults = {k: obj[k] for k in ("mode", "limit") if k in obj}
        positions = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise ProtocolError(WRONG_TYPE, f"positions[{i}] must be a map, not {_kind(item)}")
            _no_unknown(item, _POSITION, f"positions[{i}]")
            positions.append(_position({**defaults, **item}, f"positions[{i}]", limits))
        return Request(ruleset, lexicon, tuple(positions), True, options, **extra)
    if "positions" in obj:
        raise ProtocolError(UNKNOWN_FIELD, "'positions' belongs to batch requests (kind 'batch')")
    return Request(ruleset, lexicon, (_position(obj, "request", limits),), False, options, **extra)


def _annotate(obj: dict) -> AnnotateRequest:
    _no_unknown(obj, _ANNOTATE, "annotate request")
    gcg = _required_text(obj, "gcg", MAX_GCG, "an annotate request", "the game record")
    top = _get(obj, "top", int, 5)
    if not 0 <= top <= MAX_TOP:
        raise ProtocolError(BAD_VALUE, f"'top' must be 0..{MAX_TOP}, not {top}")
    sim = _ranged(
        obj,
        sim_iterations=(0, MAX_ANNOTATE_SIM_ITERATIONS, 0),
        sim_candidates=(1, MAX_SIM_CANDIDATES, 10),
        sim_plies=(1, MAX_SIM_PLIES, 2),
        seed=(0, 2**63 - 1, 1),
    )
    leaves = _get(obj, "leaves", str, None)
    if sim["sim_iterations"] and leaves is None:
        raise ProtocolError(
            BAD_VALUE, "'sim_iterations' needs 'leaves': the simulated players rank by equity"
        )
    return AnnotateRequest(
        gcg,
        _string(obj, "ruleset", "english"),
        _get(obj, "lexicon", str, None),
        top,
        leaves,
        **sim,
        sim_rank_by=_sim_rank_by(obj),
    )


def _required_text(obj: dict, key: str, limit: int, where: str, what: str) -> str:
    text = _get(obj, key, str, None)
    if text is None:
        raise ProtocolError(MISSING_FIELD, f"{where} needs '{key}' ({what})")
    if len(text) > limit:
        raise ProtocolError(BAD_VALUE, f"'{key}' is longer than {limit} characters")
    return text


def _ranged(obj: dict, **ranges: tuple[int, int, int]) -> dict[str, int]:
    """Whole-number fields, each with its (lowest, highest, default)."""
    values = {}
    for key, (low, high, default) in ranges.items():
        values[key] = _get(obj, key, int, default)
        if not low <= values[key] <= high:
            raise ProtocolError(BAD_VALUE, f"'{key}' must be {low}..{high}, not {values[key]}")
    return values


def _simulate(obj: dict) -> SimulateRequest:
    _no_unknown(obj, _SIMULATE, "simulate request")
    cgp = _required_text(obj, "cgp", MAX_STRING, "a simulate request", "the position")
    rack = _get(obj, "rack", str, None)
    if rack is not None and len(rack) > 64:
        raise ProtocolError(BAD_VALUE, "'rack' is longer than 64 characters")
    values = _ranged(
        obj,
        candidates=(1, MAX_SIM_CANDIDATES, 15),
        plies=(1, MAX_SIM_PLIES, 2),
        seed=(0, 2**63 - 1, 1),
        first=(0, 2**40, 0),
        iterations=(1, MAX_SIM_ITERATIONS, 100),
    )
    only = _get(obj, "only", list, [])
    if len(only) > MAX_SIM_CANDIDATES or not all(
        isinstance(c, int) and not isinstance(c, bool) and 0 <= c < values["candidates"]
        for c in only
    ):
        raise ProtocolError(
            BAD_VALUE, f"'only' must list candidate numbers 0..{values['candidates'] - 1}"
        )
    return SimulateRequest(
        cgp,
        _string(obj, "ruleset", "english"),
        _get(obj, "lexicon", str, None),
        _get(obj, "leaves", str, None),
        rack,
        only=tuple(sorted(set(only))),
        **values,
    )


def endgame_result(
    value: int,
    moves: list[list],
    depth: int,
    exact: bool,
    nodes: int,
    seconds: float,
    root: int,
    below_floor: bool,
    no_plays: bool,
    total_us: float,
) -> dict:
    """An endgame: `value` the spread the side to move gains until the end; `moves` the
    line as [notation, score] pairs (a pass: "-", 0); `root` the line's first play by its
    number in the root's canonical order; with a split, `below_floor` when every play the
    job searched is worth less than the floor (value then bounds them) and `no_plays` when
    its part held none."""
    return {
        "v": VERSION,
        "ok": True,
        "value": value,
        "moves": moves,
        "depth": depth,
        "exact": exact,
        "nodes": nodes,
        "seconds": round(seconds, 6),
        "root": root,
        "below_floor": below_floor,
        "no_plays": no_plays,
        "timings": _total(total_us),
    }


def preendgame_result(
    plays: list[list], unseen: str, exact: bool, nodes: int, seconds: float, total_us: float
) -> dict:
    """A pre-endgame: `plays` best first, each [notation, score, mean, win rate, draws],
    draws as [tile, count, value] (value: the spread the mover gains to the end after
    drawing that tile); `unseen`: the opponent's rack and the bag's tile, as the mover
    sees them."""
    return {
        "v": VERSION,
        "ok": True,
        "plays": plays,
        "unseen": unseen,
        "exact": exact,
        "nodes": nodes,
        "seconds": round(seconds, 6),
        "timings": _total(total_us),
    }


def simulate_result(
    candidates: list[list], only: Sequence[int], values: list, total_us: float, unplayed: list
) -> dict:
    """`candidates`: [notation, score, equity] of every candidate; `values[k]`: the values
    of candidate only[k], one per iteration, in iteration order; `unplayed[k]` beside them:
    the tiles not on the board when each playout stopped (0: the game was over)."""
    return {
        "v": VERSION,
        "ok": True,
        "candidates": candidates,
        "only": list(only),
        "values": values,
        "unplayed": unplayed,
        "timings": _total(total_us),
    }


def _selfplay(obj: dict) -> SelfPlayRequest:
    _no_unknown(obj, _SELFPLAY, "selfplay request")
    seed = _get(obj, "seed", int, 0)
    games = _get(obj, "games", int, 1)
    players = _get(obj, "players", int, 2)
    check = obj.get("check", True)
    if not isinstance(check, bool):
        raise ProtocolError(WRONG_TYPE, f"'check' must be true or false, not {_kind(check)}")
    if not 0 <= seed < 2**63:
        raise ProtocolError(BAD_VALUE, "'seed' must be a whole number from 0 to 2**63-1")
    if not 1 <= games <= MAX_GAMES:
        raise ProtocolError(BAD_VALUE, f"'games' must be 1..{MAX_GAMES} per job, not {games}")
    if not 2 <= players <= 4:
        raise ProtocolError(BAD_VALUE, f"'players' must be 2..4, not {players}")
    policies = _get(obj, "policies", list, [])
    if policies and (len(policies) not in (1, players) or any(x not in POLICIES for x in policies)):
        raise ProtocolError(
            BAD_VALUE,
            f"'policies' must be 1 or {players} of {', '.join(POLICIES)}, not {policies!r}",
        )
    alternate = obj.get("alternate", False)
    if not isinstance(alternate, bool):
        raise ProtocolError(WRONG_TYPE, "'alternate' must be true or false")
    model = _get(obj, "model", list, [])
    if len(model) > 2 * 64 or not all(
        isinstance(x, int | float) and not isinstance(x, bool) and abs(x) < 1e6 for x in model
    ):
        raise ProtocolError(
            BAD_VALUE, "'model' must be at most 128 numbers (leave model parameters)"
        )
    sim = _ranged(
        obj,
        sim_iterations=(1, MAX_ANNOTATE_SIM_ITERATIONS, 100),
        sim_candidates=(1, MAX_SIM_CANDIDATES, 10),
        sim_plies=(1, MAX_SIM_PLIES, 2),
    )
    return SelfPlayRequest(
        _string(obj, "ruleset", "english"),
        _get(obj, "lexicon", str, None),
        seed,
        games,
        players,
        check,
        tuple(policies),
        _get(obj, "leaves", str, None),
        alternate,
        tuple(float(x) for x in model),
        **sim,
        sim_rank_by=_sim_rank_by(obj),
    )


def _position(obj: dict, where: str, limits: Limits) -> Position:
    cgp = _get(obj, "cgp", str, None)
    rows = _get(obj, "rows", list, None)
    if (cgp is None) == (rows is None):
        raise ProtocolError(MISSING_FIELD, f"{where} needs exactly one of 'cgp' and 'rows'")
    if cgp is not None and len(cgp) > MAX_STRING:
        raise ProtocolError(BAD_VALUE, f"{where}: 'cgp' is longer than {MAX_STRING} characters")
    if rows is not None:
        if len(rows) > 64 or not all(isinstance(r, str) and len(r) <= 64 for r in rows):
            raise ProtocolError(
                WRONG_TYPE, f"{where}: 'rows' must be up to 64 strings of up to 64 characters"
            )
        rows = tuple(rows)
    rack = _get(obj, "rack", str, None)
    if rack is not None and len(rack) > 64:
        raise ProtocolError(BAD_RACK, f"{where}: a rack of {len(rack)} characters is too long")
    mode = _get(obj, "mode", str, "both")
    if mode not in MODES:
        raise ProtocolError(
            BAD_VALUE, f"{where}: 'mode' must be one of {', '.join(MODES)}, not {mode!r}"
        )
    limit = _get(obj, "limit", int, None)
    if limit is not None and (isinstance(limit, bool) or limit < 0):
        raise ProtocolError(BAD_VALUE, f"{where}: 'limit' must be a whole number >= 0")
    if limit is not None and limits.moves is not None and limit > limits.moves:
        raise ProtocolError(
            LIMIT_TOO_LARGE,
            f"{where}: 'limit' {limit} is over this server's cap of {limits.moves} moves a "
            "position ('total' still counts every play)",
        )
    return Position(cgp, rows, rack, mode, limit)


def _options(obj: dict) -> Options:
    _no_unknown(obj, _OPTIONS, "options")
    values = {}
    for key in _OPTIONS:
        value = obj.get(key, False)
        if not isinstance(value, bool):
            raise ProtocolError(
                WRONG_TYPE, f"options.{key} must be true or false, not {_kind(value)}"
            )
        values[key] = value
    return Options(**values)


def _sim_rank_by(obj: dict) -> str:
    rank = _get(obj, "sim_rank_by", str, "spread")
    if rank not in SIM_RANKS:
        raise ProtocolError(
            BAD_VALUE,
            f"'sim_rank_by' must be one of {', '.join(SIM_RANKS)}, not {rank[:40]!r}",
        )
    return rank


def _string(obj: dict, key: str, default: str) -> str:
    value = _get(obj, key, str, default)
    if len(value) > 200:
        raise ProtocolError(BAD_VALUE, f"'{key}' is longer than 200 characters")
    return value


def _get(obj: dict, key: str, kind: type, default):
    if key not in obj or obj[key] is None:
        return default
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProtocolError(WRONG_TYPE, f"'{key}' must be {_kind_name(kind)}, not {_kind(value)}")
    return value


def _no_unknown(obj: dict, known: set[str], where: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise ProtocolError(UNKNOWN_FIELD, f"{where} has unknown field(s): {', '.join(unknown)}")


def _kind(value: Any) -> str:
    return {
        dict: "a map",
        list: "an array",
        str: "a string",
        bytes: "binary data",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "nil",
    }.get(type(value), type(value).__name__)


def _kind_name(kind: type) -> str:
    return {
        str: "a string",
        int: "a whole number",
        float: "a number",
        list: "an array",
        dict: "a map",
    }[kind]


# -------------------------------------------------------------------- results
# ---------------------------------------------------------------------- results
# Every result map is built here, beside the requests (PROTOCOL.md, "Result"); readers
# use the functions below rather than string keys of their own.
def error_result(code: str, message: str) -> dict:
    return {"v": VERSION, "ok": False, "error": {"code": code, "message": message}}


def position_error(code: str, message: str) -> dict:
    """One failed position of a batch (the others are answered)."""
    return {"ok": False, "error": {"code": code, "message": message}}


def position_result(
    entries: list,
    generate_us: float,
    total: int | None = None,
    truncated: bool = False,
    equities: Sequence[float] | None = None,
) -> dict:
    """One position's moves (compact arrays, best first); `total` only when known."""
    out: dict = {"ok": True, "moves": entries, "timings": {"generate_us": round(generate_us, 1)}}
    if total is not None:
        out["total"] = total
    if truncated:
        out["truncated"] = True
    if equities is not None:
        out["equities"] = [round(e, 3) for e in equities]
    return out


def analysis_result(results: list[dict], batch: bool, total_us: float) -> dict:
    """A request's answer: a batch's `results`, or its one position's fields at the top."""
    if batch:
        return {"v": VERSION, "ok": True, "results": results, "timings": _total(total_us)}
    single = dict(results[0])
    single["timings"] = {**single.get("timings", {}), **_total(total_us)}
    return {"v": VERSION, **single}


def selfplay_game(
    seed: int,
    policies: Sequence[str],
    scores: Sequence[int],
    turns: int,
    end: str,
    plays: int,
    move_seconds: Sequence[float],
    gcg: str,
) -> dict:
    return {
        "seed": seed,
        "policies": list(policies),
        "scores": list(scores),
        "turns": turns,
        "end": end,
        "plays": plays,
        "move_us": [round(s * 1e6, 1) for s in move_seconds],
        "gcg": gcg,
    }


def selfplay_result(games: list[dict], total_us: float) -> dict:
    return {"v": VERSION, "ok": True, "games": games, "timings": _total(total_us)}


def annotate_result(annotation: dict, total_us: float) -> dict:
    return {"v": VERSION, "ok": True, "annotation": annotation, "timings": _total(total_us)}


def _total(total_us: float) -> dict:
    return {"total_us": round(total_us, 1)}


def games_of(result: dict) -> list[dict]:
    """A self-play result's games."""
    return list(result.get("games", ()))


def annotation_of(result: dict) -> dict:
    """An annotate result's annotation."""
    return result["annotation"]


def move_entry(move, breakdown: Mapping | None = None) -> list:
    """A move as a compact array: notation, score, row, col, direction, word, placed
    [[row, col, letter], ...], and with options.breakdown a map of its words and bingo."""
    entry = entry_from_fields(move.fields())
    if breakdown is not None:
        entry.append(dict(breakdown))
    return entry


def entry_from_fields(fields: tuple) -> list:
    """Move.fields()'s tuple as the compact array (placed squares as arrays)."""
    notation, score, row, col, direction, word, placed = fields
    return [notation, score, row, col, direction, word, [list(p) for p in placed]]


MOVE_FIELDS = ("notation", "score", "row", "col", "direction", "word", "placed")


def move_dict(entry: list) -> dict:
    """A compact move array back as a map (what `anchor analyze --json` prints)."""
    out = dict(zip(MOVE_FIELDS, entry[:7], strict=True))
    if len(entry) > 7:
        out["breakdown"] = entry[7]
    return out


def move_dicts(result: dict) -> list[dict]:
    """A single-position result's moves as maps, with their equities when ranked so."""
    moves = [move_dict(e) for e in result["moves"]]
    for move, equity in zip(moves, result.get("equities", ()), strict=False):
        move["equity"] = equity
    return moves


def check_result(obj: Any) -> dict:
    """A decoded result map, checked for the fields every result has."""
    if not isinstance(obj, dict) or obj.get("v") != VERSION or not isinstance(obj.get("ok"), bool):
        raise ProtocolError(MALFORMED, f"not an Anchor result: {str(obj)[:200]}")
    return obj


# --------------------------------------------------------------------- packing
def pack(obj: Any) -> bytes:
    """msgpack, refusing (TypeError) any value it cannot represent exactly."""
    return msgpack.packb(obj, use_bin_type=True, strict_types=False)


def unpack(payload: Any) -> Any:
    """Strict, bounded msgpack decoding of one object."""
    if not isinstance(payload, bytes | bytearray | memoryview):
        raise ProtocolError(WRONG_TYPE, f"a payload is binary data, not {_kind(payload)}")
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(
            PAYLOAD_TOO_LARGE, f"payload is {len(payload)} bytes; the limit is {MAX_PAYLOAD}"
        )
    if not payload:
        raise ProtocolError(MALFORMED, "payload is empty")
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_str_len=MAX_PAYLOAD,
            max_bin_len=MAX_PAYLOAD,
            max_array_len=MAX_PAYLOAD,  # bounded by the payload; batch size is checked after
            max_map_len=64,
            max_ext_len=0,
        )
    except UnicodeDecodeError as exc:
        raise ProtocolError(
            BAD_ENCODING, f"a string is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    except msgpack.ExtraData:
        raise ProtocolError(MALFORMED, "payload holds more than one msgpack object") from None
    except msgpack.StackError:
        raise ProtocolError(MALFORMED, "payload is nested too deeply") from None
    except (ValueError, msgpack.FormatError, msgpack.UnpackException) as exc:
        text = str(exc) or type(exc).__name__
        if "map key" in text:
            raise ProtocolError(MALFORMED, f"map keys must be strings ({text})") from None
        raise ProtocolError(MALFORMED, f"payload is not valid msgpack ({text})") from None
