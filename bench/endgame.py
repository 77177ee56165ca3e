"""Endgames: Anchor's exact solver beside MAGPIE's `endgame`, one thread each, same
positions, same lexicon (TWL06, MAGPIE's file), values compared.

Positions: the real endgames (bag empty, both racks known) among Macondo's test CGPs in
../shared/data/cgp, and endgames from self-played TWL06 games (the top play by score each
turn from seeded bags) at the moment the bag empties. MAGPIE runs from the folder
../shared/peers/magpie/build.sh prints (built for this machine, cached), with its README's
settings (-eplies 25 -ttfraction 0.05); when it is absent the table says so.

    .venv/bin/python bench/endgame.py [--games 12] [--timeout 120] [--table-mb 64] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import time
from pathlib import Path

from common import DATA, header, magpie_folder, top_score_game

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.notation import format_rack


def macondo_endgames(rules: Ruleset) -> list[tuple[str, str]]:
    """(name, CGP) of Macondo's test positions that are real endgames: both racks given
    and every tile of the set on the board or a rack."""
    out, seen = [], set()
    for line in (DATA / "cgp" / "macondo_test_cgp.jsonl").read_text().splitlines():
        entry = json.loads(line)
        cgp = " ".join(entry["cgp"].split()[:4])
        try:
            pos = parse_cgp(rules, cgp)
        except Exception:  # noqa: BLE001 - positions for other boards or alphabets
            continue
        tiles = pos.board.tile_count() + sum(len(r) for r in pos.racks)
        if (
            len(pos.racks) == 2
            and all(pos.racks)
            and tiles == rules.total_tiles
            and cgp not in seen
        ):
            seen.add(cgp)
            out.append((entry["name"], cgp))
    return out


def selfplay_endgames(solver: Solver, games: int) -> list[tuple[str, str]]:
    """(name, CGP) of the position when the bag empties in seeded top-score games."""
    rules = solver.rules
    out = []
    seed = 0
    while len(out) < games:
        seed += 1
        game = top_score_game(solver, seed)
        board, racks, side, scores, bag = game.board, game.racks, game.side, game.scores, game.bag
        if bag or not racks[side] or not racks[1 - side]:
            continue
        mine, theirs = (
            format_rack(rules, tuple(sorted(r))) for r in (racks[side], racks[1 - side])
        )
        out.append(
            (
                f"selfplay{seed}",
                f"{board.to_cgp()} {mine}/{theirs} {scores[side]}/{scores[1 - side]} 0",
            )
        )
    return out


def magpie_endgame(
    folder: Path, cgp: str, timeout: float, fraction: float, threads: int = 1
) -> tuple[int | None, float | None, str]:
    """MAGPIE's value (V of its best play) and the time it reports, or None and why. In
    sync mode it finishes the command before it reads the end of its input."""
    settings = (
        f"set -mode sync -savesettings false -lex TWL06 -threads {threads} -eplies 25 "
        f"-ttfraction {fraction:g}\n"
    )
    # the first line is read in its default (async) mode: a command arriving before it has
    # switched to sync is refused, so the position follows a moment later
    proc = subprocess.Popen([str(folder / "bin" / "magpie")], cwd=folder, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    try:
        proc.stdin.write(settings)
        proc.stdin.flush()
        time.sleep(0.5)
        out, err = proc.communicate(f"cgp {cgp}\nendgame\n", timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None, None, f"no answer in {timeout:g} s"
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    lines = done.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Endgame (") and i + 2 < len(lines):
            secs = re.search(r"time: ([0-9.]+)s", line)
            return magpie_value(lines[i + 2]), float(secs.group(1)) if secs else None, "ok"
    return None, None, (done.stdout + done.stderr).strip()[-60:] or f"exit {done.returncode}"


def magpie_value(row: str) -> int:
    """V from MAGPIE's first table row: after the play ('pass', or square, word and score)."""
    found = re.match(r"\s*(?:pass|\S+ \S+ -?\d+(?: \([^)]*\))?)\s+(-?\d+)\s", row)
    if not found:
        raise ValueError(f"MAGPIE's endgame row not understood: {row!r}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=12, help="self-played endgames (default 12)")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per position and engine"
    )
    parser.add_argument("--table-mb", type=float, default=64.0, help="Anchor's table (MiB)")
    parser.add_argument(
        "--magpie-tt",
        type=float,
        default=0.05,
        help="MAGPIE's -ttfraction: its table's share of memory (default 0.05, its README's)",
    )
    parser.add_argument("--threads", type=int, default=1, help="threads, each engine")
    args = parser.parse_args()
    header(f"Endgame: exact solve, {args.threads} thread(s) each, Anchor vs MAGPIE (TWL06)")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    positions = macondo_endgames(rules) + selfplay_endgames(solver, args.games)
    folder, why = magpie_folder()
    print(f"# MAGPIE: {why}")
    print(
        f"# Anchor table {args.table_mb:g} MiB; MAGPIE -ttfraction {args.magpie_tt:g}; "
        "* = not proven in time"
    )
    print(
        f"{'position':<12} {'racks':<17} {'anchor V':>8} {'s':>8} {'nodes':>10} "
        f"{'magpie V':>8} {'s':>8}  agree"
    )
    ours, theirs, agree = [], [], 0
    for name, cgp in positions:
        pos = parse_cgp(rules, cgp)
        try:
            end = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], budget_s=args.timeout,
                                       table_mb=args.table_mb, threads=args.threads)  # fmt: skip
            mine = f"{end.value:>8} {end.seconds:>8.3f} {end.nodes:>10}" + (
                "" if end.exact else "*"
            )
        except Exception as exc:  # noqa: BLE001 - reported in the table
            end, mine = None, f"{type(exc).__name__}"
        value = secs = None
        note = why
        if folder:
            value, secs, note = magpie_endgame(
                folder, cgp, args.timeout, args.magpie_tt, args.threads
            )
        same = "-" if value is None or end is None else ("yes" if value == end.value else "NO")
        agree += same == "yes"
        if end is not None and end.exact:
            ours.append(end.seconds)
        if secs is not None:
            theirs.append(secs)
        racks = "/".join(pos.racks)
        theirs_text = f"{value:>8} {secs:>8.3f}" if value is not None else f"{'':>8} {note[:30]}"
        print(f"{name:<12} {racks:<17} {mine} {theirs_text}  {same}", flush=True)
    if ours:
        print(
            "median time to a proven answer: "
            f"Anchor {statistics.median(ours):.3f} s over {len(ours)}",
            end="",
        )
        print(f"; MAGPIE {statistics.median(theirs):.3f} s over {len(theirs)}" if theirs else "")
    print(f"values equal on {agree} of {len(positions)} positions")


if __name__ == "__main__":
    main()
