"""Exercised under AddressSanitizer + UBSan by test_sanitizers.py (not collected by pytest):
the bench positions, random garbage straight into the C entry points, mutated KWGs."""

from __future__ import annotations

import random
import shutil
import struct
import sys
import tempfile
from array import array
from pathlib import Path

from graphs import reshape  # tests/graphs.py: this script's own folder is on the path

from anchor.engine import Board, Lexicon, LexiconError, Ruleset, Solver, _movegen, parse_cgp

data = Path(sys.argv[1])
rules = Ruleset.load("english")
lexicon = Lexicon.open(data / "kwg" / "TWL06.kwg", rules)
solver = Solver(lexicon, rules)
lines = (data / "bench" / "positions.cgp").read_text().splitlines()
total = 0
for line in lines:
    if line.strip() and not line.startswith("#"):
        pos = parse_cgp(rules, line)
        total += len(solver.generate_moves(pos.board, pos.racks[0]))
        solver.generate_moves(pos.board, pos.racks[0], limit=3)
        solver.generate_moves(pos.board.transpose(), pos.racks[0], mode="down")
rng = random.Random(11)
gen = solver._generator
for _ in range(3000):
    cells = bytes(rng.choice((0, 0, 0, rng.randrange(256))) for _ in range(225))
    rack = bytes(rng.choice((0, 0, 1, 2)) for _ in range(27))
    try:
        gen.generate(cells, rack, rng.randrange(0, 5), rng.randrange(-1, 30))
    except ValueError:
        pass
for _ in range(2000):  # the position checks' one pass: any geometry, supply and rack
    rows, cols = rng.randrange(0, 23), rng.randrange(0, 23)
    size = rng.choice((rows * cols, 225))
    cells = bytes(rng.choice((0, 0, rng.randrange(256))) for _ in range(size))
    supply = bytes(rng.randrange(256) for _ in range(4 * rng.randrange(0, 70)))
    try:
        _movegen.position_fits(cells, rows, cols, rng.randrange(-2, 500), supply, rng.randbytes(9))
    except ValueError:
        pass
for _ in range(300):
    board = Board(rules, bytes(rng.choice((0, 0, rng.randrange(1, 27))) for _ in range(225)))
    solver.generate_moves(board, "".join(rng.sample("AEINRST??", 7)))
small = Lexicon.build(["AA", "AB", "ABA", "BA", "CAB", "CABS"], rules).to_bytes()
nodes = list(struct.unpack(f"<{len(small) // 4}I", small))
seeded = Board.empty(rules).apply([(7, 6, "C"), (7, 7, "A"), (7, 8, "B"), (8, 8, "A")])
for _ in range(3000):
    mutated = list(nodes)
    for _ in range(rng.randrange(1, 4)):
        mutated[rng.randrange(len(mutated))] = rng.randrange(2**32)
    blob = struct.pack(f"<{len(mutated)}I", *mutated)
    try:
        _movegen.kwg_check(blob, 26)
        lex = Lexicon.from_bytes(blob, rules)
        mutant = Solver(lex, rules)
        mutant.generate_moves(Board.empty(rules), "ABCS??")
        # tiles on the board: the letter-run and reach tables are read beside them
        mutant.generate_moves(seeded, "ABCS??")
        mutant.generate_moves(seeded, "ABCS??", limit=2)
    except (LexiconError, ValueError):
        pass
# graphs that pass the check but are shaped like no builder's: lists shared anywhere,
# letters and word ends moved (the letter-run and reach tables are read off them)
for _ in range(600):
    mutated = reshape(nodes, rng)
    try:
        shaped = Lexicon.from_bytes(struct.pack(f"<{len(mutated)}I", *mutated), rules)
    except LexiconError:
        continue
    mutant = Solver(shaped, rules)
    mutant.generate_moves(seeded, "".join(rng.sample("ABCSAB??", 6)))
    mutant.generate_moves(seeded, "ABCS?", limit=1)
from anchor.engine.leaves import Leaves  # noqa: E402

leaves = Leaves.open(data / "kwg" / "TWL06.klv2", rules)
for line in lines:
    if line.strip() and not line.startswith("#"):
        pos = parse_cgp(rules, line)
        solver.generate_moves(pos.board, pos.racks[0], rank="equity", leaves=leaves)
        solver.generate_moves(
            pos.board, pos.racks[0], rank="equity", leaves=leaves, limit=5, include_exchanges=True
        )
graph = leaves._nodes
counts = leaves._counts
for _ in range(2000):
    rack = bytearray(64)
    for _ in range(rng.randrange(0, 8)):
        rack[rng.randrange(0, 27)] += 1
    steps, values = _movegen.leave_table(graph, counts, leaves._values, bytes(rack))
    try:
        gen.generate(bytes(225), bytes(rack[:27]), 3, rng.randrange(-1, 5), steps, values)
    except ValueError:
        pass
    try:  # a table that does not fit the rack: keys beyond it read as 0, never past it
        gen.generate(bytes(225), bytes(rack[:27]), 3, -1, steps, values[:4])
    except ValueError:
        pass
for bad in (b"", b"\x00" * 7, b"\xff" * 128):
    try:
        _movegen.leave_table(graph, counts, leaves._values, bad)
    except ValueError:
        pass
from anchor.engine.simulate import _turn, candidates, iterate, unseen_tiles  # noqa: E402

for line in [ln for ln in lines if ln.strip() and not ln.startswith("#")][:5]:
    pos = parse_cgp(rules, line)
    chosen = candidates(solver, pos.board, pos.racks[0], leaves, 6)
    iterate(solver, pos.board, pos.racks[0], leaves, chosen, 3, 1, range(4))
    # deep playouts, each move's board compared with the board prepared whole
    rack = bytearray(27)
    for ch in pos.racks[0]:
        rack[0 if ch == "?" else rules.letter_index[ch]] += 1
    unseen = [
        0 if ch == "?" else rules.letter_index[ch]
        for ch in unseen_tiles(rules, pos.board, pos.racks[0])
    ]
    rng.shuffle(unseen)
    turns = [_turn(rules, c.move) for c in chosen]
    gen.playouts(pos.board.cells, bytes(rack), turns, bytes(unseen), 10, graph, counts,
                 leaves._values, check=True)  # fmt: skip
start = parse_cgp(rules, lines[-1] if lines[-1].strip() else lines[-2])
for _ in range(1500):  # garbage candidates and orders, and leave graphs nobody checked
    turns = [
        (rng.randrange(-1, 4), rng.randrange(-5, 99), rng.randbytes(rng.choice((0, 3, 6, 7))),
         rng.randbytes(rng.choice((27, 27, 5))))
        for _ in range(rng.randrange(0, 4))
    ] + [(2, 0, b"", bytes(27))]  # fmt: skip
    order = bytes(rng.randrange(0, 27 + (rng.random() < 0.1)) for _ in range(rng.randrange(0, 90)))
    bad_graph = array("I", graph)
    for _ in range(rng.randrange(0, 3)):
        bad_graph[rng.randrange(len(bad_graph))] = rng.randrange(2**32)
    try:
        gen.playouts(start.board.cells, bytes([0, 1, 1, 1, 1, 1, 1, 1] + [0] * 19), turns, order,
                     rng.randrange(0, 5), bad_graph, counts, leaves._values)  # fmt: skip
    except ValueError:
        pass
# the bingo words read from a file (anagram_file.c): the file's own set searched, and
# mutated files (every one set aside, whatever its header says)
good = gen.anagram_file()
folder = Path(tempfile.mkdtemp())
shutil.copyfile(data / "kwg" / "TWL06.kwg", folder / "twl06.kwg")
(folder / "twl06.kwg.anagrams").write_bytes(good)
mapped = Solver(Lexicon.open(folder / "twl06.kwg", rules), rules)
assert mapped._generator.anagram_source == "file"
for line in lines:
    if line.strip() and not line.startswith("#"):
        pos = parse_cgp(rules, line)
        mapped.generate_moves(pos.board, pos.racks[0], rank="equity", leaves=leaves, limit=1)
        mapped.generate_moves(pos.board, pos.racks[0], rank="equity", leaves=leaves)
for _ in range(40):
    bad = bytearray(good)
    for _ in range(rng.randrange(1, 4)):
        at = rng.choice((rng.randrange(56), rng.randrange(len(bad))))
        bad[at] = rng.randrange(256)
    if rng.random() < 0.3:
        bad = bad[: rng.randrange(len(bad))]
    aside = _movegen.Generator(lexicon.buffer, *rules.generator_args(), anagrams=bytes(bad))
    assert aside.anagram_source == "built" or bytes(bad) == good
shutil.rmtree(folder)
from anchor.engine.selfplay import EquityPlayer, play_game  # noqa: E402

for seed in range(3):  # whole games in the C core
    play_game(solver, seed, policies=[EquityPlayer(leaves), EquityPlayer(leaves)], check=False)
    play_game(solver, seed, check=False)  # two Greedy players
for _ in range(300):  # orders of any tiles and length, leave graphs nobody checked
    order = bytes(
        rng.randrange(0, 27 + (rng.random() < 0.05)) for _ in range(rng.randrange(0, 200))
    )
    bad_graph = array("I", graph)
    for _ in range(rng.randrange(0, 3)):
        bad_graph[rng.randrange(len(bad_graph))] = rng.randrange(2**32)
    try:
        gen.selfplay(order, bad_graph, counts, leaves._values, rng.randrange(-1, 13),
                     rng.randrange(0, 8), 0.0, rng.random() < 0.3)  # fmt: skip
    except (ValueError, MemoryError):
        pass
# endgames: one thread and three on one kept table, a node cap that stops threads mid-search,
# and table buffers of every wrong shape
import json  # noqa: E402

from anchor.engine import EndgameTable, WorkLimitError  # noqa: E402

kept = EndgameTable(1)
for entry in (data / "cgp" / "macondo_test_cgp.jsonl").read_text().splitlines():
    entry = json.loads(entry)
    if entry["name"] not in ("line31", "line459", "line26"):
        continue
    pos = parse_cgp(rules, " ".join(entry["cgp"].split()[:4]))
    args = (pos.board, pos.racks[0], pos.racks[1])
    one = solver.solve_endgame(*args)
    three = solver.solve_endgame(*args, threads=3, table=kept)
    assert (one.value, one.moves) == (three.value, three.moves), entry["name"]
    for cap in (1, 3000):
        try:
            solver.solve_endgame(*args, threads=2, max_nodes=cap, table=kept)
        except WorkLimitError:
            pass
    # peers: two solves on one slot at once (threads of this process standing in for
    # forked workers), a split whose share holds no play, a depth limit
    import threading  # noqa: E402

    from anchor.engine.endgame import Split  # noqa: E402
    from anchor.engine.peers import Peers  # noqa: E402

    peers = Peers(2, 12)
    found = [None, None]

    def peer_solve(i: int, args=args, found=found, peers=peers) -> None:
        found[i] = solver.solve_endgame(*args, peer=peers.peer(i), threads=2)

    both = [threading.Thread(target=peer_solve, args=(i,)) for i in (0, 1)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    assert all((f.value, f.moves) == (one.value, one.moves) for f in found), entry["name"]
    assert solver.solve_endgame_part(*args, Split(10**6), peer=peers.peer(0)).no_plays
    solver.solve_endgame(*args, peer=peers.peer(1), plies=2)
    peers.forget(0)
racks = (bytes([0, 1] + [0] * 25), bytes([0, 0, 1] + [0] * 24))
for size in (0, 15, 16 << 9, (16 << 10) + 16, 16 << 10):
    try:
        gen.endgame(bytes(225), *racks, 2, 0.0, 10, False, 2, 0, 0, table=bytearray(size))
    except ValueError:
        assert size != 16 << 10
for bad in (b"\0" * (16 << 10), memoryview(bytearray(16 << 10))[::2], 7):
    try:
        gen.endgame(bytes(225), *racks, 2, 0.0, 10, False, 2, 0, 0, table=bad)
    except (ValueError, TypeError, BufferError):
        pass
# rack inference: plays and an exchange on one and three threads, racks and time capped
# mid-run, and buffers and counts that do not fit
from anchor.engine.inference import infer, infer_part  # noqa: E402

josh = parse_cgp(rules, next(x for x in lines if x.strip() and not x.startswith("#")))
for play, exchanged, threads in (("11D TIE", 0, 1), ("11D TIE", 0, 3), (None, 7, 3)):
    try:
        infer(solver, josh.board, leaves, play, exchanged=exchanged, observer=josh.racks[0],
              threads=threads, max_racks=20000)  # fmt: skip
    except WorkLimitError:
        pass
for part, parts in ((0, 3), (2, 3), (63, 64)):  # shares, the last one short or empty
    try:
        infer_part(solver, josh.board, leaves, "11D TIE", observer=josh.racks[0], threads=2,
                   max_racks=20000, part=part, parts=parts)  # fmt: skip
    except WorkLimitError:
        pass
for budget in (0.001, 0.05):
    try:
        infer(solver, josh.board, leaves, "11D TIE", observer=josh.racks[0], threads=2,
              budget_s=budget)  # fmt: skip
    except WorkLimitError:
        pass
pool = bytes([2] + [3] * 26)
for args in (
    (bytes(224), pool, bytes(27), 7, 0, 0, 0, 0),
    (bytes(225), pool[:-1], bytes(27), 7, 0, 0, 0, 0),
    (bytes(225), pool, bytes(27), 8, 0, 0, 0, 0),
    (bytes(225), pool, bytes([0, 8] + [0] * 25), 1, 0, 0, 0, 0),
    (bytes(225), pool, bytes(27), 7, 7, 0, 0, 3),
    (bytes(225), bytes(27), bytes(27), 7, 0, 0, 0, 0),
    (bytes([99] * 225), pool, bytes(27), 7, 0, 0, 0, 0),
):
    try:
        gen.infer(*args, graph, counts, leaves._values, threads=2, max_racks=5000)
    except ValueError:
        pass
print(f"ok {total} {_movegen.__file__}")
