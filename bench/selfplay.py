"""Self-play benchmark of record: whole games with every invariant checked every turn.

1,000 English games and 200 each of Russian Scrabble and Эрудит in-process, the same
English games without checks (games/s on one core), and 1,000 English games through
2 workers (redis-server and workers started here).
"""

from __future__ import annotations

from common import header
from service import fleet

from anchor.client.cli import main as anchor


def main() -> None:
    header("selfplay: greedy players, default lexica (dictionaries/build)")
    for ruleset, games in (("english", 1000), ("russian", 200), ("erudit", 200)):
        anchor(["selfplay", "--ruleset", ruleset, "--games", str(games), "--seed", "1"])
    anchor(["selfplay", "--games", "1000", "--seed", "1", "--no-check"])
    with fleet("selfplay", 2, lexicon="english") as url:
        through = [
            "selfplay",
            "--games",
            "1000",
            "--seed",
            "1",
            "--redis-url",
            url,
            "--queue",
            "selfplay",
            "--games-per-job",
            "25",
        ]
        anchor(through)
        anchor([*through, "--no-check"])


if __name__ == "__main__":
    main()
