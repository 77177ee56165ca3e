"""Rack inference against a brute force written here: on small rulesets (four-tile racks,
English letters and board, the TWL06 leaves), every rack the unseen tiles allow is tried
in Python with every play the generator lists and every exchange enumerated here, and
judged by the rule engine/inference.py states; the engine's racks, verdicts, tallies and
draws must equal it. On the real game (TWL06, record positions) a rack's own best move by
equity must always be explained by that rack, and bad input is refused with a message."""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations_with_replacement

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anchor.engine import Board, InputError, Ruleset, Solver, WorkLimitError
from anchor.engine.gcg import PLAY, read_gcg, replay
from anchor.engine.inference import Part, infer, infer_part, merge_parts
from anchor.engine.legality import unseen_counts
from anchor.engine.notation import format_rack, parse_rack

from .conftest import data_path

TILES = """
A 3 1
B 1 3
C 1 3
D 2 2
E 3 1
F 1 4
G 1 2
H 1 4
I 3 1
J 1 8
K 1 5
L 2 1
M 1 3
N 2 1
O 3 1
P 1 3
Q 1 10
R 2 1
S 2 1
T 2 1
U 2 1
V 1 4
W 1 4
X 1 8
Y 1 4
Z 1 10
? 2 0
"""


def small_rules(english: Ruleset, rack: int = 4, exchange_min_bag: int = 4) -> Ruleset:
    total = sum(int(line.split()[1]) for line in TILES.strip().splitlines())
    grid = "\n".join(english.premiums)
    text = (
        f'name = "small{rack}"\ntitle = "English letters, {rack}-tile racks"\nrows = 15\n'
        f'cols = 15\nrack_size = {rack}\nbingo_bonus = 20\ncentre = "8H"\n'
        f"total_tiles = {total}\nexchange_min_bag = {exchange_min_bag}\n"
        f"tiles = '''{TILES}'''\npremiums = '''\n{grid}\n'''\n"
    )
    return Ruleset.from_toml(text, source="small.toml")


def milli(v: float) -> int:
    """Thousandths of a point, half away from zero (Python's round() rounds half to even)."""
    return int(math.copysign(math.floor(abs(v) * 1000 + 0.5), v))


def minus(rack: list[int], tiles) -> list[int]:
    left = list(rack)
    for t in tiles:
        left.remove(t)
    return left


def sub_multisets(rack: list[int]):
    counts = Counter(rack)
    kinds = sorted(counts)

    def walk(i):
        if i == len(kinds):
            yield ()
            return
        for n in range(counts[kinds[i]] + 1):
            for rest in walk(i + 1):
                yield (kinds[i],) * n + rest

    yield from walk(0)


def brute_force(solver, board, leaves, pool, played, score, exchanged, margin, most):
    """{extra tiles: (verdict, thrown, draws)} for every rack that explains the move."""
    rules = solver.rules
    size = rules.rack_size - len(played)
    tiles = [t for t, n in enumerate(pool) if n]
    out = {}
    for extra in combinations_with_replacement(tiles, size):
        have = Counter(extra)
        if any(have[t] > pool[t] for t in have):
            continue
        rack = sorted([*played, *extra])
        plays = solver.generate_moves(board, format_rack(rules, rack))
        best_play = max(
            (
                m.score * 1000
                + milli(leaves.value(minus(rack, [0 if ch.islower() else rules.index(ch)
                                                  for _, _, ch in m.placed])))
                for m in plays
            ),
            default=None,
        )  # fmt: skip
        best_x, thrown = None, ()
        for back in sub_multisets(rack):
            if not 1 <= len(back) <= most:
                continue
            v = milli(leaves.value(minus(rack, back)))
            if best_x is None or (v, -len(back), [-t for t in back]) > (
                best_x,
                -len(thrown),
                [-t for t in thrown],
            ):  # fewer tiles, then the lower tiles in order, blank first
                best_x, thrown = v, back
        if not exchanged:
            cutoff = score * 1000 + milli(leaves.value(extra)) + margin
            top = max((v for v in (best_play, best_x) if v is not None), default=None)
            verdict = 1 if top is None or top <= cutoff else 0
        elif best_play is not None and best_play >= best_x:
            verdict = 1 if best_play <= margin else 0
        elif len(thrown) == exchanged:
            verdict = 2
        else:
            verdict = 1 if best_x <= margin else 0
        if verdict == 1 and exchanged:  # kept: its best exchange of that many tiles
            thrown = best_exchange_of(leaves, rack, exchanged)
        if verdict:
            draws = math.prod(math.comb(pool[t], n) for t, n in have.items())
            out[tuple(extra)] = (verdict, tuple(thrown) if exchanged else (), draws)
    return out


def best_exchange_of(leaves, rack: list[int], count: int) -> list[int]:
    """The tiles of the rack's best exchange of exactly `count` tiles (ties: the lower tiles
    in order, blank first)."""
    best, thrown = None, []
    for back in sub_multisets(rack):
        if len(back) != count:
            continue
        v = milli(leaves.value(minus(rack, back)))
        if best is None or (v, [-t for t in back]) > (best, [-t for t in thrown]):
            best, thrown = v, back
    return thrown


def letter_tally(rules, racks) -> dict:
    """{letter: (draws with at least k, for k = 1..)} over racks: {tiles: draws} or
    (tiles, draws) pairs."""
    pairs = list(racks.items() if isinstance(racks, dict) else racks)
    out = {}
    for t in range(rules.size + 1):
        letter = "?" if t == 0 else rules.letter(t)
        ks = []
        for k in range(1, rules.rack_size + 1):
            n = sum(d for tiles, d in pairs if tiles.count(t) >= k)
            if not n:
                break
            ks.append(n)
        if ks:
            out[letter] = tuple(ks)
    return out


def random_position(solver, rng):
    """A board from a few random plays of the small set, the mover's rack and the
    watcher's, and the tiles left in the bag."""
    rules = solver.rules
    bag = [0] * rules.blanks + [rules.index(c) for c, n in rules.counts.items() for _ in range(n)]
    rng.shuffle(bag)
    racks = [[bag.pop() for _ in range(rules.rack_size)] for _ in range(2)]
    board, side = Board.empty(rules), 0
    for _ in range(rng.randrange(2, 6)):
        moves = solver.generate_moves(board, format_rack(rules, racks[side]), limit=4)
        if not len(moves):
            break
        move = moves[rng.randrange(len(moves))]
        for _, _, ch in move.placed:
            racks[side].remove(0 if ch.islower() else rules.index(ch))
        board = board.apply(move.placed)
        while len(racks[side]) < rules.rack_size and bag:
            racks[side].append(bag.pop())
        side = 1 - side
    return board, racks[side], racks[1 - side], bag


@pytest.fixture(scope="module")
def small(english, default_english):
    rules = small_rules(english)
    solver = Solver(default_english, rules)
    leaves = solver.leaves(data_path("kwg", "TWL06.klv2"))
    return solver, leaves


@pytest.mark.parametrize("seed", range(14))
def test_inference_equals_the_brute_force(small, seed):
    """Plays and exchanges on random positions of the small set, with margins of 0, 5 and
    20 points and one or three threads: the same racks, verdicts, tiles thrown, draws and
    tallies as trying every rack here."""
    solver, leaves = small
    rules = solver.rules
    rng = random.Random(seed)
    board, mover, watcher, bag = random_position(solver, rng)
    while not len(solver.generate_moves(board, format_rack(rules, mover), limit=1)):
        board, mover, watcher, bag = random_position(solver, rng)  # a rack with a play
    margin = (0.0, 5.0, 20.0)[seed % 3]
    threads = 1 + 2 * (seed % 2)
    observer = format_rack(rules, watcher)
    unseen = unseen_counts(board, watcher)
    most = rules.max_exchange(sum(unseen) - rules.rack_size)
    if seed % 4 == 3 and most:
        exchanged, play, played, score = rng.randrange(1, most + 1), None, [], 0
    else:
        moves = solver.generate_moves(board, format_rack(rules, mover), limit=6)
        move = moves[rng.randrange(len(moves))]
        exchanged, play, score = 0, move.notation, move.score
        played = sorted(0 if ch.islower() else rules.index(ch) for _, _, ch in move.placed)
    pool = [u - played.count(t) for t, u in enumerate(unseen)]
    expected = brute_force(solver, board, leaves, pool, played, score, exchanged,
                           round(margin * 1000), most)  # fmt: skip
    got = infer(solver, board, leaves, play, exchanged=exchanged, observer=observer,
                margin=margin, threads=threads)  # fmt: skip
    assert got.tried >= len(expected) and got.searches <= got.tried
    count = 2 + seed % 5  # the same answer dealt out to parts and merged
    parts = [infer_part(solver, board, leaves, play, exchanged=exchanged, observer=observer,
                        margin=margin, part=i, parts=count) for i in range(count)]  # fmt: skip
    merged = merge_parts(rules, parts[::-1])
    assert merged == got and merged.explaining() == got.explaining()
    if not exchanged:
        leaves_found = dict(got.explaining())
        assert leaves_found == {tiles: d for tiles, (_, _, d) in expected.items()}
        assert got.kept.draws == sum(d for _, _, d in expected.values())
        assert got.kept.racks == len(expected)
        tally = {o.letter: o.draws for o in got.kept.letters if o.draws}
        assert tally == letter_tally(rules, leaves_found)
        if expected:
            top = max(expected.items(), key=lambda kv: kv[1][2])[1][2]
            assert got.leaves[0].draws == top
            assert abs(sum(k.chance for k in got.leaves) - 1) < 1e-9 or len(got.leaves) == 15
    else:
        made = {tiles: v for tiles, v in expected.items() if v[0] == 2}
        kept = {}
        for tiles, (_, thrown, d) in expected.items():  # what a simulation draws
            keep = tuple(minus(list(tiles), thrown))
            kept.setdefault(keep, []).append(d)
        found: dict = {}
        for keep, d in got.explaining():
            found.setdefault(keep, []).append(d)
        assert {k: sorted(v) for k, v in found.items()} == {k: sorted(v) for k, v in kept.items()}
        assert got.racks.draws == sum(d for _, _, d in expected.values())
        assert got.racks.racks == len(expected)
        assert got.kept.racks == got.thrown.racks == len(made)
        racks_tally = {o.letter: o.draws for o in got.racks.letters if o.draws}
        assert racks_tally == letter_tally(rules, {t: d for t, (_, _, d) in expected.items()})
        thrown_tally = {o.letter: o.draws for o in got.thrown.letters if o.draws}
        assert thrown_tally == letter_tally(rules, [(v[1], v[2]) for v in made.values()])
    assert got.empty == (not expected)


def test_a_rack_emptied_by_the_move_is_judged_too(small):
    """A play of every tile keeps nothing: the one rack (the tiles played) explains it only
    when nothing beat it, and the answer says which."""
    solver, leaves = small
    rules = solver.rules
    seen = set()
    for seed in range(60):
        board, mover, watcher, bag = random_position(solver, random.Random(seed))
        moves = solver.generate_moves(board, format_rack(rules, mover), limit=30)
        for m in moves:
            if len(m.placed) == rules.rack_size:
                got = infer(solver, board, leaves, m.notation, observer=format_rack(rules, watcher))
                assert got.tried == 1 and not got.known
                explained = got.explaining()
                seen.add(bool(explained))
                if explained:
                    assert explained == [((), 1)] and got.leaves[0].leave == ""
        if len(seen) == 2:
            return
    pytest.fail(f"60 seeds gave plays of the whole rack that were only {seen} explained")


@pytest.fixture(scope="module")
def twl06_setup(magpie_twl06, english):
    solver = Solver(magpie_twl06, english)
    leaves = solver.leaves(data_path("kwg", "TWL06.klv2"))
    boards = []
    for path in sorted(data_path("gcg").rglob("*.gcg"))[:6]:
        try:
            turns = list(replay(read_gcg(path), english))
        except Exception:  # noqa: BLE001 - a record the English rules cannot replay
            continue
        boards += [t.board for t in turns if t.event.kind == PLAY and any(t.board.cells)][2:8]
    return solver, leaves, boards


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_racks_own_best_move_is_explained_by_that_rack(twl06_setup, data):
    """TWL06 on record positions: a rack drawn from the unseen tiles, its best move by
    equity (exchanges allowed while the bag holds seven), inferred from the watcher's side:
    that rack is among those explaining it (a play), or keeps what that exchange keeps."""
    solver, leaves, boards = twl06_setup
    rules = solver.rules
    board = data.draw(st.sampled_from(boards))
    unseen = [t for t, n in enumerate(unseen_counts(board)) for _ in range(n)]
    rng = random.Random(data.draw(st.integers(0, 10**6)))
    rng.shuffle(unseen)
    rack, watcher = unseen[:7], unseen[7:14]
    most = rules.max_exchange(len(unseen) - 14)
    moves = solver.generate_moves(
        board, format_rack(rules, rack), limit=1, rank="equity", leaves=leaves,
        include_exchanges=True, max_exchange=most,
    )  # fmt: skip
    best = moves[0]
    if best.kind == "pass":
        return
    if best.kind == "exchange":
        got = infer(solver, board, leaves, exchanged=len(best.exchanged),
                    observer=format_rack(rules, watcher))  # fmt: skip
        kept = tuple(sorted(minus(sorted(rack), parse_rack(rules, best.exchanged))))
    else:
        got = infer(solver, board, leaves, best.notation, observer=format_rack(rules, watcher))
        kept = tuple(sorted(minus(sorted(rack), [0 if ch.islower() else rules.index(ch)
                                                  for _, _, ch in best.placed])))  # fmt: skip
    assert kept in dict(got.explaining()), (best.notation, format_rack(rules, rack))


def test_sampling_draws_explained_leaves_by_their_draws(small):
    solver, leaves = small
    rules = solver.rules
    board, mover, watcher, _ = random_position(solver, random.Random(5))
    move = solver.generate_moves(board, format_rack(rules, mover), limit=1)[0]
    got = infer(solver, board, leaves, move.notation, observer=format_rack(rules, watcher))
    weights = dict(got.explaining())
    rng = random.Random(1)
    drawn = Counter(got.sample(rng) for _ in range(4000))
    assert set(drawn) <= set(weights)
    top = max(weights, key=weights.get)
    share = weights[top] / sum(weights.values())
    assert abs(drawn[top] / 4000 - share) < 0.05
    assert [got.sample(random.Random(9)) for _ in range(3)] == [
        got.sample(random.Random(9)) for _ in range(3)
    ]


def test_bad_requests_are_refused_with_what_is_wrong(small):
    solver, leaves = small
    rules = solver.rules
    board, mover, watcher, _ = random_position(solver, random.Random(3))
    move = solver.generate_moves(board, format_rack(rules, mover), limit=1)[0]
    obs = format_rack(rules, watcher)
    with pytest.raises(InputError, match="scores"):
        infer(solver, board, leaves, move.notation, score=move.score + 1, observer=obs)
    with pytest.raises(InputError, match="not both"):
        infer(solver, board, leaves, move.notation, exchanged=2, observer=obs)
    with pytest.raises(InputError, match="not both"):
        infer(solver, board, leaves, observer=obs)
    for bad in (float("nan"), float("inf"), "5", True, 1e9):
        with pytest.raises(InputError, match="margin"):
            infer(solver, board, leaves, move.notation, observer=obs, margin=bad)
    for bad in (0, 65, 1.5, None):
        with pytest.raises(InputError, match="threads"):
            infer(solver, board, leaves, move.notation, observer=obs, threads=bad)
    with pytest.raises(InputError, match="exchanged"):
        infer(solver, board, leaves, exchanged=rules.rack_size + 1, observer=obs)
    with pytest.raises(InputError):
        infer(solver, board, leaves, "8D ZZZZ", observer=obs)
    with pytest.raises(WorkLimitError, match="more than 3 racks"):
        infer(solver, board, leaves, move.notation, observer=obs, max_racks=3)
    tight = small_rules(Ruleset.load("english"), rack=4, exchange_min_bag=43)
    with pytest.raises(InputError, match="exchange of 2 was not allowed"):
        infer(Solver(solver.lexicon, tight), Board.from_cgp(tight, board.to_cgp()), leaves,
              exchanged=2, observer=obs)  # fmt: skip
    laid = next(ch for _, _, ch in move.placed if not ch.islower())  # every copy watched
    watched = laid * unseen_counts(board)[rules.index(laid)]
    with pytest.raises(InputError, match="already hold"):
        infer(solver, board, leaves, move.notation, observer=watched)


def test_plays_that_cannot_lie_there_are_refused_and_phonies_flagged(registry):
    """A play must be placeable as written (connected, through the centre first, a rack's
    tiles at most): bad_position naming why. A phony is inferred all the same and named."""
    from anchor.client import protocol as p
    from anchor.worker.runner import run_request

    for play, words in (
        ("10A ABCDEFGH", "lays 8 tiles"),
        ("13M ZA", "not connected"),
    ):
        with pytest.raises(p.ProtocolError) as caught:
            run_request(infer_request(play=play), registry, p.Limits())
        assert caught.value.code == p.BAD_POSITION and words in str(caught.value), play
    empty = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 /AEINOST 0/0 0"
    for play, words in (("1A QI", "centre square"), ("8H A", "two letters")):
        with pytest.raises(p.ProtocolError) as caught:
            run_request(infer_request(play=play, cgp=empty), registry, p.Limits())
        assert words in str(caught.value), play
    phony = run_request(infer_request(play="4C QO(AX)"), registry, p.Limits())["inference"]
    assert phony["phony"] == ["QOAX"]
    real = run_request(infer_request(play="4C HO(AX)"), registry, p.Limits())["inference"]
    assert real["phony"] == []


def test_the_c_entry_refuses_counts_that_do_not_fit(small):
    """Generator.infer checks what Python already checks, for any other caller."""
    solver, leaves = small
    nodes, below, values = leaves.graph()
    cells = bytes(solver.rules.rows * solver.rules.cols)
    pool = bytes([1] * (solver.rules.size + 1))
    none = bytes(solver.rules.size + 1)
    for size, exchanged, most, racks in ((3, 4, 4, 0), (4, 0, 0, 1 << 49), (5, 0, 0, 0)):
        with pytest.raises(ValueError):
            solver._generator.infer(cells, pool, none, size, exchanged, 0, 0, most, nodes,  # noqa: SLF001
                                    below, values, max_racks=racks)  # fmt: skip


def test_lexicon_of_the_wrong_alphabet_is_refused(small, russian):
    solver, leaves = small
    with pytest.raises(InputError):
        infer(solver, Board.empty(russian), leaves, exchanged=1)


# ---------------------------------------------------------------- the protocol and the CLI

INFER_BOARD = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15"


@pytest.fixture(scope="module")
def registry():
    from anchor.worker.registry import LexiconRegistry

    return LexiconRegistry(
        {"twl06": str(data_path("kwg", "TWL06.kwg"))},
        leave_paths={"twl06": str(data_path("kwg", "TWL06.klv2"))},
    )


def infer_request(**fields):
    from anchor.client import protocol as p

    base = {"v": 1, "kind": "infer", "cgp": f"{INFER_BOARD} /AEINOST 0/0 0", "lexicon": "twl06"}
    return p.decode_request(p.pack({**base, **fields}))


@pytest.mark.parametrize("asked, cap, used", [(None, 1, 1), (4, 2, 2), (2, None, 2)])
def test_the_server_caps_threads_and_racks(registry, monkeypatch, asked, cap, used):
    """A request's `threads` may only lower the server's infer_threads; more racks than
    infer_racks is limit_too_large; the answer is the same for any number of threads."""
    from anchor.client import protocol as p
    from anchor.engine import inference
    from anchor.worker.runner import run_request

    seen = []
    original = inference.infer_part

    def spy(*args, **kw):
        seen.append(kw["threads"])
        return original(*args, **kw)

    monkeypatch.setattr(inference, "infer_part", spy)
    fields = {"play": "4C HO(AX)"} | ({"threads": asked} if asked else {})
    limits = p.Limits.unbounded() if cap is None else p.Limits(infer_threads=cap)
    answer = run_request(infer_request(**fields), registry, limits)
    assert seen == [used] and answer["ok"]
    got = answer["inference"]
    assert got["kept"]["racks"] > 0 and got["leaves"][0]["chance"] > 0 and not got["empty"]
    with pytest.raises(p.ProtocolError) as tight:
        run_request(infer_request(play="4C HO(AX)"), registry, p.Limits(infer_racks=1000))
    assert tight.value.code == p.LIMIT_TOO_LARGE and "1,000 racks" in str(tight.value)


def test_parts_merge_into_the_whole_and_each_is_bounded_alone(registry):
    """An inference dealt out to parts (jobs): each part's racks under the server's cap,
    the whole over it; merged by the client, the answer of one job."""
    from anchor.client import protocol as p
    from anchor.engine import Ruleset
    from anchor.worker.runner import run_request

    rules = Ruleset.load("english")
    whole = run_request(infer_request(play="4C HO(AX)"), registry, p.Limits())["inference"]
    tried = whole["tried"]
    cap = p.Limits(infer_racks=tried // 2)
    with pytest.raises(p.ProtocolError) as tight:
        run_request(infer_request(play="4C HO(AX)"), registry, cap)
    assert tight.value.code == p.LIMIT_TOO_LARGE
    parts = []
    for i in range(3):
        answer = run_request(infer_request(play="4C HO(AX)", part=i, parts=3), registry, cap)
        assert not answer.get("inference") and answer["part"]["part"] == i
        parts.append(Part.from_wire(rules, p.unpack(p.pack(answer))["part"]))
    assert sum(part.tried for part in parts) == tried
    merged = merge_parts(rules, parts).to_dict(15)
    assert merged == whole
    with pytest.raises(p.ProtocolError, match="'part' must be below 'parts'"):
        run_request(infer_request(play="4C HO(AX)", part=3, parts=3), registry, cap)


def test_parts_that_do_not_add_up_are_refused(small):
    solver, leaves = small
    rules = solver.rules
    rng = random.Random(3)
    board, mover, watcher, bag = random_position(solver, rng)
    observer = format_rack(rules, watcher)
    parts = [infer_part(solver, board, leaves, exchanged=1, observer=observer, part=i, parts=2)
             for i in range(2)]  # fmt: skip
    merge_parts(rules, parts)
    with pytest.raises(InputError, match="each part once"):
        merge_parts(rules, [parts[0], parts[0]])
    with pytest.raises(InputError, match="each part once"):
        merge_parts(rules, parts[:1])
    other = infer_part(solver, board, leaves, exchanged=2, observer=observer, part=1, parts=2)
    with pytest.raises(InputError, match="disagree"):
        merge_parts(rules, [parts[0], other])
    wire = parts[1].to_wire()
    Part.from_wire(rules, wire)
    n, size = len(wire["verdicts"]), wire["size"]
    assert n >= 2, "a position whose part holds racks to tamper with"
    swapped = wire["tiles"][size : 2 * size] + wire["tiles"][:size] + wire["tiles"][2 * size :]
    huge = (2**64 - 1).to_bytes(8, "little") * n
    nan = b"\x00\x00\xc0\x7f" * n
    thrown = bytearray(wire["thrown"])
    thrown[0] = 0xFF
    for key, bad in (
        ("tiles", wire["tiles"] + b"\x01"), ("verdicts", b"\x07" * n), ("hist", b""),
        ("part", 5), ("pool", [1, 2]), ("common", {}), ("draws", "x"), ("tried", float("inf")),
        ("part", 1.0), ("part", True), ("known", "false"), ("tiles", 10**13), ("tiles", swapped),
        ("draws", huge), ("values", nan), ("thrown", bytes(thrown)), ("tried", 0),
        ("hist", b"\xff" * len(wire["hist"])), ("parts", 3), ("searches", -1),
        ("common", {**wire["common"], "margin": float("nan")}),
    ):  # fmt: skip
        with pytest.raises(InputError, match="inference part"):
            Part.from_wire(rules, {**wire, key: bad})
    empty = {**wire, "tiles": b"", "verdicts": b"", "thrown": b"", "draws": b"", "values": b"",
             "tried": 0, "searches": 0}  # fmt: skip
    with pytest.raises(InputError, match="inference part"):  # a part that judged nothing
        Part.from_wire(rules, empty)
    with pytest.raises(InputError, match="parts 1..64"):
        infer_part(solver, board, leaves, exchanged=1, observer=observer, part=2, parts=2)


def test_bad_infer_requests_are_refused(registry):
    from anchor.client import protocol as p
    from anchor.worker.runner import run_request

    for fields, code in (
        ({"play": "4C HO(AX)", "margin": 5000}, p.BAD_VALUE),
        ({"play": "4C HO(AX)", "threads": 65}, p.BAD_VALUE),
    ):
        with pytest.raises(p.ProtocolError) as caught:
            infer_request(**fields)
        assert caught.value.code == code, fields
    for fields, words in (
        ({"play": "4C HO(AX)", "exchanged": 3}, "not both"),
        ({}, "not both"),
        ({"exchanged": 3, "score": 4}, "an exchange scores 0"),
        ({"play": "4C HO(AX)", "score": 99}, "scores 28"),
        ({"play": "4C ZZ"}, "ZZ"),
        ({"play": "4C HO(AX)", "cgp": f"{INFER_BOARD} HO/AEINOST 0/0 0"}, "leave it empty"),
    ):
        with pytest.raises(p.ProtocolError) as caught:
            run_request(infer_request(**fields), registry, p.Limits())
        assert caught.value.code in (p.BAD_POSITION, p.BAD_RACK) and words in str(caught.value)


def test_cli_infer_prints_the_letters_and_leaves(capsys):
    from anchor.client.cli import main

    kwg, klv2 = str(data_path("kwg", "TWL06.kwg")), str(data_path("kwg", "TWL06.klv2"))
    cgp = f"{INFER_BOARD} /AEINOST 148/55 0"
    args = ["infer", "--cgp", cgp, "--lexicon", kwg, "--leaves", klv2]
    assert main([*args, "--play", "4C HO(AX)", "--search-threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "4C HO(AX) (28 points), margin 5" in out and "racks explain it" in out
    assert " 1. " in out and "letter" in out
    assert main([*args, "--play", "4C HO(AX)", "--search-threads", "2", "--json"]) == 0
    two = __import__("json").loads(capsys.readouterr().out)["inference"]
    assert main([*args, "--play", "4C HO(AX)", "--search-threads", "1", "--json"]) == 0
    one = __import__("json").loads(capsys.readouterr().out)["inference"]
    assert one["kept"] == two["kept"] and one["leaves"] == two["leaves"]
    assert main([*args, "--exchange", "4", "--search-threads", "2", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "an exchange of 4 (0 points)" in out
    assert main([*args, "--play", "4C HO(AX)", "--parts", "3", "--json"]) == 0
    three = __import__("json").loads(capsys.readouterr().out)["inference"]
    assert three == one
    assert main([*args, "--play", "4C HO(AX)", "--score", "30"]) == 2
    assert "scores 28 on this board, not 30" in capsys.readouterr().err
