"""The endgame solver against an independent reference (tests/endgame_reference.py): plain
minimax over the rules as each ruleset writes them, on endgames from self-played games in
English, Russian Scrabble and Эрудит (racks of 1-4 tiles, blanks included, sides that are
stuck and must pass, positions where both must, both sides holding the same letters)."""

from __future__ import annotations

import random

import pytest

from anchor.engine import Board, InputError, Lexicon, Ruleset, Solver, WorkLimitError
from anchor.engine.notation import format_rack, parse_cgp

from .conftest import ROOT
from .endgame_reference import (
    TooBig,
    endgames,
    minimax,
    played_board,
    stuck_endgame,
    twin_endgame,
)

BUILD = ROOT / "dictionaries" / "build"
REFERENCE_NODES = 1200  # positions the reference may visit for one endgame


@pytest.fixture(scope="module")
def solvers() -> dict[str, Solver]:
    out = {}
    for name in ("english", "russian", "erudit"):
        path = BUILD / f"{name}.kwg"
        if not path.exists():
            pytest.fail(f"{path} is missing: `make test` builds it (anchor lexicon install {name})")
        rules = Ruleset.load(name)
        out[name] = Solver(Lexicon.open(path, rules), rules)
    return out


def compare(solver: Solver, board: Board, mover, other, scoreless: int, seen: dict) -> bool:
    """Whether the solver's value equals the reference's (None: too big for the reference)."""
    rules = solver.rules
    try:
        expected = minimax(solver, board, mover, other, scoreless, [REFERENCE_NODES])
    except TooBig:
        return False
    got = solver.solve_endgame(
        board, format_rack(rules, mover), format_rack(rules, other), scoreless_turns=scoreless
    )
    assert got.exact, (board.to_cgp(), mover, other)
    assert got.value == expected, (
        f"{rules.name}: {board.to_cgp()} {format_rack(rules, mover)}/{format_rack(rules, other)} "
        f"scoreless {scoreless}: solver {got.value}, reference {expected}"
    )
    seen["count"] += 1
    seen["blank"] += 0 in mover or 0 in other
    seen["sizes"].add((len(mover), len(other)))
    seen["scoreless"].add(scoreless)
    mover_stuck = not len(solver.generate_moves(board, format_rack(rules, mover)))
    other_stuck = not len(solver.generate_moves(board, format_rack(rules, other)))
    seen["stuck"] += mover_stuck or other_stuck
    seen["both stuck"] += mover_stuck and other_stuck
    return True


@pytest.mark.parametrize(
    "name, wanted, seed", [("english", 400, 1), ("russian", 350, 2), ("erudit", 350, 3)]
)
def test_solver_equals_plain_minimax(solvers, name, wanted, seed):
    """>= 1,000 endgames in all (400 + 350 + 350), each value equal to the reference's."""
    solver = solvers[name]
    rng = random.Random(seed)
    seen = {"twins": 0, "count": 0, "blank": 0, "stuck": 0, "both stuck": 0, "sizes": set(), "scoreless": set()}
    while seen["count"] < wanted:
        positions = list(endgames(solver, rng))
        # from the game's end backwards: the earlier a position, the larger its tree
        for board, mover, other, scoreless in reversed(positions):
            if not compare(solver, board, mover, other, scoreless, seen):
                break
        if positions:
            board = positions[-1][0]
            stuck = stuck_endgame(solver, board, rng)
            if stuck:
                compare(solver, board, *stuck, 0, seen)
        for _ in range(2):
            board = played_board(solver, rng, rng.randint(4, 12))
            twins = twin_endgame(solver, board, rng)
            if twins and compare(solver, board, *twins, 0, seen):
                seen["twins"] += 1
    assert seen["blank"] >= 5, seen
    assert seen["stuck"] >= 20 and seen["both stuck"] >= 5, seen
    assert {(1, 1), (4, 1), (1, 4)} <= seen["sizes"] or {(1, 1), (3, 2), (2, 3)} <= seen["sizes"]
    assert len(seen["scoreless"]) >= 2, seen  # starting after a pass too
    assert seen["twins"] >= 15, seen
