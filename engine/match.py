"""Who won: win rates of the policies in a set of self-play games, with a confidence
interval, so that "equity beats score" is a measured claim, not an impression."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one game ended: the final scores and the policy of each seat, in seat order
    (and its record, for those who learn from it)."""

    scores: tuple[int, ...]
    policies: tuple[str, ...]
    gcg: str = ""


@dataclass(frozen=True, slots=True)
class WinRate:
    """A policy's wins (a draw counts half) over games, and the 95% Wilson interval."""

    policy: str
    wins: float
    games: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a win rate (z = 1.96: 95%)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def win_rate(games: Iterable[Outcome], policy: str) -> WinRate:
    """How often `policy` beat the best of the other policies in games that seat it and
    another one."""
    wins, n = 0.0, 0
    for game in games:
        pairs = list(zip(game.scores, game.policies, strict=True))
        mine = [s for s, pol in pairs if pol == policy]
        theirs = [s for s, pol in pairs if pol != policy]
        if not mine or not theirs:
            continue
        n += 1
        wins += 1.0 if max(mine) > max(theirs) else 0.5 if max(mine) == max(theirs) else 0.0
    return WinRate(policy, wins, n, *wilson(wins, n))
