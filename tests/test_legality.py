"""Position checks a service makes before analysing a stranger's board: tile supply and
connectivity, against a plain breadth-first search over the squares."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import Board, InputError, Ruleset, _movegen, parse_cgp
from anchor.engine.legality import (
    check_connected,
    check_position,
    check_rack,
    fits,
    unseen_counts,
)

from .conftest import data_path

ENGLISH = Ruleset.load("english")


def reachable(cells: bytes, rows: int, cols: int, start: int) -> set[int]:
    seen, todo = {start}, deque([start])
    while todo:
        at = todo.popleft()
        r, c = divmod(at, cols)
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            nxt = rr * cols + cc
            if 0 <= rr < rows and 0 <= cc < cols and cells[nxt] and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 0, 1, 5, 26, 0x80 | 3]), min_size=225, max_size=225))
def test_connectivity_and_counts_match_a_plain_search(squares):
    cells = bytes(squares)
    board = Board(ENGLISH, cells)
    centre = 7 * 15 + 7
    counts, stray = _movegen.board_census(cells, 15, 15, centre)
    for tile in range(1, 27):
        assert counts[tile] == cells.count(tile)
    assert counts[0] == sum(1 for b in cells if b & 0x80)
    tiles = {i for i, b in enumerate(cells) if b}
    if not tiles:
        expected = -1
    elif centre not in tiles:
        expected = -2
    else:
        cut_off = tiles - reachable(cells, 15, 15, centre)
        expected = min(cut_off) if cut_off else -1
    assert stray == expected
    if expected == -1:
        check_connected(board)
    else:
        with pytest.raises(InputError, match="centre square"):
            check_connected(board)


def passes(check, *args) -> bool:
    try:
        check(*args)
    except InputError:
        return False
    return True


BENCH_BOARDS = [Board(ENGLISH)] + [
    parse_cgp(ENGLISH, line).board
    for line in data_path("bench", "positions.cgp").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(BENCH_BOARDS),
    st.lists(st.tuples(st.integers(0, 224), st.sampled_from([0, 5, 17, 26, 0x80 | 3])), max_size=2),
    st.lists(st.sampled_from([0, 1, 5, 10, 17, 19, 26]), max_size=7),
)
def test_one_pass_fit_agrees_with_the_checks(board, changes, rack):
    """fits (the service's one C pass) is True exactly when check_rack and check_position
    both pass: real boards, a square or two changed (often cut off, or one Q or blank
    too many), and racks heavy in the set's scarce tiles."""
    cells = bytearray(board.cells)
    for square, cell in changes:
        cells[square] = cell
    board = Board(ENGLISH, bytes(cells))
    tiles = tuple(rack)
    both = passes(check_rack, ENGLISH, tiles) and passes(check_position, board, tiles)
    assert fits(board, tiles) == both


def test_supply_counts_blanks_and_the_rack():
    cells = bytearray(225)
    cells[7 * 15 + 7] = 0x80 | 1  # a blank standing for A
    cells[7 * 15 + 8] = 0x80 | 2
    check_position(Board(ENGLISH, bytes(cells)))
    with pytest.raises(InputError, match="3 blanks; the english set has 2"):
        check_position(Board(ENGLISH, bytes(cells)), [0])
    with pytest.raises(ValueError, match="at most 21 a side"):
        _movegen.board_census(bytes(225), 15, 14, 0)
    with pytest.raises(ValueError, match="cell 3 holds invalid byte 64"):
        _movegen.board_census(bytes([0, 0, 0, 64]) + bytes(221), 15, 15, 112)
    supply = bytes(4 * 27)
    with pytest.raises(ValueError, match="at most 64 uint32"):
        _movegen.position_fits(bytes(225), 15, 15, 112, bytes(4 * 65), b"")
    with pytest.raises(ValueError, match="cell 3 holds invalid byte 64"):
        _movegen.position_fits(bytes([0, 0, 0, 64]) + bytes(221), 15, 15, 112, supply, b"")
    assert not _movegen.position_fits(bytes(225), 15, 15, 112, supply, bytes([40]))  # no such tile
    assert _movegen.position_fits(bytes(225), 15, 15, 112, supply, b"")


def test_unseen_tiles_are_the_set_less_board_and_rack():
    """What the player to move cannot see, by tile number: a blank on the board counts
    as a blank whatever it stands for; too many of a tile is an error, or with
    strict=False (a game record's odd rack) none of it unseen."""
    cells = bytearray(225)
    cells[7 * 15 + 7] = 0x80 | 1  # a blank standing for A
    cells[7 * 15 + 8] = 1
    board = Board(ENGLISH, bytes(cells))
    left = unseen_counts(board, [1, 1, 0, 26])
    assert left[0] == 0 and left[1] == 9 - 3 and left[26] == 0 and left[2] == 2
    assert sum(left) == 100 - 6
    with pytest.raises(InputError, match="more tiles than the english set has: 1 blanks"):
        unseen_counts(board, [0, 0])
    assert unseen_counts(board, [0, 0, 26, 26], strict=False)[0] == 0
    assert unseen_counts(board, [0, 0, 26, 26], strict=False)[26] == 0
