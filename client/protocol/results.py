"""The wire protocol's results: one declared dataclass a kind of answer (PROTOCOL.md,
"Result"). A worker builds them and sends `to_wire`; a reader turns what it got back into
one with `read_result` and uses its fields. Moves travel as compact arrays (MOVE_FIELDS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from .wire import MALFORMED, VERSION, Declared, ProtocolError, Wire, wire

MOVE_FIELDS = ("notation", "score", "row", "col", "direction", "word", "placed")
_MOVES_DOC = (
    "ranked best first; each `[notation, score, row, col, direction, word, placed]`, "
    "`placed` as `[row, col, letter]`s, and with `options.breakdown` an eighth element "
    '`{"words": [[word, coordinate, score], ...], "bingo": int}`'
)
_NUMBER = (int, float)


@dataclass(frozen=True, slots=True)
class Timings(Declared):
    generate_us: float | None = field(
        default=None, metadata=wire(_NUMBER, doc="move generation, microseconds")
    )
    total_us: float | None = field(
        default=None, metadata=wire(_NUMBER, doc="the whole request, microseconds")
    )


@dataclass(frozen=True, slots=True)
class Failure(Declared):
    """A request (or one position of a batch) that was refused: `ok` false."""

    code: str = field(metadata=wire(str, doc="one of the error codes below"))
    message: str = field(metadata=wire(str, doc="what is wrong, for a person"))

    ok: ClassVar[bool] = False

    def to_entry(self) -> dict:
        return {"ok": False, "error": self.to_map()}


class Result(Declared):
    """An answer of one request kind: `ok` true, its fields, and `timings`."""

    __slots__ = ()
    ok: ClassVar[bool] = True

    def to_entry(self) -> dict:
        """The fields, `ok` first (a batch's entry, or the top of a result)."""
        return {"ok": True, **self.to_map()}

    def to_wire(self, total_us: float) -> dict:
        """The result map: the version, the fields, and `timings` with the request's time."""
        out = {"v": VERSION, **self.to_entry()}
        out["timings"] = {**out.get("timings", {}), "total_us": round(total_us, 1)}
        return out


@dataclass(frozen=True, slots=True)
class Analysis(Result):
    """One position's plays (kind "analyze", or an entry of a batch)."""

    moves: list = field(default_factory=list, metadata=wire(list, doc=_MOVES_DOC))
    total: int | None = field(
        default=None,
        metadata=wire(int, doc="every legal play; present when the search looked at them all"),
    )
    truncated: bool | None = field(
        default=None,
        metadata=wire(bool, doc="present (true) when the server's `--max-moves` cut the list"),
    )
    equities: list | None = field(
        default=None,
        metadata=wire(list, doc="rank `equity` only: each move's equity, beside `moves`"),
    )
    timings: Timings = field(default_factory=Timings, metadata=wire(Timings, doc="a map"))

    def move_dicts(self) -> list[dict]:
        """The moves as maps, with their equities when ranked so."""
        moves = [move_dict(e) for e in self.moves]
        for move, equity in zip(moves, self.equities or (), strict=False):
            move["equity"] = equity
        return moves


@dataclass(frozen=True, slots=True)
class Batch(Result):
    """A batch's answer: one entry a position, in order; a bad position fails alone."""

    results: tuple[Analysis | Failure, ...] = field(
        default=(), metadata=wire(list, doc="an `analyze` result or a failure a position")
    )

    def to_entry(self) -> dict:
        return {"ok": True, "results": [r.to_entry() for r in self.results]}

    @classmethod
    def read(cls, obj: dict) -> Batch:
        return cls(tuple(_entry(r, Analysis) for r in obj.get("results", ())))


@dataclass(frozen=True, slots=True)
class Game(Declared):
    """One self-played game."""

    seed: int = field(metadata=wire(int, doc="its seed"))
    policies: list = field(metadata=wire(list, doc="the players' policies, as seated"))
    scores: list = field(metadata=wire(list, doc="final scores, as seated"))
    turns: int = field(metadata=wire(int, doc="turns played"))
    end: str = field(metadata=wire(str, doc="`out` or `scoreless`"))
    plays: int = field(metadata=wire(int, doc="plays generated"))
    move_us: list = field(metadata=wire(list, doc="each move decision's time, microseconds"))
    gcg: str = field(metadata=wire(str, doc="the record (empty when `records` was false)"))


@dataclass(frozen=True, slots=True)
class SelfPlayResult(Result):
    games: tuple[Game, ...] = field(
        default=(), metadata=wire(list, doc="a map a game", items=Wire((Game,)))
    )


@dataclass(frozen=True, slots=True)
class AnnotateResult(Result):
    annotation: dict = field(
        default_factory=dict,
        metadata=wire(dict, doc="`players`, `turns`, `summary`, `lexicon` (PROTOCOL.md, annotate)"),
    )

    def analysed_turns(self) -> list[dict]:
        return [t for t in self.annotation.get("turns", ()) if t.get("analysed")]


@dataclass(frozen=True, slots=True)
class SimulateResult(Result):
    candidates: list = field(
        default_factory=list,
        metadata=wire(list, doc="`[notation, score, equity]` each, best static equity first"),
    )
    only: list = field(default_factory=list, metadata=wire(list, doc="the candidates simulated"))
    values: list = field(
        default_factory=list, metadata=wire(list, doc="for each of `only`, a value an iteration")
    )
    unplayed: list = field(
        default_factory=list,
        metadata=wire(list, doc="beside each value, the tiles not on the board when it stopped"),
    )
    summary: list = field(
        default_factory=list,
        metadata=wire(
            list,
            doc="with `pool`: `[notation, score, equity, iterations, mean, stdev, win_rate, "
            "pruned]` each, best first",
        ),
    )
    complete: bool = field(
        default=True,
        metadata=wire(
            bool, doc="with `pool`: false when the job's time ran out first (send it again)"
        ),
    )
    merged: int = field(
        default=0, metadata=wire(int, doc="with `pool`: the iterations of the rounds merged")
    )
    stopped: bool = field(
        default=False,
        metadata=wire(
            bool, doc="with `pool`: the pool's stop mark was set (the simulation was given up)"
        ),
    )
    inferred: dict | None = field(
        default=None,
        metadata=wire(
            dict, doc="with an inference: what it found (as `infer` answers, the 5 likeliest "
            "leaves); `empty` true: no rack explains the move, the racks were drawn uniformly",
        ),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class EndgameResult(Result):
    value: int = field(metadata=wire(int, doc="the spread the side to move gains to the end"))
    moves: list = field(metadata=wire(list, doc="the line, `[notation, score]` each; `-` a pass"))
    depth: int = field(metadata=wire(int, doc="plies of the deepest search completed"))
    exact: bool = field(metadata=wire(bool, doc="the value is proven"))
    nodes: int = field(metadata=wire(int, doc="positions searched"))
    seconds: float = field(metadata=wire(_NUMBER, doc="time searched"))
    root: int = field(
        default=0, metadata=wire(int, doc="the line's first play, by canonical number")
    )
    below_floor: bool = field(
        default=False, metadata=wire(bool, doc="a split: every play searched is below `floor`")
    )
    no_plays: bool = field(default=False, metadata=wire(bool, doc="a split: its part held none"))
    parts: int = field(
        default=1, metadata=wire(int, doc="the jobs merged into this answer (by the client)")
    )

    def to_entry(self) -> dict:  # every field, defaults too: readers switch on them
        return {"ok": True, **{name: getattr(self, name) for name, _, _ in self.wire_fields()}}


@dataclass(frozen=True, slots=True)
class PreendgameResult(Result):
    plays: list = field(metadata=wire(list, doc="best first: a map each (PROTOCOL.md, preendgame)"))
    unseen: str = field(metadata=wire(str, doc="the opponent's rack and the bag's tiles"))
    bag: int = field(metadata=wire(int, doc="tiles in the bag"))
    exact: bool = field(metadata=wire(bool, doc="every play's endgames solved to the end"))
    nodes: int = field(metadata=wire(int, doc="endgame positions searched"))
    solves: int = field(metadata=wire(int, doc="endgames solved"))
    seconds: float = field(metadata=wire(_NUMBER, doc="time searched"))
    stages: list = field(metadata=wire(list, doc="`[plies, plays valued, seconds]` a stage run"))
    budget_hit: bool = field(
        metadata=wire(bool, doc="time ran out: the last stage finished stands")
    )


@dataclass(frozen=True, slots=True)
class InferResult(Result):
    inference: dict = field(
        default_factory=dict,
        metadata=wire(dict, doc="`kept`, `leaves`, `thrown`, `racks`, counts (PROTOCOL.md, infer)"),
    )
    part: dict | None = field(
        default=None,
        metadata=wire(dict, doc="with `parts` > 1 (`inference` empty): this part's racks, raw"),
    )


RESULTS: dict[str, type[Result]] = {
    "analyze": Analysis,
    "batch": Batch,
    "selfplay": SelfPlayResult,
    "annotate": AnnotateResult,
    "simulate": SimulateResult,
    "endgame": EndgameResult,
    "preendgame": PreendgameResult,
    "infer": InferResult,
}
R = TypeVar("R", bound=Result)


def check_result(obj: Any) -> dict:
    """A decoded result map, checked for the fields every result has."""
    if not isinstance(obj, dict) or obj.get("v") != VERSION or not isinstance(obj.get("ok"), bool):
        raise ProtocolError(MALFORMED, f"not an Anchor result: {str(obj)[:200]}")
    return obj


def read_result(obj: Any, kind: type[R]) -> R | Failure:
    """A result map as the answer `kind` (Analysis, EndgameResult, ...) or a Failure."""
    return _entry(check_result(obj), kind)


def answer(obj: Any, kind: type[R]) -> R:
    """read_result for a reader that stops at a failure: ProtocolError(code, message)."""
    found = read_result(obj, kind)
    if isinstance(found, Failure):
        raise ProtocolError(found.code, found.message)
    return found


def _entry(obj: dict, kind: type[R]) -> R | Failure:
    if not obj.get("ok"):
        error = obj.get("error") or {}
        return Failure(str(error.get("code", MALFORMED)), str(error.get("message", "")))
    try:
        return kind.read(obj)
    except (TypeError, KeyError, AttributeError) as exc:
        raise ProtocolError(MALFORMED, f"not a {kind.__name__} result: {exc}") from None


def move_dict(entry: list) -> dict:
    """A compact move array back as a map (what `anchor analyze --json` prints)."""
    out = dict(zip(MOVE_FIELDS, entry[:7], strict=True))
    if len(entry) > 7:
        out["breakdown"] = entry[7]
    return out


def move_dicts(result: dict) -> list[dict]:
    """A single-position result map's moves as maps, with their equities when ranked so."""
    return answer(result, Analysis).move_dicts()
