"""Refit engine/winpct.py's MODELS: 3,000 self-played games per ruleset (seeds 1..N),
English between two equity players (TWL06 and MAGPIE's TWL06.klv2 from ../shared/data),
Russian and Эрудит between two top-scoring players (dictionaries/build lexica). Prints the
WinModel of each; copy them into MODELS. Usage: python bench/fit_winpct.py [GAMES]"""

from __future__ import annotations

import sys
import time

from common import DATA, ROOT

from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine.leaves import Leaves
from anchor.engine.selfplay import EquityPlayer, play_game
from anchor.engine.winpct import fit, samples


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    for name in ("english", "russian", "erudit"):
        rules = Ruleset.load(name)
        started = time.perf_counter()
        if name == "english":
            solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
            leaves = Leaves.open(DATA / "kwg" / "TWL06.klv2", rules)
            games = [
                play_game(solver, s, policies=[EquityPlayer(leaves), EquityPlayer(leaves)],
                          check=False)
                for s in range(1, count + 1)
            ]  # fmt: skip
        else:
            solver = Solver(
                Lexicon.open(ROOT / "dictionaries" / "build" / f"{name}.kwg", rules), rules
            )
            games = [play_game(solver, s, check=False) for s in range(1, count + 1)]
        data = samples(games)
        model = fit(data)
        took = time.perf_counter() - started
        print(f"{name}: {model} from {len(data):,} positions of {count} games ({took:.0f} s)")


if __name__ == "__main__":
    main()
