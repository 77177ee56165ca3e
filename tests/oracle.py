"""A brute-force move enumerator, independent of the generator: try every word of a word
list at every start square in every line, place what is missing from the rack (a blank
for any letter, in every distinct way), and keep the placements whose every word is in
the list. Slow on purpose and simple enough to check by eye."""

from __future__ import annotations

from collections import Counter
from itertools import product

from anchor.engine import ACROSS, DOWN, Board
from anchor.engine.board import cell_letter
from anchor.engine.notation import make_play
from anchor.engine.scoring import score_play


def _line_cells(board: Board, direction: str, index: int) -> list[tuple[int, int]]:
    rules = board.rules
    if direction == ACROSS:
        return [(index, c) for c in range(rules.cols)]
    return [(r, index) for r in range(rules.rows)]


def _letter(board: Board, r: int, c: int) -> str | None:
    cell = board.cell(r, c)
    return cell_letter(board.rules, cell).upper() if cell else None


def _cross_word(board: Board, r: int, c: int, letter: str, direction: str) -> str:
    """The perpendicular word through (r, c) if `letter` stood there ('' if none)."""
    dr, dc = (1, 0) if direction == ACROSS else (0, 1)
    before, after = [], []
    rr, cc = r - dr, c - dc
    while board.in_bounds(rr, cc) and board.cell(rr, cc):
        before.append(_letter(board, rr, cc))
        rr, cc = rr - dr, cc - dc
    rr, cc = r + dr, c + dc
    while board.in_bounds(rr, cc) and board.cell(rr, cc):
        after.append(_letter(board, rr, cc))
        rr, cc = rr + dr, cc + dc
    if not before and not after:
        return ""
    return "".join(reversed(before)) + letter + "".join(after)


def _next_to_tiles(board: Board) -> set[tuple[int, int]]:
    """Squares orthogonally next to a tile: a play must cover one (after the first)."""
    out = set()
    for r in range(board.rules.rows):
        for c in range(board.rules.cols):
            if board.cell(r, c):
                out.update(((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)))
    return out


def all_plays(board: Board, rack: str, words: set[str]) -> dict[frozenset, int]:
    """Every legal play as {frozenset of (row, col, letter): score}; blanks lowercase."""
    rules = board.rules
    have = Counter(rack.upper())
    blanks = have.pop("?", 0)
    first = board.is_empty()
    touching = _next_to_tiles(board)
    plays: dict[frozenset, int] = {}
    lines = [(ACROSS, r) for r in range(rules.rows)] + [(DOWN, c) for c in range(rules.cols)]
    for direction, index in lines:
        cells = _line_cells(board, direction, index)
        existing = [_letter(board, r, c) for r, c in cells]
        n = len(cells)
        usable = set(have) | {ch for ch in existing if ch}
        for word in words:
            if len(set(word) - usable) > blanks:  # needs letters neither rack nor line has
                continue
            length = len(word)
            for start in range(n - length + 1):
                if start > 0 and existing[start - 1]:
                    continue
                if start + length < n and existing[start + length]:
                    continue
                empty = []
                fits = True
                for i, ch in enumerate(word):
                    on_board = existing[start + i]
                    if on_board is None:
                        empty.append((cells[start + i], ch))
                    elif on_board != ch:
                        fits = False
                        break
                if not fits or not empty or len(empty) > sum(have.values()) + blanks:
                    continue
                letters = Counter(ch for _, ch in empty)
                if sum(max(0, k - have[ch]) for ch, k in letters.items()) > blanks:
                    continue
                squares = [sq for sq, _ in empty]
                if first:
                    if rules.centre not in squares:
                        continue
                elif not touching.intersection(squares):
                    continue
                if any(
                    (cw := _cross_word(board, r, c, ch, direction)) and cw not in words
                    for (r, c), ch in empty
                ):
                    continue
                for flags in product((False, True), repeat=len(empty)):
                    if sum(flags) > blanks:
                        continue
                    need = Counter(ch for (_, ch), f in zip(empty, flags, strict=True) if not f)
                    if any(need[ch] > have[ch] for ch in need):
                        continue
                    placed = [
                        (r, c, ch.lower() if f else ch)
                        for ((r, c), ch), f in zip(empty, flags, strict=True)
                    ]
                    key = frozenset(placed)
                    if key in plays:
                        continue
                    plays[key] = score_play(board, make_play(board, placed, direction)).total
    return plays
