"""Self-play: whole games between computer players, every invariant checked every turn.

A seeded bag with the ruleset's distribution, two or more players, a policy per player
(greedy by default: the highest-scoring play, ties broken by the generator's order),
exchanges when no play exists and the bag allows, passes, the game's end (a player
out with the bag empty, or the ruleset's number of scoreless turns in a row) and the
end-of-game rack adjustment its [end] table gives. Each game can be written as GCG.
"""

from __future__ import annotations

import functools
import operator
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .board import Board, cell_text
from .endgame import best_by_endgame_value
from .errors import AnchorError, WorkLimitError
from .legality import unseen_counts
from .moves import EXCHANGE, PASS, Move
from .rules import BLANK, Ruleset
from .seeding import shuffle_tiles
from .solver import Solver

if TYPE_CHECKING:
    from . import gcg

# A policy sees the solver, the board, its rack and the bag's size, and returns the play
# to make, or None to exchange (when the bag allows) or pass. One with a true `wants_lead`
# attribute is also given `lead=`: its score minus the best other player's; one with a
# true `wants_last`, `last=`: the previous move and the board before it (None at the start,
# and in games of more than two players).
Policy = Callable[[Solver, Board, str, int], "Move | None"]


class InvariantError(AnchorError, AssertionError):
    """Self-play found the engine breaking a rule (a bug, never a user error)."""


class Greedy:
    """The highest-scoring play (ties broken by the generator's deterministic order);
    None when there is none. Counts the plays it had generated."""

    def __init__(self) -> None:
        self.plays_generated = 0

    def __call__(self, solver: Solver, board: Board, rack: str, bag_size: int) -> Move | None:
        moves = solver.generate_moves(board, rack, limit=1)
        self.plays_generated += moves.generated
        return moves[0] if len(moves) else None


class EquityPlayer:
    """The play (or, while the bag allows, the exchange) of the highest equity: score plus
    the value of the tiles kept, from a KLV2 leave file. Counts the plays it generated."""

    def __init__(self, leaves) -> None:
        self.leaves = leaves
        self.plays_generated = 0

    def __call__(self, solver: Solver, board: Board, rack: str, bag_size: int) -> Move | None:
        if bag_size == 0:  # no leave values for an empty bag: score, and going out counts
            return empty_bag_choice(solver, board, rack)
        moves = solver.generate_moves(
            board,
            rack,
            limit=1,
            rank="equity",
            leaves=self.leaves,
            include_exchanges=solver.rules.can_exchange(bag_size),
            max_exchange=solver.rules.max_exchange(bag_size),
        )
        self.plays_generated += moves.generated
        return moves[0] if len(moves) else None


def _opponent_tiles(solver: Solver, board: Board, rack: str) -> tuple[int, ...]:
    """The tiles the player to move cannot see: with the bag empty, the other racks."""
    tiles = solver._rack(rack)[0]
    left = unseen_counts(board, tiles, strict=False)
    return tuple(t for t, n in enumerate(left) for _ in range(n))


def empty_bag_choice(solver: Solver, board: Board, rack: str) -> Move | None:
    """The best play by endgame value (engine/endgame.py): what a static player makes of
    an empty bag."""
    others = _opponent_tiles(solver, board, rack)
    points = sum(solver.rules.tile_values[t] for t in others)
    return best_by_endgame_value(solver, board, rack, points)


class EndgamePlayer:
    """Another policy until the bag is empty, then the exact endgame solver (two players:
    the other rack is every tile not seen), within `seconds` a move (and the job's budget)."""

    def __init__(
        self, inner, seconds: float = 10.0, budget: Callable[[], float | None] | None = None
    ):
        self.inner = inner
        self.seconds = seconds
        self.budget = budget
        self.wants_lead = getattr(inner, "wants_lead", False)
        self.wants_last = getattr(inner, "wants_last", False)
        self.solved = 0

    @property
    def plays_generated(self) -> int:
        return getattr(self.inner, "plays_generated", 0)

    def __call__(
        self, solver: Solver, board: Board, rack: str, bag_size: int, **asked
    ) -> Move | None:
        """`asked`: what the inner policy wants (lead=, last=), passed on to it."""
        others = _opponent_tiles(solver, board, rack) if bag_size == 0 else ()
        if not 0 < len(others) <= solver.rules.rack_size:
            return self.inner(solver, board, rack, bag_size, **asked)
        seconds = self.seconds
        if self.budget is not None:
            left = self.budget()
            seconds = seconds if left is None else max(0.001, min(seconds, left))
        other = "".join("?" if t == 0 else solver.rules.letter(t) for t in others)
        self.solved += 1
        return solver.solve_endgame(board, rack, other, budget_s=seconds).best


@functools.lru_cache(maxsize=16)
def _every_tile(rules: Ruleset) -> bytes:
    """The ruleset's tiles, as tile numbers in alphabet order, blanks (0) last."""
    return b"".join(
        bytes((code,)) * rules.counts[ch] for code, ch in enumerate(rules.alphabet, 1)
    ) + bytes(rules.blanks)


class Bag:
    """The tiles not yet drawn, in a seeded random order (random.Random(seed).shuffle's,
    done in the C core); exchanged tiles go back at the bottom."""

    def __init__(self, rules: Ruleset, seed: int):
        # tile numbers, blank 0: what the C core draws
        self.order = shuffle_tiles(seed, _every_tile(rules))
        self._rules = rules
        self._left: list[str] | None = None  # as letters, once drawn from in Python

    @property
    def _tiles(self) -> list[str]:
        if self._left is None:
            letters = (BLANK, *self._rules.alphabet)
            self._left = [letters[code] for code in self.order]
        return self._left

    def draw(self, n: int) -> list[str]:
        tiles = self._tiles
        n = min(n, len(tiles))
        drawn, self._left = tiles[:n], tiles[n:]
        return drawn

    def put_back(self, tiles: Sequence[str]) -> None:
        """Tiles exchanged go to the bottom of the bag, letters in alphabet order, blanks
        last: as the simulation's playouts do, so the C core plays a seed's game alike."""
        rank = {ch: i for i, ch in enumerate(self._rules.alphabet)}
        self._tiles.extend(sorted(tiles, key=lambda ch: rank.get(ch, len(rank))))

    def tiles(self) -> list[str]:
        """The tiles in the order they will be drawn."""
        return list(self._tiles)

    def counts(self) -> Counter[str]:
        return Counter(self._tiles)

    def __len__(self) -> int:
        return len(self._tiles)


@dataclass(frozen=True, slots=True)
class Turn:
    player: int
    rack: str  # before the move, tiles in alphabet order
    move: Move
    total: int  # the player's score after the move


class RecordedTurns(Sequence[Turn]):
    """The turns of a game the C core played, made from its move records the first time
    they are read: a caller that wants only the scores (a batch of games for their
    statistics) never builds the ~25 Move and Turn objects of a game. Compares equal to
    a list of the same turns."""

    __slots__ = ("_count", "_decode", "_turns")

    def __init__(self, count: int, decode: Callable[[], list[Turn]]):
        self._count = count
        self._decode: Callable[[], list[Turn]] | None = decode
        self._turns: list[Turn] = []

    def _list(self) -> list[Turn]:
        if self._decode is not None:
            self._turns, self._decode = self._decode(), None
        return self._turns

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i):
        return self._list()[i]

    def __iter__(self):
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordedTurns | list):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def __repr__(self) -> str:
        return repr(self._list())


@dataclass
class Game:
    rules: Ruleset
    seed: int
    players: tuple[str, ...]
    turns: list[Turn] | RecordedTurns = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    racks: list[str] = field(default_factory=list)  # left at the end
    adjustments: list[int] = field(default_factory=list)  # end-of-game rack points
    end: str = ""  # "out" or "scoreless"
    board: Board | None = None
    plays_generated: int = 0  # by policies that count them (Greedy does)
    move_times: list[float] = field(default_factory=list)  # seconds per policy call

    def to_gcg(self, lexicon: str | None = None) -> str:
        from .gcg import write_gcg  # only for games whose record is asked for

        return write_gcg(record(self, lexicon))


def _rack_text(rules: Ruleset, tiles: Counter[str]) -> str:
    order = rules.letter_index
    return "".join(sorted(tiles.elements(), key=lambda ch: order.get(ch, len(order) + 1)))


def play_game(
    solver: Solver,
    seed: int,
    players: int = 2,
    policies: Sequence[Policy] | None = None,
    check: bool = True,
    budget: Callable[[], float | None] | None = None,
) -> Game:
    """Play one game to its end. With check=True every invariant is verified every turn
    (InvariantError on a failure). `budget`, when given, is called before every turn and
    raises when the time allowed has run out."""
    rules = solver.rules
    if players < 2 or players * rules.rack_size > rules.total_tiles:
        raise AnchorError(f"{players} players cannot play with {rules.total_tiles} tiles")
    policies = list(policies or [Greedy() for _ in range(players)])
    counted_before = sum(getattr(pol, "plays_generated", 0) for pol in policies)
    if len(policies) != players:
        raise AnchorError(f"{players} players need {players} policies, not {len(policies)}")
    bag = Bag(rules, seed)
    game = Game(rules, seed, tuple(f"p{i + 1}" for i in range(players)), scores=[0] * players)
    if not check and _native(policies):
        return _play_natively(solver, game, bag, policies, budget)
    racks = [Counter(bag.draw(rules.rack_size)) for _ in range(players)]
    board = Board.empty(rules)
    distribution = Counter({ch: n for ch, n in rules.counts.items() if n})
    if rules.blanks:
        distribution[BLANK] = rules.blanks
    scoreless = 0
    player = 0
    last: tuple[Board, Move] | None = None
    while True:
        rack = racks[player]
        rack_text = _rack_text(rules, rack)
        if budget is not None:
            budget()
        started = time.perf_counter()
        policy = policies[player]
        asked: dict = {}
        if getattr(policy, "wants_lead", False):
            asked["lead"] = game.scores[player] - max(
                s for i, s in enumerate(game.scores) if i != player
            )
        if getattr(policy, "wants_last", False):  # (two players: the last move is the other's)
            asked["last"] = last if players == 2 else None
        move = policy(solver, board, rack_text, len(bag), **asked)
        before = board
        game.move_times.append(time.perf_counter() - started)
        if move is not None and move.kind == "play":
            if check:
                _check_play(solver, board, rack_text, move)
            board = board.apply(move.placed)
            for _r, _c, letter in move.placed:
                rack[BLANK if letter.islower() else letter] -= 1
            rack += Counter()
            rack.update(bag.draw(rules.rack_size - sum(rack.values())))
        elif move is not None and move.kind == PASS:
            move = Move(0, -1, -1, "", "", (), PASS)
        elif rack and rules.max_exchange(len(bag)) >= sum(
            (rack if move is None or move.kind != EXCHANGE else Counter(move.exchanged)).values()
        ):  # no play: the whole rack back, while the bag takes it (Greedy); or the exchange chosen
            exchanged = rack if move is None or move.kind != EXCHANGE else Counter(move.exchanged)
            kept = rack - exchanged
            fresh = bag.draw(sum(exchanged.values()))
            bag.put_back(list(exchanged.elements()))
            racks[player] = rack = kept + Counter(fresh)
            move = Move(0, -1, -1, "", "", (), EXCHANGE, _rack_text(rules, exchanged))
        else:
            move = Move(0, -1, -1, "", "", (), PASS)
        game.scores[player] += move.score
        game.turns.append(Turn(player, rack_text, move, game.scores[player]))
        last = (before, move)
        scoreless = scoreless + 1 if move.score == 0 else 0
        if check:
            _check_state(rules, board, bag, racks, distribution)
        if not rack and not bag:
            game.end = "out"
            break
        if scoreless >= rules.end.scoreless_turns:
            game.end = "scoreless"
            break
        player = (player + 1) % players
    game.plays_generated = (
        sum(getattr(pol, "plays_generated", 0) for pol in policies) - counted_before
    )
    return _finish(game, [_rack_text(rules, r) for r in racks], player, board)


def _finish(game: Game, racks: list[str], last: int, board: Board) -> Game:
    """The end of the game, as the ruleset's [end] says (racks: what each player holds, as
    rack text in alphabet order): the player who went out (`last`
    moved last) gains `going_out` times the others' tiles, and they lose their own when
    `stuck_loses_own`; after the scoreless turns each loses its own when
    `scoreless_loses_own`."""
    rules = game.rules
    end = rules.end
    game.adjustments = [0] * len(racks)
    for i, r in enumerate(racks):
        value = sum(rules.values.get(ch, 0) for ch in r)
        if game.end == "out":
            game.adjustments[last] += end.going_out * value
            game.adjustments[i] -= value if end.stuck_loses_own else 0
        elif end.scoreless_loses_own:
            game.adjustments[i] -= value
    game.scores = [s + a for s, a in zip(game.scores, game.adjustments, strict=True)]
    game.racks = list(racks)
    game.board = board
    return game


def _native(policies: Sequence[Policy]) -> bool:
    """Whether the game can be played in the C core: two Greedy players, or two equity
    players with the same leave values, read from a KLV2 graph (a training model has
    none)."""
    if len(policies) != 2:
        return False
    if all(type(pol) is Greedy for pol in policies):
        return True
    return (
        all(type(pol) is EquityPlayer for pol in policies)
        and policies[0].leaves is policies[1].leaves
        and hasattr(policies[0].leaves, "graph")
    )


def _play_natively(solver: Solver, game: Game, bag: Bag, policies, budget) -> Game:
    """The game of play_game(check=False) for two equity players (or two Greedy ones),
    every move made in the C core (playout.c's selfplay_game) from the same shuffled bag,
    by the same choices: the same game, tile for tile (tests/test_selfplay.py holds them
    equal)."""
    rules = game.rules
    order = bag.order
    by_score = type(policies[0]) is Greedy
    nodes, below, values = (b"", b"", b"") if by_score else policies[0].leaves.graph()
    seconds = budget() if budget is not None else None
    factor = rules.end.going_out + int(rules.end.stuck_loses_own)
    generator = solver._generator  # noqa: SLF001 - the engine's own native core
    try:
        moves, went_out, cells, *left = generator.selfplay(
            order, nodes, below, values, factor, rules.end.scoreless_turns, seconds or 0.0, by_score
        )
    except TimeoutError:  # the job's time ran out mid-game: the caller's `timeout`, not a bug
        raise WorkLimitError(f"self-play game {game.seed} ran past {seconds:g} s") from None
    board = Board(rules, cells)
    for player in (0, 1):
        mine = moves[player::2]
        game.scores[player] += sum(m[1] for m in mine)
        policies[player].plays_generated += sum(m[5] for m in mine)
    game.move_times = [m[6] for m in moves]
    game.turns = RecordedTurns(len(moves), lambda: _turns_of(generator, rules, moves, board))
    game.end = "out" if went_out else "scoreless"
    game.plays_generated = sum(m[5] for m in moves)
    return _finish(game, [_counts_text(rules, r) for r in left], (len(moves) - 1) % 2, board)


def _turns_of(generator, rules: Ruleset, moves, board: Board) -> list[Turn]:
    """The Turn records of Generator.selfplay's moves (kind, score, record, back, rack,
    generated, seconds), the game's final board describing its plays."""
    records = b"".join(m[2] for m in moves)
    plays = iter(generator.describe(records, board.cells, cell_text(rules), False))
    turns = []
    totals = [0, 0]
    for i, (kind, score, _record, back, rack, _generated, _took) in enumerate(moves):
        player = i % 2
        if kind == 0:
            notation, score, row, col, direction, word, placed = next(plays)
            move = Move(score, row, col, direction, word, placed, label=notation)
        elif kind == 1:
            move = Move(0, -1, -1, "", "", (), EXCHANGE, _counts_text(rules, back))
        else:
            move = Move(0, -1, -1, "", "", (), PASS)
        totals[player] += score
        turns.append(Turn(player, _counts_text(rules, rack), move, totals[player]))
    return turns


def _counts_text(rules: Ruleset, counts: bytes) -> str:
    """Tiles given as a count per tile (blank 0) as rack text: letters in alphabet order,
    blanks last."""
    return "".join(map(operator.mul, rules.alphabet, counts[1:])) + BLANK * counts[0]


def _check_play(solver: Solver, board: Board, rack: str, move: Move) -> None:
    check = solver.validate_play(board, list(move.placed), rack=rack)
    if not check.ok:
        raise InvariantError(
            f"generated play {move.notation} is illegal: {'; '.join(check.errors)}"
        )
    if check.score.total != move.score:
        raise InvariantError(
            f"generated play {move.notation} scored {move.score}, "
            f"score_play says {check.score.total}"
        )


def _check_state(rules, board: Board, bag: Bag, racks, distribution: Counter) -> None:
    seen = bag.counts() + board.tiles()
    for r in racks:
        seen += r
    if seen != distribution:
        raise InvariantError(
            f"tiles not conserved: {dict(seen - distribution)} extra, "
            f"{dict(distribution - seen)} missing"
        )
    if not _connected(board):
        raise InvariantError("the board's tiles are not all connected")


def _connected(board: Board) -> bool:
    rows, cols = board.rules.rows, board.rules.cols
    tiles = [(r, c) for r in range(rows) for c in range(cols) if board.cell(r, c)]
    if not tiles:
        return True
    seen = {tiles[0]}
    todo = [tiles[0]]
    while todo:
        r, c = todo.pop()
        for nxt in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if nxt not in seen and board.in_bounds(*nxt) and board.cell(*nxt):
                seen.add(nxt)
                todo.append(nxt)
    return len(seen) == len(tiles)


def record(game: Game, lexicon: str | None = None) -> gcg.Game:
    """The game as a GCG record (gcg.Game; played-through tiles as '.'). `#ruleset`
    (Anchor's own pragma; other readers skip it) and `#lexicon` let `anchor annotate`
    replay it under the rules and words it was played with."""
    from . import gcg

    rules = game.rules
    pragmas = {
        "description": f"Anchor self-play, {rules.name}, seed {game.seed}",
        "ruleset": rules.name,
    }
    if lexicon:
        pragmas["lexicon"] = lexicon
    players = tuple(gcg.Player(nick, f"Player {i + 1}") for i, nick in enumerate(game.players))
    events = []

    def event(kind: str, seat: int, rack: str, score: int, total: int, **kw) -> None:
        nick = game.players[seat]
        events.append(gcg.Event(kind, nick, rack, score, total, 0, "", player_index=seat, **kw))

    for turn in game.turns:
        m = turn.move
        if m.kind == "play":
            new = {(r, c) for r, c, _ in m.placed}
            dr, dc = (0, 1) if m.direction == "across" else (1, 0)
            word = "".join(
                ch if (m.row + dr * i, m.col + dc * i) in new else "."
                for i, ch in enumerate(m.word)
            )
            coordinate = m.notation.split()[0]
            event(gcg.PLAY, turn.player, turn.rack, m.score, turn.total,
                  coordinate=coordinate, word=word)  # fmt: skip
        elif m.kind == EXCHANGE:
            event(gcg.EXCHANGE, turn.player, turn.rack, 0, turn.total, tiles=m.exchanged)
        else:
            event(gcg.PASS, turn.player, turn.rack, 0, turn.total)
    running = [0] * len(game.players)
    for t in game.turns:
        running[t.player] = t.total
    for i, adjustment in enumerate(game.adjustments):
        if game.racks[i] and adjustment < 0:
            running[i] += adjustment
            event(gcg.END_RACK, i, game.racks[i], adjustment, running[i], tiles=game.racks[i])
    for i, adjustment in enumerate(game.adjustments):
        if adjustment > 0:
            running[i] += adjustment
            out = "".join(game.racks[j] for j in range(len(game.players)) if j != i)
            event(gcg.END_RACK, i, "", adjustment, running[i], tiles=out)
    return gcg.Game(players, tuple(events), pragmas)
