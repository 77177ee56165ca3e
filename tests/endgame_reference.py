"""An independent reference for the endgame solver: plain minimax over the rules as the
ruleset writes them (N scoreless turns in a row end the game, counted as they are played),
with no pruning, no move ordering and no table, and endgame positions to try it on.

It shares only the move generator with the solver (whose exactness the oracle tests prove);
the game rules, the turn order, the end of the game and the values are written here again.
"""

from __future__ import annotations

import random
from collections import Counter

from anchor.engine import Board, Ruleset, Solver
from anchor.engine.notation import format_rack, parse_rack


class TooBig(Exception):
    """The tree has more positions than the reference was allowed to visit."""


def _points(rules: Ruleset, rack: tuple[int, ...]) -> int:
    return sum(rules.tile_values[t] for t in rack)


def _without(rules: Ruleset, rack: tuple[int, ...], placed) -> tuple[int, ...]:
    left = list(rack)
    for _, _, letter in placed:
        left.remove(0 if letter.islower() else rules.index(letter))
    return tuple(sorted(left))


def minimax(
    solver: Solver,
    board: Board,
    mover: tuple[int, ...],
    other: tuple[int, ...],
    scoreless: int = 0,
    budget: list[int] | None = None,
) -> int:
    """The spread the side to move (holding `mover`) gains until the game ends."""
    rules = solver.rules
    end = rules.end
    if budget is not None:
        budget[0] -= 1
        if budget[0] < 0:
            raise TooBig
    best = None
    moves = solver.generate_moves(board, format_rack(rules, mover))
    bonus = (end.going_out + (1 if end.stuck_loses_own else 0)) * _points(rules, other)
    for i, score in enumerate(moves.scores()):
        placed = moves.placed(i)
        if len(placed) == len(mover):  # out: the game ends
            value = score + bonus
        else:
            left = _without(rules, mover, placed)
            value = score - minimax(solver, board.apply(placed), other, left, 0, budget)
        best = value if best is None else max(best, value)
    # the pass: a scoreless turn
    if scoreless + 1 >= end.scoreless_turns:
        value = _points(rules, other) - _points(rules, mover) if end.scoreless_loses_own else 0
    else:
        value = -minimax(solver, board, other, mover, scoreless + 1, budget)
    return value if best is None else max(best, value)


def endgames(solver: Solver, rng: random.Random, most: int = 4):
    """Positions from a self-played game (each side plays one of its top few plays by score,
    at random; in every other game neither side plays a blank while it has another play, so
    that blanks reach the end) from the moment its bag is empty and both racks hold at most
    `most` tiles, one per turn until the game ends: (board, rack to move, other rack,
    scoreless turns)."""
    rules = solver.rules
    bag = [0] * rules.blanks + [rules.index(ch) for ch, n in rules.counts.items() for _ in range(n)]
    rng.shuffle(bag)
    racks = [[bag.pop() for _ in range(rules.rack_size)] for _ in range(2)]
    board = Board.empty(rules)
    side, scoreless = 0, 0
    keep_blanks = rng.random() < 0.5
    while scoreless < rules.end.scoreless_turns and racks[0] and racks[1]:
        rack = racks[side]
        if not bag and len(racks[0]) <= most and len(racks[1]) <= most:
            yield board, tuple(sorted(rack)), tuple(sorted(racks[1 - side])), scoreless
        moves = solver.generate_moves(board, format_rack(rules, tuple(rack)), limit=40)
        if keep_blanks:
            moves = [m for m in moves if not any(ch.islower() for _, _, ch in m.placed)] or moves
        moves = moves[:4]
        if not len(moves):
            scoreless += 1
            side = 1 - side
            continue
        scoreless = 0
        move = moves[rng.randrange(len(moves))]
        left = list(_without(rules, tuple(rack), move.placed))
        board = board.apply(move.placed)
        while len(left) < rules.rack_size and bag:
            left.append(bag.pop())
        racks[side] = left
        side = 1 - side


def stuck_endgame(solver: Solver, board: Board, rng: random.Random) -> tuple | None:
    """Racks from the tiles not on `board` that no play can use on it (every single tile
    tried): positions where both sides must pass."""
    rules = solver.rules
    unseen = Counter(rules.counts)
    unseen[rules.alphabet[0]] += 0
    for cell in board.cells:
        if cell and not cell & 0x80:
            unseen[rules.letter(cell & 0x7F)] -= 1
    stuck = [
        rules.index(ch)
        for ch, n in sorted(unseen.items())
        for _ in range(max(n, 0))
        if not len(solver.generate_moves(board, ch))
    ]
    if len(stuck) < 2:
        return None
    rng.shuffle(stuck)
    k = rng.randint(1, min(3, len(stuck) - 1))
    return tuple(sorted(stuck[:k])), tuple(sorted(stuck[k : k + rng.randint(1, 3)]))


def rack_tiles(rules: Ruleset, text: str) -> tuple[int, ...]:
    return tuple(sorted(parse_rack(rules, text)))


def twin_endgame(solver: Solver, board: Board, rng: random.Random) -> tuple | None:
    """Racks of the same two letters for both sides, from the tiles not on `board`: lines
    where the sides swap who plays which tile reach one board with different racks (a
    table keyed without the racks mixes them up)."""
    rules = solver.rules
    unseen = Counter(rules.counts)
    for cell in board.cells:
        if cell and not cell & 0x80:
            unseen[rules.letter(cell & 0x7F)] -= 1
    pairs = [
        ch for ch, n in sorted(unseen.items()) if n >= 2 and len(solver.generate_moves(board, ch))
    ]
    if len(pairs) < 2:
        return None
    letters = rng.sample(pairs, 2)
    rack = tuple(sorted(rules.index(ch) for ch in letters))
    return rack, rack


def played_board(solver: Solver, rng: random.Random, turns: int) -> Board:
    """The board after `turns` plays from the empty board (one of the top few by score, at
    random, from racks drawn from a full bag): room left, most tiles still unseen."""
    rules = solver.rules
    bag = [0] * rules.blanks + [rules.index(ch) for ch, n in rules.counts.items() for _ in range(n)]
    rng.shuffle(bag)
    board = Board.empty(rules)
    for _ in range(turns):
        rack = [bag.pop() for _ in range(rules.rack_size)]
        moves = solver.generate_moves(board, format_rack(rules, tuple(rack)), limit=4)
        if len(moves):
            board = board.apply(moves[rng.randrange(len(moves))].placed)
    return board
