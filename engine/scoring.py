"""Scoring and validation, independent of the move generator.

Tournament rules: a play scores its main word and every cross-word it forms; letter and
word premiums count only under tiles placed this turn; word premiums multiply; blanks
score 0; using a full rack adds the ruleset's bingo bonus.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .board import ACROSS, DOWN, Board, cell_letter, square_label
from .errors import InputError
from .notation import Play, make_play, parse_play, parse_rack

if TYPE_CHECKING:
    from .lexicon import Lexicon


@dataclass(frozen=True, slots=True)
class TileScore:
    """One tile of a scored word. `points` is its value times the letter premium it earns."""

    row: int
    col: int
    letter: str  # lowercase for a blank
    new: bool
    value: int
    letter_multiplier: int
    word_multiplier: int

    @property
    def points(self) -> int:
        return self.value * self.letter_multiplier


@dataclass(frozen=True, slots=True)
class WordScore:
    word: str
    row: int
    col: int
    direction: str
    tiles: tuple[TileScore, ...]
    letter_sum: int
    word_multiplier: int
    score: int
    main: bool

    @property
    def coordinate(self) -> str:
        return square_label(self.row, self.col, self.direction)

    def describe(self) -> str:
        parts = []
        for t in self.tiles:
            mark = f"x{t.letter_multiplier}" if t.letter_multiplier > 1 else ""
            parts.append(f"{t.letter}{t.points if not mark else f'{t.value}{mark}'}")
        total = (
            f"{self.letter_sum} x{self.word_multiplier} = {self.score}"
            if self.word_multiplier > 1
            else str(self.score)
        )
        return f"{self.word} ({self.coordinate}): {' + '.join(parts)} = {total}"


@dataclass(frozen=True, slots=True)
class Score:
    total: int
    words: tuple[WordScore, ...]
    bingo: int
    tiles_placed: int

    @property
    def breakdown(self) -> tuple[TileScore, ...]:
        """Every tile of every word scored, in word order."""
        return tuple(t for w in self.words for t in w.tiles)

    def describe(self) -> str:
        lines = [w.describe() for w in self.words]
        if self.bingo:
            lines.append(f"all tiles used: +{self.bingo}")
        lines.append(f"total {self.total}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Validation:
    ok: bool
    errors: tuple[str, ...]
    score: Score | None
    play: Play | None

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(w.word for w in self.score.words) if self.score else ()


def score_play(board: Board, play: Play | str) -> Score:
    """Score a play on a board (the play's tiles must not be on the board yet)."""
    if isinstance(play, str):
        play = parse_play(board, play)
    rules = board.rules
    new = {(r, c): ch for r, c, ch in play.placed}
    words: list[WordScore] = []
    main = _score_line(board, new, play.row, play.col, play.direction, main=True)
    if main is not None:
        words.append(main)
    cross_dir = DOWN if play.direction == ACROSS else ACROSS
    for r, c, _ in play.placed:
        r0, c0 = _line_start(board, new, r, c, cross_dir)
        cross = _score_line(board, new, r0, c0, cross_dir, main=False)
        if cross is not None:
            words.append(cross)
    bingo = rules.bingo_bonus if len(play.placed) == rules.rack_size else 0
    total = sum(w.score for w in words) + bingo
    return Score(total, tuple(words), bingo, len(play.placed))


def _line_start(board: Board, new: dict, r: int, c: int, direction: str) -> tuple[int, int]:
    dr, dc = (0, 1) if direction == ACROSS else (1, 0)
    while board.in_bounds(r - dr, c - dc) and (
        board.cell(r - dr, c - dc) or (r - dr, c - dc) in new
    ):
        r, c = r - dr, c - dc
    return r, c


def _score_line(
    board: Board, new: dict, r0: int, c0: int, direction: str, main: bool
) -> WordScore | None:
    rules = board.rules
    dr, dc = (0, 1) if direction == ACROSS else (1, 0)
    tiles: list[TileScore] = []
    r, c = r0, c0
    letter_sum, word_mult = 0, 1
    while board.in_bounds(r, c):
        if (r, c) in new:
            ch = new[(r, c)]
            value = 0 if ch.islower() else rules.values[ch]
            lm, wm = rules.multipliers(r, c)
            fresh = True
        elif board.cell(r, c):
            ch = cell_letter(rules, board.cell(r, c))
            value = 0 if ch.islower() else rules.values[ch]
            lm, wm, fresh = 1, 1, False
        else:
            break
        tiles.append(TileScore(r, c, ch, fresh, value, lm, wm))
        letter_sum += value * lm
        word_mult *= wm
        r, c = r + dr, c + dc
    if len(tiles) < 2:
        return None
    word = "".join(t.letter for t in tiles)
    return WordScore(
        word, r0, c0, direction, tuple(tiles), letter_sum, word_mult, letter_sum * word_mult, main
    )


# ------------------------------------------------------------------ validation
def validate_play(
    board: Board,
    play: Play | str | Iterable[tuple[int, int, str]],
    lexicon: Lexicon | None = None,
    rack: str | None = None,
) -> Validation:
    """Check a play against the rules (and the rack and lexicon when given).

    `play` is notation ('8D WORD'), a Play, or the placed tiles as (row, col, letter).
    Every problem found is reported; nothing is raised for a bad play.
    """
    errors: list[str] = []
    try:
        if isinstance(play, str):
            parsed = parse_play(board, play)
        elif isinstance(play, Play):
            parsed = play
        else:
            parsed = _play_from_tiles(board, list(play), errors)
    except InputError as exc:
        return Validation(False, (str(exc),), None, None)
    if parsed is None:
        return Validation(False, tuple(errors), None, None)

    rules = board.rules
    if rack is not None:
        errors.extend(_rack_errors(board, parsed, rack))
    score = score_play(board, parsed)
    if board.is_empty():
        if (rules.centre[0], rules.centre[1]) not in {(r, c) for r, c, _ in parsed.placed}:
            errors.append(
                f"the first play must cover the centre square {square_label(*rules.centre)}"
            )
        if not score.words:
            errors.append("the first play must form a word of at least two letters")
    elif not _touches(board, parsed):
        errors.append("the play is not connected to any tile on the board")
    if lexicon is not None:
        bad = [w.word for w in score.words if not lexicon.contains(w.word.upper())]
        if bad:
            errors.append(f"not in the lexicon: {', '.join(bad)}")
    return Validation(not errors, tuple(errors), score, parsed)


def _touches(board: Board, play: Play) -> bool:
    for r, c, _ in play.placed:
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if board.in_bounds(nr, nc) and board.cell(nr, nc):
                return True
    return False


def _rack_errors(board: Board, play: Play, rack: str) -> list[str]:
    rules = board.rules
    try:
        tiles = Counter(parse_rack(rules, rack))
    except InputError as exc:
        return [str(exc)]
    needed = Counter(0 if ch.islower() else rules.letter_index[ch] for _, _, ch in play.placed)
    errors = []
    for tile, n in sorted(needed.items()):
        have = tiles.get(tile, 0)
        if have >= n:
            continue
        if tile == 0:
            errors.append(f"the play uses {n} blank(s) but rack {rack!r} holds {have}")
            continue
        letter = rules.alphabet[tile - 1]
        hint = (
            f" (to play a blank as {letter}, write it lowercase: {letter.lower()!r})"
            if tiles.get(0)
            else ""
        )
        errors.append(f"tile {letter} is not in rack {rack!r} (needs {n}, has {have}){hint}")
    return errors


def _play_from_tiles(board: Board, tiles: list, errors: list[str]) -> Play | None:
    rules = board.rules
    if not tiles:
        errors.append("the play places no tiles")
        return None
    seen: set[tuple[int, int]] = set()
    for item in tiles:
        try:
            r, c, ch = item
        except (TypeError, ValueError):
            errors.append(f"a placed tile must be (row, col, letter), not {item!r}")
            return None
        if not isinstance(r, int) or not isinstance(c, int) or not board.in_bounds(r, c):
            errors.append(f"square {r!r},{c!r} is off the board")
            continue
        if not isinstance(ch, str) or ch.upper() not in rules.letter_index:
            errors.append(
                f"{ch!r} at {square_label(r, c)} is not a letter of the {rules.name} alphabet"
            )
        if (r, c) in seen:
            errors.append(f"square {square_label(r, c)} is given twice")
        seen.add((r, c))
        if board.cell(r, c):
            errors.append(
                f"square {square_label(r, c)} is occupied by {cell_letter(rules, board.cell(r, c))}"
            )
    if errors:
        return None
    rows = {r for r, _, _ in tiles}
    cols = {c for _, c, _ in tiles}
    if len(rows) > 1 and len(cols) > 1:
        errors.append("the tiles are not in one line (neither one row nor one column)")
        return None
    if len(tiles) == 1:
        r, c, _ = tiles[0]
        across = any(board.in_bounds(r, x) and board.cell(r, x) for x in (c - 1, c + 1))
        direction = ACROSS if across else DOWN
    else:
        direction = ACROSS if len(rows) == 1 else DOWN
    dr, dc = (0, 1) if direction == ACROSS else (1, 0)
    first, last = min((r, c) for r, c, _ in tiles), max((r, c) for r, c, _ in tiles)
    r, c = first
    while (r, c) != last:
        r, c = r + dr, c + dc
        if (r, c) not in seen and not board.cell(r, c):
            errors.append(f"gap: square {square_label(r, c)} between the tiles is empty")
            return None
    return make_play(board, tiles, direction)
