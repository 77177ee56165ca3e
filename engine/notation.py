"""GCG coordinates and plays, and racks (CGP positions: position.py).

`8D WORD` is an across play starting at row 8, column D; `D8 WORD` a down play.
Blanks are lowercase. Tiles already on the board may be written as their letters,
as `.`, or inside parentheses: `8D WO(R)D`, `8D WO.D` and `8D WORD` are one play.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .board import ACROSS, BLANK_FLAG, DOWN, Board, cell_letter, letter_cell, square_label
from .errors import InputError, RackError
from .rules import BLANK, Ruleset

_COORD = re.compile(r"^(?:(\d{1,2})([A-Za-z])|([A-Za-z])(\d{1,2}))$")


@dataclass(frozen=True, slots=True)
class Play:
    """Tiles placed in one line. `word` is the whole main word (blanks lowercase)."""

    row: int
    col: int
    direction: str
    word: str
    placed: tuple[tuple[int, int, str], ...]

    @property
    def notation(self) -> str:
        """GCG-style text with the tiles played through in parentheses: `8D WO(R)D`."""
        new = {(r, c) for r, c, _ in self.placed}
        dr, dc = (0, 1) if self.direction == ACROSS else (1, 0)
        out, inside = [], False
        for i, ch in enumerate(self.word):
            fresh = (self.row + dr * i, self.col + dc * i) in new
            if not fresh and not inside:
                out.append("(")
                inside = True
            elif fresh and inside:
                out.append(")")
                inside = False
            out.append(ch)
        if inside:
            out.append(")")
        return f"{square_label(self.row, self.col, self.direction)} {''.join(out)}"

    def __str__(self) -> str:
        return self.notation


def parse_coordinate(text: str, rules: Ruleset | None = None) -> tuple[int, int, str]:
    """'8D' -> (7, 3, 'across'); 'D8' -> (7, 3, 'down'). Column letters may be lowercase."""
    m = _COORD.match(text.strip()) if isinstance(text, str) else None
    if not m:
        raise InputError(
            f"bad coordinate {text!r}: write row then column for across ('8D') "
            "or column then row for down ('D8')"
        )
    if m.group(1):
        row, col, direction = int(m.group(1)) - 1, ord(m.group(2).upper()) - 65, ACROSS
    else:
        row, col, direction = int(m.group(4)) - 1, ord(m.group(3).upper()) - 65, DOWN
    if rules is not None and not (0 <= row < rules.rows and 0 <= col < rules.cols):
        raise InputError(f"coordinate {text!r} is off the {rules.rows}x{rules.cols} board")
    if row < 0:
        raise InputError(f"bad coordinate {text!r}: rows are numbered from 1")
    return row, col, direction


def parse_play(board: Board, text: str) -> Play:
    """Read `8D WORD` against a board. Letters on occupied squares must match the board."""
    if not isinstance(text, str):
        raise InputError(f"a play must be text like '8D WORD', not {type(text).__name__}")
    parts = text.split()
    if len(parts) != 2:
        raise InputError(f"bad play {text!r}: expected a coordinate and a word, like '8D WORD'")
    row, col, direction = parse_coordinate(parts[0], board.rules)
    return _read_word(board, row, col, direction, parts[1], text)


def _read_word(board: Board, row: int, col: int, direction: str, spelled: str, text: str) -> Play:
    rules = board.rules
    dr, dc = (0, 1) if direction == ACROSS else (1, 0)
    placed: list[tuple[int, int, str]] = []
    r, c = row, col
    inside = False
    for ch in spelled:
        if ch == "(":
            if inside:
                raise InputError(f"bad play {text!r}: nested '('")
            inside = True
            continue
        if ch == ")":
            if not inside:
                raise InputError(f"bad play {text!r}: ')' without '('")
            inside = False
            continue
        if not board.in_bounds(r, c):
            raise InputError(f"play {text!r} runs off the board at {square_label(r, c, direction)}")
        here = board.cell(r, c)
        where = square_label(r, c)
        if ch == ".":
            if not here:
                raise InputError(f"play {text!r} marks {where} as played through, but it is empty")
        else:
            try:
                cell = letter_cell(rules, ch)
            except KeyError:
                raise InputError(
                    f"play {text!r}: {ch!r} is not a letter of the {rules.name} alphabet"
                ) from None
            if here:
                if (here & 0x7F) != (cell & 0x7F):
                    raise InputError(
                        f"play {text!r}: square {where} already holds "
                        f"{cell_letter(rules, here)!r}, not {ch!r}"
                    )
            elif inside:
                raise InputError(f"play {text!r}: {where} is empty but {ch!r} is in parentheses")
            else:
                placed.append((r, c, cell_letter(rules, cell)))
        r, c = r + dr, c + dc
    if inside:
        raise InputError(f"bad play {text!r}: '(' without ')'")
    if not placed:
        raise InputError(f"play {text!r} places no tiles")
    return make_play(board, placed, direction)


def make_play(board: Board, placed: list[tuple[int, int, str]] | tuple, direction: str) -> Play:
    """The Play for tiles placed in one line: its main word runs through all adjacent tiles."""
    dr, dc = (0, 1) if direction == ACROSS else (1, 0)
    cells = {(r, c): ch for r, c, ch in placed}
    r0, c0 = min((r, c) for r, c, _ in placed)
    while board.in_bounds(r0 - dr, c0 - dc) and board.cell(r0 - dr, c0 - dc):
        r0, c0 = r0 - dr, c0 - dc
    word, r, c = [], r0, c0
    while board.in_bounds(r, c):
        if (r, c) in cells:
            word.append(cells[(r, c)])
        elif board.cell(r, c):
            word.append(cell_letter(board.rules, board.cell(r, c)))
        else:
            break
        r, c = r + dr, c + dc
    ordered = tuple(sorted(placed))
    return Play(r0, c0, direction, "".join(word), ordered)


def parse_rack(rules: Ruleset, text: str) -> tuple[int, ...]:
    """'AEINRS?' -> tile numbers (0 for a blank), in the order written. Case is ignored."""
    if not isinstance(text, str):
        raise RackError(f"a rack must be text like 'AEINRS?', not {type(text).__name__}")
    tiles = []
    for ch in text.strip():
        if ch == BLANK:
            tiles.append(0)
            continue
        tile = rules.tile_of(ch)  # either case; Эрудит's Ё is an Е, as in its lexicon
        if tile is None:
            raise RackError(
                f"rack {text!r}: {ch!r} is not a letter of the {rules.name} alphabet "
                "(write a blank as '?')"
            )
        tiles.append(tile)
    if len(tiles) > rules.rack_size:
        raise RackError(
            f"rack {text!r} holds {len(tiles)} tiles; a rack of {rules.name} holds at most "
            f"{rules.rack_size}"
        )
    return tuple(tiles)


def format_rack(rules: Ruleset, tiles: tuple[int, ...] | list[int]) -> str:
    """Tile numbers -> 'AEINRS?' in alphabet order, blanks last."""
    letters = sorted(t for t in tiles if t)
    return "".join(rules.alphabet[t - 1] for t in letters) + BLANK * sum(1 for t in tiles if t == 0)


def is_blank_cell(cell: int) -> bool:
    return bool(cell & BLANK_FLAG)
