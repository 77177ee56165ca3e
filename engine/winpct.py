"""How likely the player on turn is to win, from their lead and the tiles still to play.

A simulation's playouts stop a few moves into the game, with most tiles often still to
come: "ahead at the end of the playout" then says little about winning. The chance that
the player on turn wins is modelled as

    p = σ(alpha · (lead + tempo) / (1 + beta · unplayed))

where `unplayed` counts the tiles not yet on the board (bag and racks): a lead matters
more as the game runs out of tiles, and being on turn is worth `tempo` points. For a fixed
beta it is a logistic regression on two features, so `fit` scans beta and solves the rest
by Newton's method, on positions from self-played games (`samples`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .rules import Ruleset


@dataclass(frozen=True, slots=True)
class WinModel:
    """P(the player on turn wins); a draw counts half."""

    alpha: float
    tempo: float
    beta: float

    def on_turn(self, lead: float, unplayed: int) -> float:
        """The chance that the player on turn, `lead` points ahead, wins."""
        if unplayed <= 0:  # the game is over: the lead is the result
            return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0
        x = self.alpha * (lead + self.tempo) / (1.0 + self.beta * unplayed)
        return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0

    def after(self, lead: float, unplayed: int, on_turn: bool) -> float:
        """The chance that a player `lead` points ahead wins, whoever is on turn."""
        if on_turn:
            return self.on_turn(lead, unplayed)
        return 1.0 - self.on_turn(-lead, unplayed)

    def chances(
        self, leads: Iterable[float], unplayed: Iterable[int], on_turn: bool
    ) -> list[float]:
        """`after` of many playouts, the same arithmetic without two calls each (a
        simulation's summary and its pruning by win ask it of every value)."""
        alpha, tempo, beta, exp = self.alpha, self.tempo, self.beta, math.exp
        out = []
        for lead, n in zip(leads, unplayed, strict=True):
            lead = lead if on_turn else -lead
            if n <= 0:
                chance = 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0
            else:
                x = alpha * (lead + tempo) / (1.0 + beta * n)
                chance = 1.0 / (1.0 + exp(-x)) if x > -700 else 0.0
            out.append(chance if on_turn else 1.0 - chance)
        return out


# Fitted by `fit(samples(games))` on 3,000 self-played games per ruleset (seeds 1..3000):
# English with two equity players (TWL06, MAGPIE's TWL06.klv2), Russian and Эрудит with
# two top-scoring players (their lexica from `anchor lexicon install`).
MODELS: dict[str, WinModel] = {
    "english": WinModel(alpha=0.14038, tempo=16.4066, beta=0.105),  # 73,115 positions
    "russian": WinModel(alpha=0.14880, tempo=6.8456, beta=0.065),  # 112,773 positions
    "erudit": WinModel(alpha=0.18360, tempo=6.0512, beta=0.085),  # 151,380 positions
}
DEFAULT = "english"


def model_for(rules: Ruleset) -> WinModel:
    """The model fitted for these rules, else the English one."""
    return MODELS.get(rules.name, MODELS[DEFAULT])


def samples(games: Iterable) -> list[tuple[float, int, float]]:
    """(lead of the player on turn, tiles not yet on the board, their result: 1, ½ or 0)
    before every move of every game (engine.selfplay.Game, two players)."""
    out = []
    for game in games:
        final = game.scores
        if len(final) != 2:
            continue
        total = game.rules.total_tiles
        scores = [0, 0]
        placed = 0
        for turn in game.turns:
            me = turn.player
            lead = scores[me] - scores[1 - me]
            result = final[me] - final[1 - me]
            out.append(
                (float(lead), total - placed, 1.0 if result > 0 else 0.5 if result == 0 else 0.0)
            )
            scores[me] = turn.total
            placed += len(turn.move.placed)
    return out


def fit(data: Sequence[tuple[float, int, float]], betas: Iterable[float] | None = None) -> WinModel:
    """The WinModel of highest likelihood on `data` (see samples), beta from a scan."""
    best: tuple[float, WinModel] | None = None
    for beta in betas if betas is not None else [b / 200 for b in range(0, 41)]:
        rows = [(lead / (1 + beta * n), 1 / (1 + beta * n), y) for lead, n, y in data]
        w1, w2 = _logistic(rows)
        model = WinModel(w1, w2 / w1 if w1 else 0.0, beta)
        loss = _log_loss(model, data)
        if best is None or loss < best[0]:
            best = (loss, model)
    if best is None:
        raise ValueError("no beta to try")
    return best[1]


def _logistic(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """Weights (w1, w2) of p = σ(w1·x1 + w2·x2) by Newton's method (no intercept)."""
    w1 = w2 = 0.0
    for _ in range(50):
        g1 = g2 = h11 = h12 = h22 = 0.0
        for x1, x2, y in rows:
            z = w1 * x1 + w2 * x2
            p = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
            r = p - y
            g1 += r * x1
            g2 += r * x2
            v = p * (1 - p) + 1e-9
            h11 += v * x1 * x1
            h12 += v * x1 * x2
            h22 += v * x2 * x2
        det = h11 * h22 - h12 * h12
        if det <= 0:
            break
        d1 = (h22 * g1 - h12 * g2) / det
        d2 = (h11 * g2 - h12 * g1) / det
        w1, w2 = w1 - d1, w2 - d2
        if abs(d1) < 1e-10 and abs(d2) < 1e-10:
            break
    return w1, w2


def _log_loss(model: WinModel, data: Sequence[tuple[float, int, float]]) -> float:
    total = 0.0
    for lead, n, y in data:
        p = min(max(model.on_turn(lead, n), 1e-12), 1 - 1e-12)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
    return total / max(len(data), 1)
