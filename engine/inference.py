"""Rack inference: what the player who just moved probably kept.

A play says something about the rack it came from: someone who scored 18 with two tiles
and kept five almost never kept a rack that had a bingo. Every rack the unseen tiles allow
(the tiles played plus the rest of a rack) is tried on the board before the play, and kept
when no move from it is worth more, by equity, than the play made plus a margin (MAGPIE's
`infer` and its default margin of 5 points). An exchange of N tiles is explained by a rack
whose best move is an exchange of N (what it keeps is then known) or from which nothing is
worth more than the margin. Each rack is weighted by the ways it can be drawn from the
unseen tiles. The search is C (infer.h): one best-first search a rack, stopped as soon as
a play beats the margin, racks spread over threads.

Equities are score plus leave value (the leave graph of the player inferred), compared in
thousandths of a point, each leave rounded on its own, as MAGPIE compares them. Where the
rules differ from MAGPIE's (its opening-move placement penalties; whether an exchange was
allowed near the end of the bag) this module follows the game: an exchange only when the
bag held the ruleset's minimum before the play.
"""

from __future__ import annotations

import heapq
import math
import random
from array import array
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate

from .board import Board, cell_letter, letter_cell, square_label
from .errors import InputError, WorkLimitError
from .leaves import Leaves
from .legality import check_connected, unseen_counts
from .notation import Play, format_rack, parse_coordinate, parse_play, parse_rack
from .rules import Ruleset
from .scoring import score_play, validate_play

MARGIN = 5.0  # points: MAGPIE's default equity margin
MAX_MARGIN = 1000.0
MAX_RACKS = 5_000_000  # racks tried at most (an exchange from a full English bag: 3.2 million)
MAX_THREADS = 64
TOP = 15  # leaves listed, most likely first
_TALLIES = ("leave", "thrown", "rack")
_MAX_RACK = 16  # infer.h's MAX_RACK: the histogram's stride
_CHUNK = 16  # infer.h's INFER_CHUNK: racks dealt to a part at a time


@dataclass(frozen=True, slots=True)
class LetterOdds:
    """One letter of the racks that explain the move: `chances[k-1]`, the chance they hold
    at least k of it; `random`, the same for a rack drawn without reading the move;
    `draws` and `racks`, how many of them (weighted by draws, and one each)."""

    letter: str
    mean: float
    chances: tuple[float, ...]
    random: tuple[float, ...]
    draws: tuple[int, ...]
    racks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Tally:
    """The racks (or leaves, or tiles thrown) that explain the move: `draws` ways in all,
    `racks` of them, and each letter's odds (most likely letter first)."""

    draws: int
    racks: int
    letters: tuple[LetterOdds, ...]

    def odds(self, letter: str) -> LetterOdds | None:
        return next((o for o in self.letters if o.letter == letter), None)


@dataclass(frozen=True, slots=True)
class Kept:
    """A leave the player may have kept, its chance and its value (and, after an exchange,
    the tiles thrown back with it)."""

    leave: str
    chance: float
    draws: int
    value: float
    thrown: str = ""


@dataclass(frozen=True, slots=True)
class Inference:
    """What the racks that explain one move say. `kept`: the leaves (plays) or the tiles
    kept (exchanges, from the racks whose best move is that exchange, as MAGPIE tallies
    them); after an exchange also `thrown` and `racks` (every rack that explains it; a
    simulation draws from all of them, explaining()). `empty`: no rack explains it
    (a phony, a mistake, a leave graph the player does not use): simulations then draw
    the opponent's rack as if nothing were known. `known`: the bag was empty before the
    move, so the rack was the unseen tiles, nothing inferred. `phony`: the play's words the
    lexicon does not hold (inferred all the same: a phony's maker judged it worth most)."""

    move: str
    score: int
    exchanged: int
    margin: float
    unseen: int
    tried: int
    searches: int
    kept: Tally
    leaves: tuple[Kept, ...]
    thrown: Tally | None = None
    racks: Tally | None = None
    known: bool = False
    phony: tuple[str, ...] = ()
    _tiles: bytes = field(default=b"", repr=False, compare=False)
    _width: int = field(default=0, repr=False, compare=False)
    _cumulative: array = field(default_factory=lambda: array("Q"), repr=False, compare=False)

    @property
    def explained(self) -> Tally:
        """Every rack that explains the move: the leaves after a play, the whole racks
        after an exchange (of which `kept` tallies those whose best move it was)."""
        return self.racks or self.kept

    @property
    def empty(self) -> bool:
        """No rack explains the move."""
        return self.explained.draws == 0

    def sample(self, rng: random.Random) -> tuple[int, ...]:
        """A leave (tile numbers) drawn with its chance; () when the inference is empty."""
        if self.empty or not self._cumulative:
            return ()
        i = bisect_right(self._cumulative, rng.randrange(self._cumulative[-1]))
        return tuple(self._tiles[i * self._width : (i + 1) * self._width])

    def explaining(self) -> list[tuple[tuple[int, ...], int]]:
        """Every leave (tile numbers, ascending, blank 0) that explains the move and the ways
        it is drawn, in the order tried; after an exchange, what each rack that explains it
        kept (the exchange made when it was the rack's best move, else the rack's best
        exchange of that many tiles: a leave once for each rack). What `sample` draws."""
        width, tiles, cumulative = self._width, self._tiles, self._cumulative
        before = [0, *cumulative[:-1]]
        return [
            (tuple(tiles[i * width : (i + 1) * width]), cumulative[i] - before[i])
            for i in range(len(cumulative))
        ]

    def to_dict(self, top: int | None = None) -> dict:
        """The inference as plain values (the protocol's and the report's)."""
        return {
            "move": self.move,
            "score": self.score,
            "exchanged": self.exchanged,
            "margin": self.margin,
            "unseen": self.unseen,
            "tried": self.tried,
            "searches": self.searches,
            "empty": self.empty,
            "known": self.known,
            "phony": list(self.phony),
            "kept": _tally_dict(self.kept),
            "thrown": _tally_dict(self.thrown) if self.thrown else None,
            "racks": _tally_dict(self.racks) if self.racks else None,
            "leaves": [
                {
                    "leave": k.leave,
                    "chance": k.chance,
                    "draws": k.draws,
                    "value": k.value,
                    "thrown": k.thrown,
                }
                for k in self.leaves[:top]
            ],  # fmt: skip
        }


def _tally_dict(t: Tally) -> dict:
    return {
        "draws": t.draws,
        "racks": t.racks,
        "letters": [
            {
                "letter": o.letter,
                "mean": o.mean,
                "chances": list(o.chances),
                "random": list(o.random),
            }
            for o in t.letters
            if o.chances and o.chances[0] > 0
        ],  # fmt: skip
    }


def infer(
    solver,
    board: Board,
    leaves: Leaves,
    play: Play | str | None = None,
    score: int | None = None,
    exchanged: int = 0,
    observer: str = "",
    margin: float = MARGIN,
    threads: int = 1,
    budget_s: float | None = None,
    max_racks: int = MAX_RACKS,
    top: int = TOP,
) -> Inference:
    """The racks that explain a move made on `board` (the board before it): `play` (notation
    like '8D WORD' or a Play) scoring `score` (None: as the board scores it; given, it must
    agree), or an exchange of `exchanged` tiles. observer: the rack of the player making the
    inference (those tiles are not the mover's). leaves: the mover's leave values."""
    _check_top(top)
    found = infer_part(solver, board, leaves, play, score, exchanged, observer, margin, threads,
                       budget_s, max_racks)  # fmt: skip
    return merge_parts(solver.rules, [found], top)


@dataclass(frozen=True, slots=True)
class Part:
    """One part of an inference split over processes (infer_part): the racks of its chunks
    that explain the move, as the C core lists them (infer.h), with what every part shares.
    merge_parts makes the Inference of all of them."""

    part: int
    parts: int
    common: dict  # move, score, exchanged, margin, unseen, phony
    pool: tuple[int, ...]  # the tiles the racks are completed from (counts, blank 0)
    size: int  # tiles each rack holds besides the tiles played
    tiles: bytes = b""  # `size` a rack
    verdicts: bytes = b""
    thrown: bytes = b""  # `exchanged` a rack (exchanges)
    draws: bytes = b""  # uint64 a rack
    values: bytes = b""  # float32 a rack
    hist: bytes = b""
    tried: int = 0
    searches: int = 0
    known: bool = False  # the bag was empty before the move: nothing to judge

    def to_wire(self) -> dict:
        """The part as plain values (the protocol's `infer` result with `parts`)."""
        return {
            "part": self.part, "parts": self.parts, "common": {**self.common,
            "phony": list(self.common["phony"])}, "pool": list(self.pool), "size": self.size,
            "tiles": self.tiles, "verdicts": self.verdicts, "thrown": self.thrown,
            "draws": self.draws, "values": self.values, "hist": self.hist, "tried": self.tried,
            "searches": self.searches, "known": self.known,
        }  # fmt: skip

    @classmethod
    def from_wire(cls, rules: Ruleset, data) -> Part:
        """A part read back, every field checked against the others (it may come from
        anyone who can write to the queue): types, lengths, the racks in the order tried
        and within the pool, the tiles thrown on their racks, and the draws, tallies and
        share of racks recomputed; InputError naming what does not fit."""
        try:
            common = _fields(data["common"], COMMON_TYPES)
            found = cls(
                **_fields(data, PART_TYPES),
                common={**common, "phony": tuple(_text(w) for w in _list(common["phony"]))},
            )
            found._check(rules)
        except (KeyError, TypeError, ValueError, OverflowError, MemoryError) as exc:
            raise InputError(f"an inference part that does not add up ({exc})") from None
        return found

    def _check(self, rules: Ruleset) -> None:
        n = len(self.verdicts)
        x, size = self.common["exchanged"], self.size
        width = _MAX_RACK + 1
        if not (
            0 <= self.part < self.parts <= MAX_PARTS
            and len(self.pool) == rules.size + 1
            and all(0 <= c <= 255 for c in self.pool)
            and 0 <= size <= rules.rack_size
            and 0 <= x <= size
            and math.isfinite(self.common["margin"])
        ):
            raise ValueError("part, pool, size or margin")
        if self.known:
            if n or self.tried or self.tiles or self.hist:
                raise ValueError("a known rack with racks judged")
            return
        if not (
            len(self.tiles) == n * size
            and len(self.thrown) == n * x
            and len(self.draws) == 8 * n
            and len(self.values) == 4 * n
            and len(self.hist) == 8 * len(_TALLIES) * 2 * (rules.size + 1) * width
            and all(v in (1, 2) for v in self.verdicts)
            and (x or all(v == 1 for v in self.verdicts))
            and 0 <= self.searches <= self.tried
        ):
            raise ValueError("lengths, verdicts or counts")
        if self.tried != _share(_count_racks(self.pool, size), self.part, self.parts):
            raise ValueError(f"part {self.part} of {self.parts} judged {self.tried} racks")
        values = array("f")
        values.frombytes(self.values)
        if not all(math.isfinite(v) for v in values):
            raise ValueError("a leave value that is not a number")
        draws = array("Q")
        draws.frombytes(self.draws)
        hist = [0] * (len(self.hist) // 8)
        totals = [[0, 0] for _ in _TALLIES]
        pool, last = self.pool, None
        for i in range(n):
            rack = self.tiles[i * size : (i + 1) * size]
            if last is not None and rack <= last or list(rack) != sorted(rack):
                raise ValueError("racks out of the order tried")
            last = rack
            held = Counter(rack)
            if any(c > pool[t] for t, c in held.items()):
                raise ValueError("a rack of tiles the pool does not hold")
            d = math.prod(math.comb(pool[t], c) for t, c in held.items())
            if draws[i] != d:
                raise ValueError("a rack's draws")
            if not x:
                _tally(hist, rules.size, 0, rack, d, totals)
                continue
            back = self.thrown[i * x : (i + 1) * x]
            if list(back) != sorted(back) or Counter(back) - held:
                raise ValueError("tiles thrown that the rack does not hold")
            _tally(hist, rules.size, 2, rack, d, totals)
            if self.verdicts[i] == 2:
                _tally(hist, rules.size, 0, _minus(rack, back), d, totals)
                _tally(hist, rules.size, 1, back, d, totals)
        for kind in range(len(_TALLIES)):
            for u in range(2):
                for t in range(rules.size + 1):
                    at = _hist_at(rules.size, kind, u, t, 0)
                    hist[at] = totals[kind][u] - sum(hist[at + 1 : at + width])
        if array("Q", hist).tobytes() != self.hist:
            raise ValueError("tallies that are not the racks'")


PART_TYPES = {
    "part": int, "parts": int, "pool": tuple, "size": int, "tiles": bytes, "verdicts": bytes,
    "thrown": bytes, "draws": bytes, "values": bytes, "hist": bytes, "tried": int,
    "searches": int, "known": bool,
}  # fmt: skip
COMMON_TYPES = {
    "move": str,
    "score": int,
    "exchanged": int,
    "margin": float,
    "unseen": int,
    "phony": list,
}


def _fields(data, types: dict) -> dict:
    """The fields of a wire map, each of exactly its type (a whole number is no float, a
    bool no number; a list of whole numbers where a tuple is wanted)."""
    if not isinstance(data, dict):
        raise TypeError("not a map")
    out = {}
    for name, kind in types.items():
        value = data[name]
        if kind is float and type(value) is int:
            value = float(value)
        if kind is tuple:
            value = tuple(_whole(v) for v in _list(value))
        elif kind is int:
            value = _whole(value)
        elif type(value) is not kind:
            raise TypeError(f"{name} is not a {kind.__name__}")
        out[name] = value
    return out


def _whole(value) -> int:
    if type(value) is not int or not -(1 << 62) < value < 1 << 62:
        raise TypeError(f"{value!r} is not a whole number")
    return value


def _list(value) -> list:
    if not isinstance(value, list | tuple):
        raise TypeError("not a list")
    return list(value)


def _text(value) -> str:
    if type(value) is not str:
        raise TypeError("not text")
    return value


def _hist_at(alphabet: int, kind: int, unique: int, tile: int, k: int) -> int:
    """infer.h's HIST_AT."""
    return ((kind * 2 + unique) * (alphabet + 1) + tile) * (_MAX_RACK + 1) + k


def _tally(hist: list[int], alphabet: int, kind: int, tiles: bytes, draws: int, totals) -> None:
    """infer.c's tally: the rack's tiles by how many of each, weighted and once."""
    for t, k in Counter(tiles).items():
        hist[_hist_at(alphabet, kind, 0, t, k)] += draws
        hist[_hist_at(alphabet, kind, 1, t, k)] += 1
    totals[kind][0] += draws
    totals[kind][1] += 1


def _count_racks(pool: tuple[int, ...], size: int) -> int:
    """How many multisets of `size` tiles the pool holds (infer.c's count_racks)."""
    ways = [1] + [0] * size
    for have in pool:
        if have:
            ways = [sum(ways[k - c] for c in range(min(have, k) + 1)) for k in range(size + 1)]
    return ways[size]


def _share(n: int, part: int, parts: int) -> int:
    """A part's share of n racks: those of chunks part, part + parts, ... (infer.c)."""
    chunks = -(-n // _CHUNK)
    if part >= chunks:
        return 0
    mine = (chunks - 1 - part) // parts + 1
    last = part + (mine - 1) * parts
    return (mine - 1) * _CHUNK + min(_CHUNK, n - last * _CHUNK)


MAX_PARTS = 64


def infer_part(
    solver,
    board: Board,
    leaves: Leaves,
    play: Play | str | None = None,
    score: int | None = None,
    exchanged: int = 0,
    observer: str = "",
    margin: float = MARGIN,
    threads: int = 1,
    budget_s: float | None = None,
    max_racks: int = MAX_RACKS,
    part: int = 0,
    parts: int = 1,
) -> Part:
    """Part `part` of `parts` of infer's work (the racks of every parts-th chunk of 16, in
    the order tried; `max_racks` bounds this part's): what a worker of a fleet answers when
    one inference is split over several (merge_parts puts them together)."""
    rules: Ruleset = solver.rules
    if not (isinstance(parts, int) and isinstance(part, int) and 0 <= part < parts <= MAX_PARTS):
        raise InputError(f"part must be 0..parts-1 and parts 1..{MAX_PARTS}, not {part}/{parts}")
    if (
        not isinstance(margin, int | float)
        or isinstance(margin, bool)
        or not abs(margin) <= MAX_MARGIN
    ):
        raise InputError(
            f"margin must be a number of points within ±{MAX_MARGIN:g}, not {margin!r}"
        )
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= MAX_THREADS:
        raise InputError(f"threads must be 1..{MAX_THREADS}, not {threads!r}")
    if budget_s is not None and not (
        isinstance(budget_s, int | float) and not isinstance(budget_s, bool) and 0 < budget_s <= 1e6
    ):
        raise InputError(f"budget_s must be a number of seconds in (0, 1e6], not {budget_s!r}")
    if not isinstance(max_racks, int) or isinstance(max_racks, bool) or not 0 < max_racks < 1 << 48:
        raise InputError(f"max_racks must be a whole number 1..2^48, not {max_racks!r}")
    if (
        not isinstance(exchanged, int)
        or isinstance(exchanged, bool)
        or not 0 <= exchanged <= rules.rack_size
    ):
        raise InputError(f"exchanged must be 0..{rules.rack_size} tiles, not {exchanged!r}")
    if (play is None) == (exchanged == 0):
        raise InputError(
            "infer needs a play (with its score) or a number of tiles exchanged, not both"
        )
    solver._check_board(board)  # noqa: SLF001 - the engine's own check
    seen = parse_rack(rules, observer) if observer else ()
    unseen = unseen_counts(board, seen)
    played_counts = [0] * (rules.size + 1)
    if play is not None:
        if isinstance(play, str):
            play = parse_play(board, play)
        if not isinstance(play, Play):
            raise InputError(
                f"play must be notation like '8D WORD' or a Play, not {type(play).__name__}"
            )
        if len(play.placed) > rules.rack_size:
            raise InputError(
                f"{play.notation} lays {len(play.placed)} tiles; a {rules.name} rack holds "
                f"{rules.rack_size}"
            )
        shape = validate_play(board, play)  # where it lies, not its words: phonies are inferred
        if not shape.ok:
            raise InputError(f"{play.notation} cannot be played here: {'; '.join(shape.errors)}")
        lexicon = solver.lexicon
        phony = tuple(w for w in shape.words if not lexicon.contains(w.upper()))
        made = score_play(board, play).total
        if score is not None and (
            not isinstance(score, int) or isinstance(score, bool) or score != made
        ):
            raise InputError(f"{play.notation} scores {made} on this board, not {score!r}")
        score = made
        for _, _, ch in play.placed:
            tile = 0 if ch.islower() else rules.letter_index[ch]
            played_counts[tile] += 1
        move = play.notation
    else:
        phony = ()
        if score not in (None, 0):
            raise InputError(f"an exchange scores 0, not {score!r}")
        score = 0
        move = f"exchange {exchanged}"
    pool = [u - p for u, p in zip(unseen, played_counts, strict=True)]
    if min(pool) < 0:
        short = format_rack(rules, [t for t, n in enumerate(pool) for _ in range(-n) if n < 0])
        raise InputError(
            f"{move} lays {short}, which the board and the observer's rack already hold"
        )
    held = sum(played_counts)
    size = rules.rack_size - held
    total_unseen = sum(unseen)
    bag_before = total_unseen - rules.rack_size
    most = rules.max_exchange(bag_before) if bag_before > 0 else 0
    if exchanged and exchanged > most:
        raise InputError(
            f"an exchange of {exchanged} was not allowed: the bag held {max(bag_before, 0)} tiles "
            f"(the {rules.name} rules want {rules.exchange_min_bag})"
        )
    common = dict(
        move=move,
        score=score,
        exchanged=exchanged,
        margin=float(margin),
        unseen=total_unseen,
        phony=phony,
    )
    shared = dict(part=part, parts=parts, common=common, pool=tuple(pool), size=size)
    if bag_before <= 0:  # the bag was empty: the rack was every unseen tile
        return Part(**shared, known=True)
    if math.comb(sum(pool), size) >= 1 << 63:
        raise InputError(f"the {rules.name} tile set is too large to count its racks exactly")
    nodes, below, values = leaves.graph()
    try:
        tiles, verdicts, thrown, draws, vals, hist, tried, searches = solver._generator.infer(  # noqa: SLF001
            board.cells, bytes(pool), bytes(played_counts), size, exchanged, score,
            round(margin * 1000), most, nodes, below, values, threads=threads,
            budget=budget_s or 0.0, max_racks=max_racks, part=part, parts=parts,
        )  # fmt: skip
    except TimeoutError:
        raise WorkLimitError(f"inference ran past its budget of {budget_s:g} s") from None
    except ValueError as exc:
        if "racks to try" in str(exc):
            each = " in each part" if parts > 1 else ""
            raise WorkLimitError(
                f"inference would try more than {max_racks:,} racks{each}"
            ) from None
        raise
    return Part(**shared, tiles=tiles, verdicts=verdicts, thrown=thrown or b"", draws=draws,
                values=vals, hist=hist, tried=tried, searches=searches)  # fmt: skip


def _check_top(top) -> None:
    if not isinstance(top, int) or isinstance(top, bool) or top < 0:
        raise InputError(f"top must be a whole number >= 0, not {top!r}")


def merge_parts(rules: Ruleset, found: list[Part], top: int = TOP) -> Inference:
    """The Inference of every part of one inference (each part once, all of one move): the
    racks merged in the order tried, the tallies and counts summed."""
    _check_top(top)
    if not found or sorted(f.part for f in found) != list(range(found[0].parts)):
        raise InputError("the parts of an inference must be each part once")
    first = found[0]
    if any((f.parts, f.common, f.pool, f.size, f.known) != (first.parts, first.common, first.pool,
                                                           first.size, first.known)
           for f in found):  # fmt: skip
        raise InputError("the parts of an inference disagree on the move they read")
    if first.known:
        return _known(rules, list(first.pool), first.common)
    size, x = first.size, first.common["exchanged"]
    if len(found) == 1:
        f = first
        return _result(rules, list(f.pool), size, f.tiles, f.verdicts, f.thrown or None, f.draws,
                       f.values, f.hist, f.tried, f.searches, f.common, top)  # fmt: skip

    def racks(f: Part):
        for i in range(len(f.verdicts)):
            yield (f.tiles[i * size : (i + 1) * size], f.verdicts[i],
                   f.thrown[i * x : (i + 1) * x], f.draws[8 * i : 8 * i + 8],
                   f.values[4 * i : 4 * i + 4])  # fmt: skip

    merged = list(heapq.merge(*(racks(f) for f in found), key=lambda r: r[0]))
    hist = array("Q", [0]) * (len(first.hist) // 8)
    for f in found:
        part = array("Q")
        part.frombytes(f.hist)
        for i, n in enumerate(part):
            hist[i] += n
    return _result(
        rules, list(first.pool), size, b"".join(r[0] for r in merged),
        bytes(r[1] for r in merged), b"".join(r[2] for r in merged) if x else None,
        b"".join(r[3] for r in merged), b"".join(r[4] for r in merged), hist.tobytes(),
        sum(f.tried for f in found), sum(f.searches for f in found), first.common, top,
    )  # fmt: skip


def board_before(board: Board, play: str) -> Board:
    """The board as it was before `play` (notation like '8D WORD', the tiles it laid on
    `board`, the letters it played through in parentheses): the tiles it laid taken off.
    InputError naming the square when the board does not hold what the notation says."""
    if not isinstance(play, str) or len(play.split()) != 2:
        raise InputError(f"bad play {play!r}: expected a coordinate and a word, like '8D WORD'")
    where, spelled = play.split()
    row, col, direction = parse_coordinate(where, board.rules)
    dr, dc = (0, 1) if direction == "across" else (1, 0)
    cells = bytearray(board.cells)
    cols = board.rules.cols
    inside, laid = False, 0
    for ch in spelled:
        if ch in "()":
            if inside == (ch == "("):
                raise InputError(f"bad play {play!r}: unbalanced parentheses")
            inside = ch == "("
            continue
        if not board.in_bounds(row, col):
            raise InputError(f"play {play!r} runs off the board")
        here = cells[row * cols + col]
        label = square_label(row, col, direction)
        if ch != ".":
            try:
                want = letter_cell(board.rules, ch)
            except KeyError:
                raise InputError(
                    f"play {play!r}: {ch!r} is not a letter of the {board.rules.name} alphabet"
                ) from None
            if here != want:
                held = "nothing" if not here else repr(cell_letter(board.rules, here))
                raise InputError(
                    f"play {play!r} is not on this board: {label} holds {held}, not {ch!r} "
                    "(give the position after the play, the letters it played through in "
                    "parentheses)"
                )
        elif not here:
            raise InputError(f"play {play!r} marks {label} as played through, but it is empty")
        if not inside and ch != ".":
            cells[row * cols + col] = 0
            laid += 1
        row, col = row + dr, col + dc
    if inside:
        raise InputError(f"bad play {play!r}: unbalanced parentheses")
    if not laid:
        raise InputError(
            f"play {play!r} lays no tile: the letters it played through go in parentheses"
        )
    before = Board(board.rules, bytes(cells))
    try:
        check_connected(before)
    except InputError as exc:
        reason = str(exc).split(":")[0]
        raise InputError(
            f"{play} cannot have been the last move on this board: without its tiles, "
            f"{reason} (give the last move, the letters it played through in parentheses)"
        ) from None
    return before


def infer_last(
    solver,
    board: Board,
    rack: str,
    leaves: Leaves,
    play: str | None = None,
    score: int | None = None,
    exchanged: int = 0,
    margin: float = MARGIN,
    threads: int = 1,
    budget_s: float | None = None,
    max_racks: int = MAX_RACKS,
    top: int = TOP,
) -> Inference:
    """What the opponent kept with the move that led to `board`, as the player to move
    (holding `rack`) reads it: `play` (its tiles on `board`; see board_before) scoring
    `score`, or an exchange of `exchanged` tiles. The inference a simulation draws the
    opponent's rack from (engine.simulate)."""
    before = board_before(board, play) if play is not None else board
    return infer(
        solver, before, leaves, play, score=score, exchanged=exchanged, observer=rack,
        margin=margin, threads=threads, budget_s=budget_s, max_racks=max_racks, top=top,
    )  # fmt: skip


def _known(rules: Ruleset, pool: list[int], common: dict) -> Inference:
    """The rack was known: everything unseen (the bag was empty) or nothing was kept."""
    tiles = tuple(t for t, n in enumerate(pool) for _ in range(n))
    size = len(tiles)
    letters = []
    for t, n in enumerate(pool):
        if n:
            ones = tuple(1.0 for _ in range(n))
            letters.append(LetterOdds(_letter(rules, t), float(n), ones, ones, (1,) * n, (1,) * n))
    tally = Tally(1, 1, tuple(letters))
    kept = Kept(format_rack(rules, tiles), 1.0, 1, 0.0)
    return Inference(**common, tried=1, searches=0, kept=tally, leaves=(kept,), known=True,
                     _tiles=bytes(tiles), _width=size, _cumulative=array("Q", [1]))  # fmt: skip


def _letter(rules: Ruleset, tile: int) -> str:
    return "?" if tile == 0 else rules.alphabet[tile - 1]


def _result(
    rules, pool, size, tiles, verdicts, thrown, draws, vals, hist, tried, searches, common, top
):
    width_x = common["exchanged"]
    counts = array("Q")
    counts.frombytes(hist)
    weights = array("Q")
    weights.frombytes(draws)
    values = array("f")
    values.frombytes(vals)
    a = rules.size
    stride = _MAX_RACK + 1

    def tally(kind: int, picked: int) -> Tally:
        out = []
        base = kind * 2 * (a + 1) * stride
        total = sum(
            counts[base : base + stride]
        )  # tile 0's row: every rack, by its count of blanks
        racks = sum(counts[base + (a + 1) * stride : base + (a + 1) * stride + stride])
        for t in range(a + 1):
            row = counts[base + t * stride : base + (t + 1) * stride]
            uniq = counts[base + (a + 1 + t) * stride : base + (a + 2 + t) * stride]
            deepest = max((k for k in range(stride) if row[k]), default=0)
            at_least = [sum(row[k:]) for k in range(1, deepest + 1)]
            racks_at = [sum(uniq[k:]) for k in range(1, deepest + 1)]
            mean = sum(k * row[k] for k in range(stride)) / total if total else 0.0
            chances = tuple(n / total for n in at_least) if total else ()
            rand = tuple(
                _random_chance(pool[t], sum(pool), picked, k) for k in range(1, deepest + 1)
            )
            out.append(
                LetterOdds(_letter(rules, t), mean, chances, rand, tuple(at_least), tuple(racks_at))
            )
        out.sort(key=lambda o: -(o.chances[0] if o.chances else 0.0))
        return Tally(total, racks, tuple(out))

    kept = tally(0, size - width_x if width_x else size)
    n = len(verdicts)
    if not width_x:  # plays: the racks are the leaves
        sample_tiles, width = tiles, size
        cumulative = array("Q", accumulate(weights)) if n else array("Q")
        order = sorted(range(n), key=lambda i: -weights[i])[: max(top, 0)]
        total = kept.draws or 1
        listed = tuple(
            Kept(format_rack(rules, tiles[i * size : (i + 1) * size]), weights[i] / total,
                 weights[i], round(float(values[i]), 3))
            for i in order
        )  # fmt: skip
        return Inference(**common, tried=tried, searches=searches, kept=kept, leaves=listed,
                         _tiles=sample_tiles, _width=width, _cumulative=cumulative)  # fmt: skip
    # exchanges: the leaves listed are what the racks whose best move is that exchange kept
    # (MAGPIE's); a simulation draws from every rack that explains it, each keeping what
    # its best exchange of that many tiles keeps
    width = size - width_x
    by_leave: dict[bytes, list] = {}
    sample = bytearray()
    sample_weights = []
    for i in range(n):
        rack = tiles[i * size : (i + 1) * size]
        back = thrown[i * width_x : (i + 1) * width_x]
        keep = _minus(rack, back)
        sample += keep
        sample_weights.append(weights[i])
        if verdicts[i] != 2:
            continue
        entry = by_leave.setdefault(keep, [0, float(values[i]), {}])
        entry[0] += weights[i]
        entry[2][back] = entry[2].get(back, 0) + weights[i]
    total = kept.draws or 1
    order = sorted(by_leave.items(), key=lambda kv: -kv[1][0])[: max(top, 0)]
    listed = tuple(
        Kept(format_rack(rules, leave), d / total, d, round(v, 3),
             format_rack(rules, max(backs.items(), key=lambda kv: kv[1])[0]))
        for leave, (d, v, backs) in order
    )  # fmt: skip
    return Inference(
        **common, tried=tried, searches=searches, kept=kept, leaves=listed,
        thrown=tally(1, width_x), racks=tally(2, size),
        _tiles=bytes(sample), _width=width, _cumulative=array("Q", accumulate(sample_weights)),
    )  # fmt: skip


def _minus(rack: bytes, back: bytes) -> bytes:
    left = list(rack)
    for t in back:
        left.remove(t)
    return bytes(left)


def _random_chance(have: int, total: int, drawn: int, k: int) -> float:
    """The chance that `drawn` tiles taken at random from `total` hold at least k of a tile
    there are `have` of (hypergeometric)."""
    if drawn <= 0 or total <= 0:
        return 0.0
    ways = math.comb(total, drawn)
    hit = sum(
        math.comb(have, j) * math.comb(total - have, drawn - j)
        for j in range(k, min(have, drawn) + 1)
    )
    return hit / ways
