"""Instructions the C generator executes, counted by valgrind's callgrind: a before/after
measure that does not wander with the machine (wall-clock times on a shared 2-core VM
moved by up to 40% between back-to-back runs of one build).

Only `Generator.generate` is counted (--toggle-collect), so Python around it is not. The
workloads: the 7 bench positions (TWL06.kwg), each call on its own (callgrind dumps its
counters before every call); every turn with a known rack in the English game records,
totals per mode; and with --racks, bench/blank_racks.py's random racks by their blanks
(two builds of equal instructions can differ by a third in wall time on one rack: code
layout). Run it on the build before a change and after it: equal input, equal counts,
on any machine with valgrind.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import DATA, ROOT, english_turns, header

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.errors import AnchorError
from anchor.engine.gcg import EXCHANGE, PASS, PLAY
from anchor.engine.leaves import Leaves

POSITIONS = [
    "JOSH2",
    "NOAH_VS_MISHU",
    "SOME_ISC_GAME",
    "VS_MATT2",
    "VS_ED",
    "VS_FRENTZ",
    "MANY_MOVES",
]
# (label, limit, by equity): one column each
MODES = [
    ("all", None, False),
    ("top 10", 10, False),
    ("best", 1, False),
    ("eq. all", None, True),
    ("eq. best", 1, True),
]
GAME_MODES = ["all", "top 10", "eq. best"]
RACKS = ["racks0", "racks1", "racks2"]  # children: blank_racks.py's racks by their blanks


def solver_and_leaves() -> tuple[Solver, Leaves, Ruleset]:
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    return solver, Leaves.open(DATA / "kwg" / "TWL06.klv2", rules), rules


def generate(solver: Solver, leaves: Leaves, board, rack: str, mode: str) -> None:
    _label, limit, by_equity = next(m for m in MODES if m[0] == mode)
    extra = {"rank": "equity", "leaves": leaves} if by_equity else {}
    solver.generate_moves(board, rack, limit=limit, **extra)


def bench_positions() -> None:
    """Child: every mode on every bench position, one call each, mode by mode: no board
    comes twice in a row, so none is served from the generator's prepared board (that
    would count preparing it for every letter on the second call and nothing after)."""
    solver, leaves, rules = solver_and_leaves()
    text = (DATA / "bench" / "positions.cgp").read_text().splitlines()
    positions = [parse_cgp(rules, ln) for ln in text if ln.strip() and not ln.startswith("#")]
    for mode, *_ in MODES:
        for pos in positions:
            generate(solver, leaves, pos.board, pos.racks[0], mode)


def game_turns(rules: Ruleset) -> list[tuple[object, str]]:
    """(board, rack) of every English record's turn with a known rack."""
    return [
        (t.board, t.event.rack)
        for t in english_turns(rules)
        if t.event.rack and t.event.kind in (PLAY, EXCHANGE, PASS)
    ]


def bench_games(mode: str) -> None:
    """Child: one mode over every game-record turn with a known rack."""
    solver, leaves, rules = solver_and_leaves()
    for board, rack in game_turns(rules):
        try:
            generate(solver, leaves, board, rack, mode)
        except AnchorError:  # a recorded rack the rules reject
            continue


def bench_racks(blanks: int) -> None:
    """Child: best play by equity for each of bench/blank_racks.py's random racks (its
    default seed and count) with `blanks` blanks, one call each; a board's racks come in a
    row, as they do there."""
    from blank_racks import BENCH, racks_for  # a bench script beside this one

    solver, leaves, rules = solver_and_leaves()
    rng = random.Random(5)
    for count in (0, 1, 2):  # drawn in blank_racks.py's order, so the racks are its racks
        lines = [ln for cgp in BENCH for ln in racks_for(rules, cgp, count, 6, rng)]
        if count != blanks:
            continue
        for line in lines:
            position = parse_cgp(rules, line)
            generate(solver, leaves, position.board, position.racks[0], "eq. best")


def callgrind(args: list[str], out: Path, per_call: bool) -> list[int]:
    """Run this script with `args` under callgrind; instructions per dump, in order."""
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--toggle-collect=Generator_generate",
        *(["--dump-before=Generator_generate"] if per_call else []),
        sys.executable,
        __file__,
        *args,
    ]
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    files = sorted(out.parent.glob(out.name + ".*"), key=lambda p: int(p.suffix[1:]))
    counts = []
    for path in [*files, out]:
        found = re.search(r"^(?:summary|totals): (\d+)", path.read_text(), re.M)
        counts.append(int(found.group(1)) if found else 0)
        path.unlink()
    # with --dump-before the first dump precedes the first call: nothing in it
    return counts[1:] if per_call else counts[-1:]


def fmt(n: float) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.0f}k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    children = ["positions", *GAME_MODES, *RACKS]
    parser.add_argument("--child", choices=children, help=argparse.SUPPRESS)
    parser.add_argument("--no-games", action="store_true", help="only the bench positions")
    parser.add_argument(
        "--racks",
        action="store_true",
        help="also bench/blank_racks.py's random racks, best by equity, totals by blanks",
    )
    args = parser.parse_args()
    if args.child == "positions":
        return bench_positions()
    if args.child in RACKS:
        return bench_racks(RACKS.index(args.child))
    if args.child:
        return bench_games(args.child)
    header("instructions: Generator.generate under callgrind, TWL06.kwg")
    if shutil.which("valgrind") is None:
        print("# valgrind is not installed here: nothing to count (apt install valgrind)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        counts = callgrind(["--child", "positions"], out, per_call=True)
        if len(counts) != len(POSITIONS) * len(MODES):
            sys.exit(f"expected {len(POSITIONS) * len(MODES)} calls, callgrind saw {len(counts)}")
        print(f"{'position':<16}" + "".join(f"{m[0]:>10}" for m in MODES))
        for i, name in enumerate(POSITIONS):
            row = counts[i :: len(POSITIONS)]  # the calls go mode by mode
            print(f"{name:<16}" + "".join(f"{fmt(n):>10}" for n in row))
        if args.racks:
            print("# bench/blank_racks.py's racks, best by equity: instructions per rack (total)")
            for blanks, child in enumerate(RACKS):
                calls = callgrind(["--child", child], out, per_call=True)
                print(f"{blanks} blank{'s' * (blanks != 1):<11}{fmt(sum(calls) / len(calls)):>10}  "
                      f"({fmt(sum(calls))}, {len(calls)} racks)")  # fmt: skip
        if args.no_games:
            return
        rules = Ruleset.load("english")
        n = len(game_turns(rules))
        print(f"# game records: {n} turns with a known rack; instructions per turn (total)")
        for mode in GAME_MODES:
            (total,) = callgrind(["--child", mode], out, per_call=False)
            print(f"{mode:<16}{fmt(total / n):>10}  ({fmt(total)})")


if __name__ == "__main__":
    main()
