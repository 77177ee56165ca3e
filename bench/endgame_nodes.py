"""Endgame search effort, in nodes (the same on every machine) and seconds: every empty-bag
turn of the English records in ../shared/data/gcg (the mover's recorded rack against every
tile they cannot see), then Macondo's real endgames and the bench's self-played ones, each
solved once within a node cap. For comparing solver changes: run before and after.

    .venv/bin/python bench/endgame_nodes.py [--cap 2000000] [--games 30] [--only records]
        [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import DATA, english_turns, header
from endgame import macondo_endgames, selfplay_endgames

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.gcg import EXCHANGE, PASS, PLAY
from anchor.engine.legality import unseen_counts
from anchor.engine.notation import format_rack, parse_rack


def record_endgames(rules: Ruleset) -> list[tuple[str, str]]:
    """(name, CGP) of each recorded turn taken with the bag empty and the mover's rack known."""
    out = []
    for turn in english_turns(rules):
        ev = turn.event
        if ev.kind not in (PLAY, PASS, EXCHANGE) or not ev.rack:
            continue
        try:
            rack = list(parse_rack(rules, ev.rack))
            left = unseen_counts(turn.board, rack, strict=True)
        except Exception:  # noqa: BLE001 - a record's odd rack: not an endgame we can state
            continue
        unseen = tuple(t for t, n in enumerate(left) for _ in range(n))
        if not 0 < len(unseen) <= rules.rack_size:
            continue
        mine = format_rack(rules, tuple(sorted(rack)))
        theirs = format_rack(rules, unseen)
        out.append((f"line{ev.line}", f"{turn.board.to_cgp()} {mine}/{theirs} 0/0 0"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=int, default=2_000_000, help="nodes per position")
    parser.add_argument("--games", type=int, default=30, help="self-played endgames")
    parser.add_argument("--table-mb", type=float, default=64.0)
    parser.add_argument("--only", choices=["records", "macondo", "selfplay"], default=None)
    parser.add_argument("--quiet", action="store_true", help="totals only")
    parser.add_argument("--threads", type=int, default=1, help="search threads (one table)")
    args = parser.parse_args()
    header(f"Endgame search effort, cap {args.cap:,} nodes, {args.threads} thread(s), TWL06")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    sets = {
        "records": lambda: record_endgames(rules),
        "macondo": lambda: macondo_endgames(rules),
        "selfplay": lambda: selfplay_endgames(solver, args.games),
    }
    for name, make in sets.items():
        if args.only and name != args.only:
            continue
        positions = make()
        nodes, secs, proven, proven_nodes, proven_secs = 0, 0.0, 0, [], 0.0
        for label, cgp in positions:
            pos = parse_cgp(rules, cgp)
            start = time.perf_counter()
            end = solver.solve_endgame(
                pos.board, pos.racks[0], pos.racks[1], table_mb=args.table_mb,
                max_nodes=args.cap, threads=args.threads,
            )  # fmt: skip
            took = time.perf_counter() - start
            nodes += end.nodes
            secs += took
            proven += end.exact
            if end.exact:
                proven_nodes.append(end.nodes)
                proven_secs += took
            if not args.quiet:
                mark = "" if end.exact else "*"
                print(f"{name:<8} {label:<10} {'/'.join(pos.racks):<17} {end.value:>5}{mark:<1} "
                      f"{end.nodes:>10,} {took:>8.3f} s", flush=True)  # fmt: skip
        median = statistics.median(proven_nodes) if proven_nodes else 0
        print(
            f"== {name}: {len(positions)} positions, {proven} proven, {nodes:,} nodes, "
            f"{secs:.2f} s, {nodes / max(secs, 1e-9):,.0f} nodes/s; proven: "
            f"{sum(proven_nodes):,} nodes in {proven_secs:.2f} s, median {median:,.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
