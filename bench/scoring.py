"""Scoring benchmark: score_play and validate_play on recorded plays of real games."""

from __future__ import annotations

from common import DATA, english_turns, header, median_time

from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine.gcg import PLAY


def main() -> None:
    header("scoring: every recorded play of the English GCG files")
    rules = Ruleset.load("english")
    lexicon = Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules)
    solver = Solver(lexicon, rules)
    cases = [
        (turn.board, f"{turn.event.coordinate} {turn.event.word}", turn.event.rack)
        for turn in english_turns(rules)
        if turn.event.kind == PLAY
    ]
    score = median_time(lambda: [solver.score_play(b, p) for b, p, _ in cases], runs=5) / len(cases)
    validate = median_time(
        lambda: [solver.validate_play(b, p, rack=r or None) for b, p, r in cases], runs=5
    ) / len(cases)
    print(f"plays                        {len(cases):6d}")
    print(f"score_play (median of 5)     {score * 1e6:6.1f} µs per play")
    print(f"validate_play with rack      {validate * 1e6:6.1f} µs per play")


if __name__ == "__main__":
    main()
