"""Rack inference against MAGPIE's `infer`: turns of the English records (plays and
exchanges, the board not empty, at least 14 tiles unseen by the player watching so both
programs allow the same exchanges), the watcher's rack from their next recorded turn. For
each: Anchor's count of racks that explain the move, its unique racks and every letter's
count at each multiplicity, against MAGPIE's (TWL06, its leaves, margin 5); then the time
of each at one thread (MAGPIE's from sending the command to its last line, median of
--runs). MAGPIE is built by ../shared/peers/magpie/build.sh; without it only Anchor runs.

    .venv/bin/python bench/infer.py [--positions 24] [--exchanges 4] [--runs 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time

from common import DATA, english_turns, header, magpie_folder

from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine.gcg import EXCHANGE, PLAY
from anchor.engine.inference import infer
from anchor.engine.legality import unseen_counts
from anchor.engine.notation import parse_rack

SECTION_NAMES = ("kept", "thrown", "racks")


def record_moves(rules: Ruleset, wanted: int, exchanges_wanted: int) -> list[dict]:
    """Turns to infer from: each play or exchange whose watcher's rack is known."""
    turns = english_turns(rules)
    found = []
    for i, turn in enumerate(turns):
        ev = turn.event
        if ev.kind not in (PLAY, EXCHANGE) or not any(turn.board.cells):
            continue
        if ev.kind == PLAY and turn.score is not None and turn.score.total != ev.score:
            continue  # a record whose score the board does not give
        nxt = next(
            (t for t in turns[i + 1 : i + 3] if t.event.player_index != ev.player_index), None
        )
        if nxt is None or not nxt.event.rack or nxt.board is None:
            continue
        watcher = nxt.event.rack
        try:
            unseen = unseen_counts(turn.board, parse_rack(rules, watcher))
        except Exception:  # noqa: BLE001 - a record's odd rack
            continue
        if sum(unseen) < 2 * rules.rack_size:
            continue
        if ev.kind == PLAY:
            tiles = "".join("?" if ch.islower() else ch for _, _, ch in turn.play.placed)
            found.append(dict(board=turn.board, play=turn.play.notation, tiles=tiles,
                              score=ev.score, exchanged=0, watcher=watcher,
                              line=ev.line))  # fmt: skip
        else:
            n = int(ev.tiles) if ev.tiles.isdigit() else len(ev.tiles)
            if n:
                found.append(dict(board=turn.board, play=None, tiles="", score=0, exchanged=n,
                                  watcher=watcher, line=ev.line, unseen=sum(unseen)))  # fmt: skip
    plays = [m for m in found if not m["exchanged"]]
    # exchanges with the fewest tiles unseen first: from a full bag each program judges
    # a million racks or more (minutes for MAGPIE)
    exchanges = sorted((m for m in found if m["exchanged"]), key=lambda m: m["unseen"])[
        :exchanges_wanted
    ]
    step = max(1, len(plays) // max(1, wanted - len(exchanges)))
    return exchanges + plays[::step][: wanted - len(exchanges)]


def anchor_counts(inf) -> dict:
    out = {}
    for name in SECTION_NAMES:
        t = getattr(inf, name, None) if name != "kept" else inf.kept
        if t is None:
            continue
        out[name] = (t.draws, t.racks, {o.letter: (o.draws, o.racks) for o in t.letters if o.draws})
    return out


def magpie_counts(text: str, exchange: bool) -> dict:
    parts = re.split(r"\n\s*(?:Tiles Exchanged|Rack)\s*\n", text)
    out = {}
    for name, part in zip(SECTION_NAMES if exchange else ("kept",), parts, strict=False):
        if "No possible target racks" in part:
            out[name] = (0, 0, {})
            continue
        total = int(re.search(r"Total target racks:\s+(\d+)", part).group(1))
        unique = int(re.search(r"Total unique target racks:\s+(\d+)", part).group(1))
        letters = {}
        for line in part.splitlines():
            cells = line.split()
            if (
                len(cells) >= 7
                and len(cells[0]) == 1
                and not cells[0].isdigit()
                and re.match(r"\d", cells[1])
            ):
                nums = cells[3:]
                draws = tuple(int(nums[j + 2]) for j in range(0, len(nums) - 3, 4))
                racks = tuple(int(nums[j + 3]) for j in range(0, len(nums) - 3, 4))
                while draws and draws[-1] == 0:
                    draws, racks = draws[:-1], racks[:-1]
                if draws:
                    letters[cells[0]] = (draws, racks)
        out[name] = (total, unique, letters)
    return out


class Magpie:
    """One MAGPIE process answering `infer` commands."""

    def __init__(self, folder):
        self.proc = subprocess.Popen([str(folder / "bin" / "magpie")], cwd=folder, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=1)  # fmt: skip
        self.send("set -mode sync -savesettings false -lex TWL06 -threads 1 -imargin 5")

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def infer(self, cgp: str, command: str) -> tuple[str, float]:
        self.send(f"cgp {cgp}")
        start = time.perf_counter()
        self.send(command)
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("MAGPIE stopped: " + "".join(lines[-5:]))
            lines.append(line)
            if line.startswith("Equity margin:") or line.startswith("error"):
                break
        return "".join(lines), time.perf_counter() - start

    def close(self):
        self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=24)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--exchanges", type=int, default=4, help="of the positions")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    header(f"Rack inference against MAGPIE, TWL06, margin 5, Anchor {args.threads} thread(s)")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = solver.leaves(DATA / "kwg" / "TWL06.klv2")
    folder, why = magpie_folder()
    magpie = Magpie(folder) if folder else None
    print(f"# MAGPIE: {why}")
    moves = record_moves(rules, args.positions, args.exchanges)
    print(f"{'line':>6} {'move':>22} {'racks':>8} {'unique':>7} {'tried':>8} {'anchor s':>9} "
          f"{'magpie s':>9}  equal")  # fmt: skip
    ratios, equal, compared = [], 0, 0
    for m in moves:

        def run(m=m):
            return infer(solver, m["board"], leaves, m["play"], exchanged=m["exchanged"],
                         observer=m["watcher"], threads=args.threads)  # fmt: skip

        inf = run()
        times = [0.0] * args.runs
        for r in range(args.runs):
            start = time.perf_counter()
            run()
            times[r] = time.perf_counter() - start
        mine = statistics.median(times)
        theirs, same = None, ""
        if magpie:
            cgp = f"{m['board'].to_cgp()} /{m['watcher']} 0/0 0"
            what = f"{m['exchanged']}" if m["exchanged"] else f"{m['tiles']} {m['score']}"
            command = f"infer 1 {what} - {m['watcher']}"
            samples = []
            for _ in range(args.runs):
                text, secs = magpie.infer(cgp, command)
                samples.append(secs)
            theirs = statistics.median(samples)
            got = magpie_counts(text, bool(m["exchanged"]))
            ok = got == anchor_counts(inf)
            compared += 1
            equal += ok
            same = "yes" if ok else "NO"
            if not ok:
                print(f"#   line {m['line']}: anchor {anchor_counts(inf)}\n#   magpie {got}")
            ratios.append(mine / theirs)
        label = m["play"] or f"exchange {m['exchanged']}"
        shown = theirs if theirs is not None else float("nan")
        print(f"{m['line']:>6} {label:>22} {inf.kept.draws:>8} {inf.kept.racks:>7} {inf.tried:>8} "
              f"{mine:>9.4f} {shown:>9.4f}  {same}")  # fmt: skip
    if magpie:
        magpie.close()
        print(f"# equal to MAGPIE: {equal} of {compared}; time Anchor/MAGPIE median "
              f"{statistics.median(ratios):.2f}, geomean "
              f"{statistics.geometric_mean(ratios):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
