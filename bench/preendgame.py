"""Pre-endgames: Anchor's solver (anchor.engine.preendgame, default STAGES) beside MAGPIE's
`peg`, one thread each, one after the other, on the same positions and lexicon (TWL06 and
its leaves, MAGPIE's files): the time each takes and the play each puts first.

Positions: turns of the English game records in ../shared/data/gcg taken with 1 or 2 tiles
in the bag, the mover's recorded rack known and the opponent's not (the CGP gives `RACK/`),
the scores and scoreless turns as recorded; duplicates (the same game in two files) are
dropped and the rest picked evenly across the records. Seeded self-played games (the top
play by score each turn) stop at 1 or 2 tiles in the bag to fill in when the records give too
few. Both engines keep 32, 16, 8, 4 and 2 candidates over 2- to 6-ply endgames (Anchor's
default STAGES, MAGPIE's default -pegtopk); Anchor's first 32 are the top by equity
(TWL06.klv2) and the pass, MAGPIE's the top of a greedy playout of every play. A play that
leaves tiles in the bag: Anchor values it by the opponent's best static reply, the draws and
then the endgame; MAGPIE by default (-pegnested true) by a small inner pre-endgame, with
--flat (-pegnested false) by a greedy playout. Times are each engine's own (Anchor's
Preendgame.seconds, the total MAGPIE prints), without loading the lexicon, with each one's
finished stages timed too; a side that runs past --timeout is stopped there (`>T`).

    .venv/bin/python bench/preendgame.py [--one 6] [--two 4] [--timeout 70] [--table-mb 16]
        [--flat] [--only anchor|magpie]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from common import DATA, header, magpie_folder, top_score_game

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.errors import AnchorError, WorkLimitError
from anchor.engine.gcg import EXCHANGE, PASS, PLAY, WITHDRAWN, read_gcg, replay
from anchor.engine.legality import unseen_counts
from anchor.engine.notation import format_rack, parse_rack
from anchor.engine.preendgame import STAGES, solve_preendgame

KLV2 = DATA / "kwg" / "TWL06.klv2"


def record_preendgames(rules: Ruleset) -> dict[int, list[tuple[str, str]]]:
    """{bag size: [(name, CGP)]} of every recorded turn with 1 or 2 tiles in the bag and the
    mover's full rack known, the opponent's rack left unknown."""
    out: dict[int, list[tuple[str, str]]] = {1: [], 2: []}
    seen = set()
    for path in sorted((DATA / "gcg").rglob("*.gcg")):
        try:
            turns = list(replay(read_gcg(path), rules))
        except AnchorError:
            continue
        totals: dict[int, int] = {}
        zeros = 0  # scoreless turns in a row before this one
        for turn in turns:
            ev = turn.event
            if ev.kind in (PLAY, PASS, EXCHANGE) and ev.rack:
                try:
                    rack = parse_rack(rules, ev.rack)
                    unseen = sum(unseen_counts(turn.board, rack, strict=True))
                except AnchorError:
                    unseen = 0
                bag = unseen - rules.rack_size
                if len(rack) == rules.rack_size and bag in out:
                    mine = ev.total - ev.score
                    theirs = totals.get(1 - ev.player_index, 0)
                    cgp = (
                        f"{turn.board.to_cgp()} {format_rack(rules, tuple(sorted(rack)))}/ "
                        f"{mine}/{theirs} {zeros}"
                    )
                    if cgp not in seen:
                        seen.add(cgp)
                        out[bag].append((f"{path.stem[:14]}:{ev.line}", cgp))
            if ev.kind == PLAY:
                zeros = 0
            elif ev.kind in (PASS, EXCHANGE, WITHDRAWN):
                zeros += 1
            totals[ev.player_index] = ev.total
    return out


def selfplay_preendgames(solver: Solver, wanted: dict[int, int]) -> dict[int, list]:
    """{bag size: [(name, CGP)]}: seeded top-score games stopped when the bag first holds 1
    or 2 tiles, the mover's rack given and the opponent's not, until `wanted` are found."""
    rules = solver.rules
    out: dict[int, list] = {k: [] for k in wanted}
    seed = 0
    while any(len(out[k]) < n for k, n in wanted.items()) and seed < 1000:
        seed += 1
        game = top_score_game(solver, seed, bag_left=2)
        board, racks, side, scores, bag = game.board, game.racks, game.side, game.scores, game.bag
        passes = game.passes
        k = len(bag)
        if k in out and len(out[k]) < wanted[k] and passes == 0:
            rack = format_rack(rules, tuple(sorted(racks[side])))
            cgp = f"{board.to_cgp()} {rack}/ {scores[side]}/{scores[1 - side]} 0"
            out[k].append((f"selfplay{seed}", cgp))
    return out


def pick(items: list, n: int) -> list:
    """n of items spread evenly over the list (all of them when there are no more)."""
    if len(items) <= n:
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


@dataclass
class Answer:
    """One engine's answer: seconds (None: none), whether it stopped at the time limit, its
    top play with win% and final spread, every play it ranked (best first), or why none."""

    seconds: float | None = None
    over: bool = False
    top: str = ""
    win: float = 0.0
    spread: float = 0.0
    ranked: tuple[str, ...] = ()
    note: str = ""
    stages: tuple[float, ...] = ()  # seconds of each endgame stage finished, 2-ply first


def anchor_preendgame(solver, leaves, cgp: str, timeout: float, table_mb: float) -> Answer:
    pos = parse_cgp(solver.rules, cgp)
    lead = pos.scores[0] - pos.scores[1]
    try:
        found = solve_preendgame(
            solver,
            pos.board,
            pos.racks[0],
            lead=lead,
            budget_s=timeout,
            table_mb=table_mb,
            leaves=leaves,
            scoreless=pos.zero_turns,
            stages=STAGES,
            threads=1,
        )
    except WorkLimitError:
        return Answer(timeout, True, note="first stage unfinished")
    except AnchorError as exc:
        return Answer(note=f"refused: {exc}"[:60])
    best = found.plays[0]
    names = tuple(magpie_name(p.move.notation) for p in found.plays)
    note = f"{found.solves} endgames, {found.nodes:,} nodes"
    if found.budget_hit:
        note = f"stopped in stage {len(found.stages) + 1}; " + note
    return Answer(
        found.seconds,
        found.budget_hit,
        names[0],
        100 * best.win_rate,
        lead + best.mean,
        names,
        note,
        tuple(s for _, _, s in found.stages),
    )


def magpie_name(notation: str) -> str:
    """Anchor's notation as MAGPIE prints a play (the same but the pass, `-`)."""
    return "pass" if notation == "-" else notation


ROW = re.compile(
    r"^\s*(?:\d+-ply\s+|greedy\s+)?\d+\s+(pass|\S+ \S+)\s+\d+\s+\d+\s+\d+\s+"
    r"([0-9.]+)\s+([-+]?[0-9.]+)\b"
)
# a row of its stage table: number, depth ('greedy' or 'N-ply eg'), candidates done/all, time
STAGE = re.compile(r"^(\d+)\s+(?:greedy|\d+-ply eg)\s+(\d+)/(\d+)\s+\S+\s+([0-9.]+)s")


def magpie_peg(folder: Path, cgp: str, timeout: float, nested: bool) -> Answer:
    """MAGPIE's `peg` on the CGP, limited to `timeout` seconds (-pegtlim), the rest of its
    settings its defaults. Its time is the total it prints; its plays, its ranking table."""
    settings = (
        "set -mode sync -savesettings false -lex TWL06 -threads 1 "
        f"-pegtlim {timeout:g} -pegnested {'true' if nested else 'false'}\n"
    )
    # as in endgame.py: the position follows once the settings have put it in sync mode
    proc = subprocess.Popen(
        [str(folder / "bin" / "magpie")],
        cwd=folder,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(settings)
        proc.stdin.flush()
        time.sleep(0.5)
        out, err = proc.communicate(f"cgp {cgp}\npeg\n", timeout=timeout * 1.5 + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return Answer(timeout, True, note=f"no answer in {timeout * 1.5 + 60:g} s; killed")
    lines = out.splitlines()
    total = next((line for line in lines if line.startswith("PEG (")), None)
    if total is None:
        return Answer(note=(out + err).strip()[-60:] or f"exit {proc.returncode}")
    secs = float(re.search(r"([0-9.]+)s$", total).group(1))
    over = "partial" in total or secs >= timeout
    ranked, stages = [], []
    for line in lines[lines.index(total) + 1 :]:
        found = ROW.match(line)
        if found:
            ranked.append((found.group(1), float(found.group(2)), float(found.group(3))))
        row = STAGE.match(line)
        if row and row.group(1) != "0" and row.group(2) == row.group(3):
            stages.append(float(row.group(4)))
    if not ranked:
        return Answer(secs, over, note=f"no ranking after {total!r}"[:60])
    stage = re.search(r"stage (\d+)", total).group(1)
    note = f"stopped in stage {stage}" if "partial" in total else ""
    name, win, spread = ranked[0]
    return Answer(secs, over, name, win, spread, tuple(r[0] for r in ranked), note, tuple(stages))


def place(play: str, ranked: tuple[str, ...]) -> str:
    """Where `play` stands in an engine's ranking, 1 first ("no": not among its candidates)."""
    if not play or not ranked:
        return "-"
    return str(ranked.index(play) + 1) if play in ranked else "no"


def shown(answer: Answer, timeout: float) -> str:
    if answer.seconds is None:
        return "-"
    return f">{timeout:g}" if answer.over else f"{answer.seconds:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", type=int, default=6, help="positions with 1 tile in the bag")
    parser.add_argument("--two", type=int, default=4, help="positions with 2 tiles in the bag")
    parser.add_argument(
        "--timeout",
        type=float,
        default=70.0,
        help="seconds per position and engine (default 70: 10 positions in under 25 min)",
    )
    parser.add_argument("--table-mb", type=float, default=16.0, help="Anchor's endgame table")
    parser.add_argument(
        "--flat", action="store_true", help="MAGPIE with -pegnested false (a flat rollout)"
    )
    parser.add_argument("--only", choices=["anchor", "magpie"], help="run one engine only")
    parser.add_argument("--list", action="store_true", help="print the positions and stop")
    args = parser.parse_args()
    header(
        "Pre-endgame, 1 thread each, Anchor vs MAGPIE peg (TWL06 + TWL06.klv2), "
        f"stages {'/'.join(str(n) for _, n in STAGES)} over "
        f"{STAGES[0][0]}..{STAGES[-1][0]}-ply endgames"
    )
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = solver.leaves(KLV2)
    wanted = {1: args.one, 2: args.two}
    found = record_preendgames(rules)
    print(f"# records: {len(found[1])} one-tile and {len(found[2])} two-tile pre-endgames")
    short = {k: n - len(found[k]) for k, n in wanted.items() if len(found[k]) < n}
    extra = selfplay_preendgames(solver, short) if short else {}
    positions = [
        (k, name, cgp) for k in (1, 2) for name, cgp in pick(found[k], wanted[k]) + extra.get(k, [])
    ]
    if args.list:
        for k, name, cgp in positions:
            print(k, name, cgp)
        return
    folder, why = (None, "not run (--only anchor)") if args.only == "anchor" else magpie_folder()
    print(
        f"# MAGPIE: {why}; -pegnested {'false' if args.flat else 'true'}, -pegtlim "
        f"{args.timeout:g}; Anchor: table {args.table_mb:g} MiB, budget_s {args.timeout:g}"
    )
    print(
        "# time: each engine's own, s, `>T` stopped at the time limit; stages: endgame "
        f"stages finished of {len(STAGES)}; spread: the mover's final spread (lead + mean "
        "gain) for its top play; m#, a#: MAGPIE's rank of Anchor's top play, Anchor's of "
        "MAGPIE's (no: not among its candidates)"
    )
    print(
        "| position | bag | rack | lead | Anchor s | MAGPIE s | A/M | stages A, M "
        "| Anchor top (win%, spread) | MAGPIE top (win%, spread) | agree | m#, a# |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    results, notes = [], []
    for k, name, cgp in positions:
        pos = parse_cgp(rules, cgp)
        ours = Answer(note="not run")
        if args.only != "magpie":
            ours = anchor_preendgame(solver, leaves, cgp, args.timeout, args.table_mb)
        theirs = Answer(note=why)
        if folder:
            theirs = magpie_peg(folder, cgp, args.timeout, not args.flat)
        both = ours.seconds is not None and theirs.seconds is not None
        timed = both and not ours.over and not theirs.over
        ratio = f"{ours.seconds / theirs.seconds:.2f}" if timed else "-"
        agree = (
            "-" if not (ours.top and theirs.top) else ("yes" if ours.top == theirs.top else "NO")
        )
        ranks = (place(ours.top, theirs.ranked), place(theirs.top, ours.ranked))

        def play(a: Answer) -> str:
            return f"{a.top} ({a.win:.1f}, {a.spread:+.1f})" if a.top else a.note

        print(
            f"| {name} | {k} | {pos.racks[0]} | {pos.scores[0] - pos.scores[1]:+d} | "
            f"{shown(ours, args.timeout)} | {shown(theirs, args.timeout)} | {ratio} | "
            f"{len(ours.stages)}, {len(theirs.stages)} | {play(ours)} | {play(theirs)} | "
            f"{agree} | {ranks[0]}, {ranks[1]} |",
            flush=True,
        )
        for label, a in (("Anchor", ours), ("MAGPIE", theirs)):
            if a.top:
                times = "/".join(f"{t:.1f}" for t in a.stages) or "none"
                notes.append(
                    f"{name} {label}: stage times {times} s" + (f"; {a.note}" if a.note else "")
                )
        results.append((k, ours, theirs, timed, agree))
    for line in notes:
        print(f"#   {line}")
    for k in (1, 2):
        rows = [r for r in results if r[0] == k]
        done = [r for r in rows if r[3]]
        if not rows:
            continue
        line = f"median, {k} in the bag: "
        if done:
            a = statistics.median(r[1].seconds for r in done)
            m = statistics.median(r[2].seconds for r in done)
            q = statistics.median(r[1].seconds / r[2].seconds for r in done)
            line += f"Anchor {a:.2f} s, MAGPIE {m:.2f} s, ratio A/M {q:.2f} over {len(done)}"
        else:
            line += "no position finished on both sides"
        agreed = sum(r[4] == "yes" for r in rows)
        print(f"{line}; top plays agree on {agreed} of {len(rows)}")
        per_stage = []
        for i, (plies, _keep) in enumerate(STAGES):
            pairs = [
                (r[1].stages[i], r[2].stages[i])
                for r in rows
                if len(r[1].stages) > i and len(r[2].stages) > i
            ]
            if pairs:
                q = statistics.median(a / max(m, 1e-3) for a, m in pairs)
                per_stage.append(f"{plies}-ply {q:.2f} ({len(pairs)})")
        if per_stage:
            print(f"  stage time ratio A/M, median (positions): {', '.join(per_stage)}")


if __name__ == "__main__":
    main()
