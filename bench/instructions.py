"""Instructions the C generator executes, counted by valgrind's callgrind: a before/after
measure that does not wander with the machine (wall-clock times on a shared 2-core VM
moved by up to 40% between back-to-back runs of one build).

Only `Generator.generate` is counted (--toggle-collect), so Python around it is not. Two
workloads: the 7 bench positions (TWL06.kwg), each call on its own (callgrind dumps its
counters before every call); and every turn with a known rack in the English game records,
totals per mode. Run it on the build before a change and after it: equal input, equal
counts, on any machine with valgrind.
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--child", choices=["positions", *GAME_MODES], help=argparse.SUPPRESS)
    parser.add_argument("--no-games", action="store_true", help="only the bench positions")
    args = parser.parse_args()
    if args.child == "positions":
        return bench_positions()
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
