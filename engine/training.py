"""Learning leave values by self-play, for rulesets without published leaves.

The model is additive: a leave is worth the sum of a value per tile kept, plus a penalty
per duplicate of each tile (keeping two of a letter is worth less than twice one). It is
fitted by ridge least squares to what each leave was followed by: the points its player
scored on their next turn, relative to the mean. Each iteration plays games with the
current values (the first with score-only players), fits, and plays again.
A model acts like Leaves (value, table) and can be written as a KLV2 file that lists
every leave the tile distribution allows, as MAGPIE's files do (up to 6 tiles).
"""

from __future__ import annotations

import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import product

from .gcg import EXCHANGE, PASS, PLAY, leave_kept, parse_gcg, replay
from .leaves import MAX_LETTERS, Leaves
from .match import Outcome, win_rate
from .rules import Ruleset

RIDGE = 50.0  # shrinks rarely seen tiles toward 0

# play(games, seed, policies, alternate, model) -> the games' outcomes, records included:
# in-process or across the worker fleet, the caller's choice.
PlayGames = Callable[[int, int, tuple[str, ...], bool, "LeaveModel"], list[Outcome]]


class LeaveModel:
    """value(leave) = sum of per-tile values + per-tile duplicate penalties."""

    def __init__(self, rules: Ruleset, params: Sequence[float] | None = None):
        size = rules.size + 1  # tile 0 is the blank
        params = list(params) if params is not None else [0.0] * (2 * size)
        if len(params) != 2 * size:
            raise ValueError(
                f"a leave model for {rules.name} has {2 * size} parameters, not {len(params)}"
            )
        self.rules = rules
        self.params = params
        self._tables: dict[tuple[int, ...], tuple[bytes, bytes]] = {}

    def value(self, tiles: Iterable[int]) -> float:
        size = self.rules.size + 1
        total = 0.0
        for tile, n in Counter(tiles).items():
            total += n * self.params[tile] + (n - 1) * self.params[size + tile]
        return total

    def table(self, rack: tuple[int, ...]) -> tuple[bytes, bytes]:
        """Same contract as Leaves.table: key steps and the value of every leave kept.
        The model is a sum over distinct tiles, so each key's value is a sum of one
        term per tile, taken from small per-tile lists."""
        key = tuple(sorted(rack))
        if key not in self._tables:
            size = self.rules.size + 1
            have = Counter(rack)
            distinct = sorted(have)
            steps = [0] * (MAX_LETTERS + 1)
            radix = 1
            for tile in distinct:
                steps[tile] = radix
                radix *= have[tile] + 1
            # per tile, the value of keeping (have - used) of it, for used = 0..have
            terms = [
                [
                    (n - u) * self.params[t] + max(0, n - u - 1) * self.params[size + t]
                    for u in range(n + 1)
                ]
                for t, n in ((t, have[t]) for t in distinct)
            ]
            # product() varies its last list fastest: reverse so the first tile is the
            # least significant digit of the key, as the steps say
            values = [sum(c) for c in product(*reversed(terms))] if terms else [0.0]
            if len(self._tables) > 50_000:
                self._tables.clear()
            self._tables[key] = (
                array.array("H", steps).tobytes(),
                array.array("f", values).tobytes(),
            )
        return self._tables[key]

    def to_klv2(self, max_size: int = 6) -> bytes:
        """Every leave of 1..max_size tiles the distribution allows, valued by the model."""
        caps = [(0, self.rules.blanks)] + [
            (i + 1, self.rules.counts[ch]) for i, ch in enumerate(self.rules.alphabet)
        ]
        values: dict[tuple[int, ...], float] = {}

        def grow(start: int, leave: list[int]) -> None:
            if leave:
                values[tuple(leave)] = self.value(leave)
            if len(leave) == max_size:
                return
            for k in range(start, len(caps)):
                tile, cap = caps[k]
                if leave.count(tile) < cap:
                    leave.append(tile)
                    grow(k, leave)
                    leave.pop()

        grow(0, [])
        return Leaves.to_bytes(values)


def observations(gcg_text: str, rules: Ruleset) -> list[tuple[tuple[int, ...], int]]:
    """(leave kept, points the same player scored on their next turn) for every move
    line of a game record that has a next turn."""
    game = parse_gcg(gcg_text)
    pending: dict[int, tuple[int, ...]] = {}
    out = []
    for turn in replay(game, rules):
        ev = turn.event
        if ev.kind not in (PLAY, EXCHANGE, PASS) or not ev.rack:
            continue
        if ev.player_index in pending:
            out.append((pending.pop(ev.player_index), ev.score))
        kept = leave_kept(turn, rules)
        if kept is not None:
            pending[ev.player_index] = kept
    return out


def fit(
    rules: Ruleset, data: Sequence[tuple[tuple[int, ...], int]], ridge: float = RIDGE
) -> LeaveModel:
    """Ridge least squares of (next-turn score - mean) on per-tile counts and duplicates."""
    size = rules.size + 1
    width = 2 * size
    mean = sum(y for _, y in data) / max(len(data), 1)
    ata = [[0.0] * width for _ in range(width)]
    atb = [0.0] * width
    for leave, y in data:
        features: dict[int, float] = {}
        for tile, n in Counter(leave).items():
            features[tile] = float(n)
            if n > 1:
                features[size + tile] = float(n - 1)
        target = y - mean
        for i, fi in features.items():
            atb[i] += fi * target
            row = ata[i]
            for j, fj in features.items():
                row[j] += fi * fj
    for i in range(width):
        ata[i][i] += ridge
    return LeaveModel(rules, _solve(ata, atb))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the system is small and regularised)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        div = m[col][col]
        for r in range(col + 1, n):
            factor = m[r][col] / div
            if factor:
                for c in range(col, n + 1):
                    m[r][c] -= factor * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def train(
    rules: Ruleset,
    play: PlayGames,
    games: int,
    iterations: int,
    seed: int,
    eval_games: int = 0,
    say: Callable[[str], None] = print,
) -> LeaveModel:
    """The training loop: each iteration plays `games` games (score players first, then
    equity players with the current model), fits a new model to the leaves observed, and
    with `eval_games` measures it against the score player (seats alternating)."""
    from time import perf_counter

    model = LeaveModel(rules)
    started = perf_counter()
    for iteration in range(1, iterations + 1):
        policies = ("score",) if iteration == 1 else ("equity",)
        played = play(games, seed + iteration * 100_000, policies, False, model)
        data = [obs for g in played for obs in observations(g.gcg, rules)]
        model = fit(rules, data)
        say(
            f"iteration {iteration}: {len(played)} games ({policies[0]} players), "
            f"{len(data)} leaves observed, {perf_counter() - started:.1f} s"
        )
        if eval_games:
            result = win_rate(
                play(eval_games, 1_000_000, ("equity", "score"), True, model), "equity"
            )
            say(
                f"  after iteration {iteration}: equity player won {100 * result.rate:.1f}% of "
                f"{result.games} games against the score player "
                f"(95% CI {100 * result.low:.1f}-{100 * result.high:.1f}%)"
            )
    return model
