"""Top-N by best-first search equals the head of the full ranking.

With a limit the generator visits anchors highest shadow bound first and skips every
anchor (and left-part length) whose bound cannot beat the N-th play found. The oracle is
the same generator without a limit (itself checked against the brute-force enumerator in
test_movegen_oracle): for every N, the top N must be its first N, same plays, same order
(ties in generation order), same scores and equities, on real positions of all three
rulesets, blanks and all.
"""

from __future__ import annotations

import os
import random
import statistics
from functools import cache
from itertools import product
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from anchor.engine import Board, Lexicon, Ruleset, Solver
from anchor.engine.gcg import read_gcg, replay
from anchor.engine.leaves import Leaves
from anchor.engine.legality import random_rack, unseen
from anchor.engine.rules import BLANK
from anchor.engine.selfplay import play_game

from .conftest import ROOT, data_path
from .test_gcg import english_files

BUILD = ROOT / "dictionaries" / "build"
SIZES = (1, 2, 3, 5, 10, 40)


@cache
def solver_for(name: str) -> Solver:
    rules = Ruleset.load(name)
    path = data_path("kwg", "TWL06.kwg") if name == "english" else BUILD / f"{name}.kwg"
    if not path.exists():
        pytest.fail(f"{path} is missing: `make test` builds it (anchor lexicon install)")
    return Solver(Lexicon.open(path, rules), rules)


@cache
def positions(name: str) -> tuple[Board, ...]:
    """Every board of two seeded self-play games: openings to endgames."""
    solver = solver_for(name)
    boards = []
    for seed in (11, 12):
        board = Board.empty(solver.rules)
        for turn in play_game(solver, seed, check=False).turns:
            boards.append(board)
            if turn.move.placed:
                board = board.apply(turn.move.placed)
    return tuple(boards)


def assert_head(solver: Solver, board: Board, rack: str, n: int, mode: str = "both", **rank):
    full = solver.generate_moves(board, rack, mode=mode, **rank)
    top = solver.generate_moves(board, rack, mode=mode, limit=n, **rank)
    where = f"rack {rack}, N={n}, mode {mode}\n{board.render()}"
    assert [(m.notation, m.score) for m in top] == [(m.notation, m.score) for m in full[:n]], where
    assert top.equities() == (full.equities()[:n] if full.equities() is not None else None)
    assert top.total in (None, full.total) and top.generated <= full.total
    return full, top


@pytest.mark.parametrize("name", ["english", "russian", "erudit"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_top_n_is_the_head_of_the_full_ranking(name, data):
    solver = solver_for(name)
    boards = positions(name)
    board = boards[data.draw(st.integers(0, len(boards) - 1), label="position")]
    rng = random.Random(data.draw(st.integers(0, 10**9), label="seed"))
    rack = random_rack(board, rng)
    if data.draw(st.booleans(), label="blank") and solver.rules.blanks:
        rack = rack[:-1] + "?"
    n = data.draw(st.sampled_from(SIZES), label="N")
    mode = data.draw(st.sampled_from(["both", "both", "across", "down"]), label="mode")
    assert_head(solver, board, rack, n, mode)


@settings(max_examples=80, deadline=None)
@given(index=st.integers(0, 10**6), seed=st.integers(0, 10**9), n=st.sampled_from(SIZES))
def test_top_n_by_equity_is_the_head_of_the_full_ranking(index, seed, n):
    solver = solver_for("english")
    leaves = twl06_leaves()
    boards = positions("english")
    board = boards[index % len(boards)]
    rack = random_rack(board, random.Random(seed))
    if seed % 3 == 0:
        rack = rack[:-2] + "??"
    assert_head(solver, board, rack, n, rank="equity", leaves=leaves)


@settings(max_examples=150, deadline=None)
@given(
    index=st.integers(0, 10**6),
    seed=st.integers(0, 10**9),
    n=st.sampled_from(SIZES),
    blanks=st.integers(1, 2),
    by_equity=st.booleans(),
)
def test_top_n_with_blanks_is_the_head_of_the_full_ranking(index, seed, n, blanks, by_equity):
    """Racks with blanks, where plays that put a blank down have their own, lower bound
    (the blank scores nothing; by equity its leave value is gone) and are skipped first."""
    solver = solver_for("english")
    boards = positions("english")
    board = boards[index % len(boards)]
    rack = random_rack(board, random.Random(seed)).replace("?", "")[: 7 - blanks] + "?" * blanks
    rank = {"rank": "equity", "leaves": twl06_leaves()} if by_equity else {}
    assert_head(solver, board, rack, n, **rank)


@cache
def bingo_words(name: str) -> tuple[str, ...]:
    """The lexicon's words of a rack's length to two more: what a whole rack spells alone
    or with one or two board letters."""
    solver = solver_for(name)
    size = solver.rules.rack_size
    return tuple(w for w in solver.lexicon if size <= len(w) <= size + 2)


def bingo_rack(board: Board, word: str, rng: random.Random, blanks: int, miss: bool) -> str | None:
    """A rack of `word`'s letters (all of them, or all but one), `blanks` of them blanks,
    one changed when `miss` (a rack a letter away from spelling it); None when the tiles
    the board leaves cannot make it."""
    rules = board.rules
    letters = rng.sample(word, rules.rack_size)
    if miss:
        letters[0] = rng.choice(rules.alphabet)
    letters[:blanks] = [BLANK] * blanks
    left = unseen(board)
    left.subtract(0 if ch == BLANK else rules.letter_index[ch] for ch in letters)
    return "".join(letters) if min(left.values()) >= 0 else None


@pytest.mark.parametrize("name", ["english", "russian", "erudit"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_top_n_with_bingo_racks_is_the_head_of_the_full_ranking(name, data):
    """Racks that spell a bingo, alone or with board letters, or miss one by a letter: the
    shadow bound keeps a span's bingo only when the rack and the span's board letters
    spell a word, so these racks are where dropping it could go wrong."""
    solver = solver_for(name)
    boards = positions(name)
    board = boards[data.draw(st.integers(0, len(boards) - 1), label="position")]
    words = bingo_words(name)
    rng = random.Random(data.draw(st.integers(0, 10**9), label="seed"))
    blanks = data.draw(st.integers(0, min(2, solver.rules.blanks)), label="blanks")
    miss = data.draw(st.booleans(), label="a letter away")
    rack = None
    for _ in range(50):
        rack = bingo_rack(board, rng.choice(words), rng, blanks, miss)
        if rack:
            break
    assume(rack is not None)
    n = data.draw(st.sampled_from(SIZES), label="N")
    by_equity = name == "english" and data.draw(st.booleans(), label="by equity")
    rank = {"rank": "equity", "leaves": twl06_leaves()} if by_equity else {}
    assert_head(solver, board, rack, n, **rank)


def bingos_through_two_tiles(limit: int) -> list[tuple[Board, str]]:
    """(board, rack) where the rack's seven tiles and two board tiles of a row spell a
    nine-letter word with nothing on the board either side: the racks that spell a bingo
    only with those letters, found in the English self-play positions (and their
    transposes, for columns)."""
    solver = solver_for("english")
    nine = [w for w in bingo_words("english") if len(w) == 9]
    by_pair: dict[tuple[int, str, int, str], list[str]] = {}
    for word in nine:
        for i in range(9):
            for k in range(i + 1, 9):
                by_pair.setdefault((i, word[i], k, word[k]), []).append(word)
    rng = random.Random(9)
    found = []
    for board in [b for pos in positions("english") for b in (pos, pos.transpose())]:
        rows, cols = board.rules.rows, board.rules.cols
        for row in range(rows):
            for start in range(cols - 8):
                window = [board.letter_at(row, c) for c in range(start, start + 9)]
                tiles = [(i, ch) for i, ch in enumerate(window) if ch]
                edges = [c for c in (start - 1, start + 9) if 0 <= c < cols]
                if len(tiles) != 2 or any(board.letter_at(row, c) for c in edges):
                    continue
                words = by_pair.get((tiles[0][0], tiles[0][1], tiles[1][0], tiles[1][1]))
                if not words:
                    continue
                word = rng.choice(words)
                rack = "".join(ch for i, ch in enumerate(word) if not window[i])
                left = unseen(board)
                left.subtract(board.rules.letter_index[ch] for ch in rack)
                if min(left.values()) < 0:
                    continue
                if any(m.tiles_used == 7 for m in solver.generate_moves(board, rack)):
                    found.append((board, rack))
                    if len(found) == limit:
                        return found
    return found


def test_top_n_with_bingos_through_two_board_tiles():
    """Racks whose only bingos take two board letters: the bound keeps those spans' bingo
    (the rack and both letters spell a word), so the best plays are found."""
    solver = solver_for("english")
    cases = bingos_through_two_tiles(12)
    assert len(cases) >= 6, "too few positions with a bingo through two tiles to test"
    for board, rack in cases:
        for n in (1, 3):
            assert_head(solver, board, rack, n)
            assert_head(solver, board, rack, n, rank="equity", leaves=twl06_leaves())


@pytest.mark.parametrize("crowded", [True, False])
def test_top_n_on_made_up_lexica(crowded):
    """Every string over A, B, C: of 2 to 8 letters (9,837 words in 26 nodes, more than
    the generator walks for a graph that size to index its bingo words, so every bound
    keeps its bingo), or of 2 to 6 letters and two longer words (indexed: a rack spelling
    neither loses the bingo). Either way the top N heads the full ranking, game after
    game."""
    rules = Ruleset.load("english")
    longest = 8 if crowded else 6
    words = ["".join(w) for n in range(2, longest + 1) for w in product("ABC", repeat=n)]
    if not crowded:
        words += ["AAAABBB", "AABBBCCA"]
    solver = Solver(Lexicon.build(words, rules), rules)
    rng = random.Random(4)
    board = Board.empty(rules)
    for turn in range(30):
        rack = rng.choice(
            ["AAAABBB", "AABBBCC", "ABBBCC?", "AAAB?BB", "CCCCCCC", "BCCBCCB", "CC?CBCC"]
        )
        if turn % 2:
            rack = "".join(rng.choice("ABC") for _ in range(7))
        for n in (1, 4):
            assert_head(solver, board, rack, n)
        best = solver.generate_moves(board, rack, limit=1)
        if len(best):
            board = board.apply(best[0].placed)


@cache
def twl06_leaves() -> Leaves:
    return Leaves.open(data_path("kwg", "TWL06.klv2"), Ruleset.load("english"))


def test_leave_values_larger_than_scores_still_bound_equity():
    """Leaves worth far more (or less) than any play: the equity bound adds the best leave
    for the number of tiles played, so big leave values cannot hide a better play."""
    solver = solver_for("english")
    rules = solver.rules
    rng = random.Random(5)
    boards = positions("english")
    for trial in range(40):
        rack = random_rack(boards[trial * 3 % len(boards)], rng)
        tiles = sorted(0 if ch == "?" else rules.letter_index[ch] for ch in rack)
        values = {}
        for mask in range(1, 1 << len(tiles)):
            kept = tuple(sorted(t for i, t in enumerate(tiles) if mask >> i & 1))
            values[kept] = rng.choice([-200.0, -3.5, 0.0, 7.25, 150.0, 400.0])
        leaves = Leaves(Leaves.to_bytes(values), rules)
        board = boards[trial * 3 % len(boards)]
        for n in (1, 4):
            assert_head(solver, board, rack, n, rank="equity", leaves=leaves)


def test_two_blank_racks_with_any_leave_values_bound_equity():
    """Racks with two blanks, under leave values drawn at random for every part kept: plays
    putting down both blanks have a bound of their own (the two on the lightest squares,
    the best leave of the parts holding both), and the walk skips the second blank where
    that bound cannot rank. Where keeping a blank is worth nothing or less, the best plays
    put both down, so a bound too low would show here."""
    solver = solver_for("english")
    rules = solver.rules
    rng = random.Random(23)
    boards = positions("english")
    used_both = 0
    for trial in range(30):
        board = boards[trial * 5 % len(boards)]
        rack = random_rack(board, rng).replace("?", "")[:5] + "??"
        tiles = sorted(0 if ch == "?" else rules.letter_index[ch] for ch in rack)
        values = {}
        for mask in range(1, 1 << len(tiles)):
            kept = tuple(sorted(t for i, t in enumerate(tiles) if mask >> i & 1))
            blanks = kept.count(0)
            values[kept] = rng.choice([-30.0, -4.5, 0.0, 6.5, 25.0]) - 40.0 * blanks * (trial % 2)
        leaves = Leaves(Leaves.to_bytes(values), rules)
        for n in (1, 3):
            full, _ = assert_head(solver, board, rack, n, rank="equity", leaves=leaves)
        used_both += sum(ch.islower() for _, _, ch in full[0].placed) == 2
    assert used_both >= 5, "too few racks whose best play puts down both blanks"


def test_three_blank_racks_are_the_head_of_the_full_ranking():
    """Эрудит has three blanks: after one is down, the bound of plays with two (or more)
    covers the second and the third alike, in the prefix tree and in ExtendRight; its bingos
    are not laid from words (two blanks at most are). Every board of two games, racks of
    three blanks and four letters it leaves unseen."""
    solver = solver_for("erudit")
    rules = solver.rules
    rng = random.Random(17)
    checked = 0
    for board in positions("erudit"):
        left = unseen(board)
        if left[0] < 3:
            continue
        letters = [t for t, n in left.items() if t for _ in range(n)]
        if len(letters) < 4:
            continue
        rack = "".join(rules.alphabet[t - 1] for t in rng.sample(letters, 4)) + "???"
        for n in (1, 3, 10):
            assert_head(solver, board, rack, n)
        checked += 1
    assert checked >= 8


def test_spans_whose_best_leaves_spell_no_word_still_bound_equity():
    """A made-up lexicon where most parts of a rack spell nothing, and leave values that make
    the leave decide: an anchor's bounds, once it comes up, keep only the leaves of parts
    that spell a word with each span's board letters (and drop spans where none does). The
    top N by equity must still head the full ranking, game after game, blanks included."""
    rules = Ruleset.load("english")
    rng = random.Random(8)
    letters = "ABCDE"
    strings = ["".join(w) for n in range(2, 7) for w in product(letters, repeat=n)]
    solver = Solver(Lexicon.build([w for w in strings if rng.random() < 0.05], rules), rules)
    codes = [rules.letter_index[ch] for ch in letters]
    values = {}
    for size in range(1, 7):
        for kept in product([0, *codes], repeat=size):
            values.setdefault(tuple(sorted(kept)), rng.choice([-60.0, -8.5, 0.0, 4.25, 30.0, 90.0]))
    leaves = Leaves(Leaves.to_bytes(values), rules)
    board = Board.empty(rules)
    for turn in range(40):
        rack = "".join(rng.choice(letters) for _ in range(7))
        if turn % 3 == 0:
            rack = rack[:-1] + "?"
        for n in (1, 3):
            assert_head(solver, board, rack, n, rank="equity", leaves=leaves)
        best = solver.generate_moves(board, rack, limit=1, rank="equity", leaves=leaves)
        if len(best) and best[0].placed:
            board = board.apply(best[0].placed)


def test_best_bingos_laid_from_their_words_are_the_head():
    """By equity with N=1, an anchor where nothing but a bingo could be the best play gets its
    bingos laid from the words of the rack's letters, with no search: the play, its score
    and equity, and which of tied bingos comes first (the order the search finds them in)
    are the full ranking's. Openings of one-point racks tie dozens of bingos on one anchor;
    bingo racks on played boards, with no blank, one or two (each pair of letters the two
    can stand for, and each pair of squares two of one letter can take), go through board
    letters."""
    solver = solver_for("english")
    leaves = twl06_leaves()
    empty = Board.empty(solver.rules)
    for rack in (
        "AEINRST",
        "EINORST",
        "AEILNRT",
        "DEGORV?",
        "AEINRS?",
        "EILNOR?",
        "AEINR??",
        "DEORV??",
    ):
        full, top = assert_head(solver, empty, rack, 1, rank="equity", leaves=leaves)
        assert len(full[0].placed) == 7, f"{rack}: the opening's best play is a bingo"
        equities = full.equities()
        assert equities[0] == equities[1] or rack.endswith("?"), f"{rack}: no tie at the top"
    rng = random.Random(31)
    boards = positions("english")
    words = bingo_words("english")
    bingos = [0, 0, 0]  # by blanks on the rack
    for i in range(360):
        board = boards[i % len(boards)]
        rack = bingo_rack(board, rng.choice(words), rng, i % 3, miss=False)
        if rack is None:
            continue
        full, _ = assert_head(solver, board, rack, 1, rank="equity", leaves=leaves)
        bingos[i % 3] += len(full[0].placed) == 7
    assert min(bingos) >= 30, f"too few positions whose best play is a bingo: {bingos}"


@pytest.mark.parametrize("name", ["english", "russian", "erudit"])
def test_best_opening_searches_across_only_and_is_the_head(name):
    """On an empty board whose layout is its own mirror, every down play ties the across
    play it mirrors, which ranks first: the best play is searched across only (the down
    pass skipped) and is still the full ranking's head, by score and by equity."""
    solver = solver_for(name)
    empty = Board.empty(solver.rules)
    rng = random.Random(17)
    ranks = [{}] + ([{"rank": "equity", "leaves": twl06_leaves()}] if name == "english" else [])
    for _ in range(40):
        rack = random_rack(empty, rng)
        for rank in ranks:
            full, top = assert_head(solver, empty, rack, 1, **rank)
            across = solver.generate_moves(empty, rack, mode="across", limit=1, **rank)
            assert top.generated == across.generated, f"{rack}: the down pass was searched"


def test_ties_keep_generation_order():
    """Openings are full of equal scores (across and down mirror each other): the top N
    cut through ties exactly where the full ranking does."""
    solver = solver_for("english")
    empty = Board.empty(solver.rules)
    for rack in ("AEINRST", "EEIOUAA", "QI", "AB", "DEGORV?", "??"):
        full = solver.generate_moves(empty, rack)
        scores = full.scores()
        tied = [n for n in range(1, min(len(scores), 60)) if scores[n - 1] == scores[n]]
        for n in tied[:15] + [1, len(scores)]:
            assert_head(solver, empty, rack, n)


def test_best_play_of_every_recorded_turn():
    """Each position of the real game records (the racks the players held): the best play
    found best-first is the head of the full list."""
    solver = solver_for("english")
    checked = 0
    for path in english_files():
        for turn in replay(read_gcg(path), solver.rules):
            rack = turn.event.rack
            if not rack:
                continue
            full = solver.generate_moves(turn.board, rack)
            top = solver.generate_moves(turn.board, rack, limit=1)
            assert [m.notation for m in top] == [m.notation for m in full[:1]], path.name
            checked += 1
    assert checked > 200


def test_pruning_skips_work():
    """The point of it: on the two-blank bench position the best play is found after
    generating a small part of the 158,705 plays."""
    solver = solver_for("english")
    line = [
        ln
        for ln in data_path("bench", "positions.cgp").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ][6]
    board = Board.from_cgp(solver.rules, line)
    rack = line.split()[1].split("/")[0]
    top = solver.generate_moves(board, rack, limit=1)
    assert top[0].score == 122 and top.total is None
    assert top.generated < 158_705 // 10


def test_two_blank_racks_skip_work_by_equity():
    """Two blanks by equity: a bingo span's bingos are laid from their words (each pair of
    letters the blanks can stand for), so its best is known before any anchor is searched
    and most of the board is never walked; lanes whose letters make more than MANY_PAIRS
    pairs are laid only when their anchor comes up (the next test). (Walked, a rack with two
    blanks went through every left part the pair allows: 7.6 M instructions a call on a
    bench board, 0.4 M.)"""
    solver = solver_for("english")
    leaves = twl06_leaves()
    rng = random.Random(12)
    boards = positions("english")
    shares, generated, total = [], 0, 0
    for i in range(40):
        board = boards[(7 * i) % len(boards)]
        rack = random_rack(board, rng).replace("?", "")[:5] + "??"
        left = unseen(board)
        left.subtract(0 if ch == BLANK else solver.rules.letter_index[ch] for ch in rack)
        if min(left.values()) < 0:
            continue
        full, top = assert_head(solver, board, rack, 1, rank="equity", leaves=leaves)
        shares.append(top.generated / full.total)
        generated += top.generated
        total += full.total
    assert len(shares) >= 12
    # walked, these racks generated 14% of their plays, the median one 10% (laid: 5%, 3%)
    assert generated < total / 12 and statistics.median(shares) < 0.05, (generated, total, shares)


def test_two_blank_lanes_with_many_letter_pairs_are_laid_when_they_come_up():
    """Two blanks with five of AEINRST make bingos on most lanes for more than MANY_PAIRS
    letter pairs, too many to lay at every anchor while bounding it. Such a span keeps its
    optimistic bound until its anchor comes to the top; then its bingos are laid, every
    pair, the span with the highest bound first, and a span bounded below a bingo laid
    already keeps its bound. The best bingo is then known, and most of the board is never
    walked. (Left to the walk, these racks made 3.4% of their plays, up to 16% of one
    board's; laid, 0.5%.)"""
    solver = solver_for("english")
    leaves = twl06_leaves()
    rng = random.Random(41)
    generated, total, both = 0, 0, 0
    for board in positions("english"):
        rack = "".join(rng.sample("AEINRST", 5)) + "??"
        left = unseen(board)
        left.subtract(0 if ch == BLANK else solver.rules.letter_index[ch] for ch in rack)
        if min(left.values()) < 0:
            continue
        full, top = assert_head(solver, board, rack, 1, rank="equity", leaves=leaves)
        assert_head(solver, board, rack, 3, rank="equity", leaves=leaves)
        generated += top.generated
        total += full.total
        both += sum(ch.islower() for _, _, ch in full[0].placed) == 2
    assert both >= 12, "too few boards whose best play is a bingo with both blanks"
    assert generated < total / 50, (generated, total)


# Boards of self-play and racks whose N-th and (N+1)-th plays by equity tie, each at an
# anchor whose refined bound is exactly that equity (found by drawing random racks on
# self-play boards: about 1 rack in 7,000).
TIED_ACROSS_ANCHORS = [
    (
        "7K7/7A7/6AE7/5NU8/4TED4P3/4OBI4I3/4O1O4G3/4N1SHOVEL3/11I3/11k3/10YE3/10A4/10Y4/15/15",
        "EIINNTU",
        1,
    ),
    ("15/15/15/15/15/15/15/3PLOTTED5/15/15/15/15/15/15/15", "AIIIOOR", 1),
    (
        "7O4J2/7E4O2/7U3AB2/7V3L3/4TeTRADIC3/4O2E3A3/4O6Y3/4T1GAITED3/4S6E3/4I6S3/4E10/4S10/15/15/15",
        "FLNNOTU",
        1,
    ),
    (
        "15/15/11L3/11I3/11N3/9JOG3/9AXE3/3PLOTTED1R3/1L5OVERS3/1I1SOLATED5/1P1HWAN8/ZONE2AUGURED2/1M1WIG9/1A13/15",
        "EFIIOTV",
        1,
    ),
    (
        "9VACANT/8T2E3/7BI2N3/7OD1ET3/7RE1AS3/7OD1R4/7U2P4/7GAILY3/7H2U4/NUMERALs2G4/10SH3/11EF2/11XI2/9ZEALOT/7WOALDS2",
        "EEIINOS",
        1,
    ),
    (
        "11KIDS/13I1/13P1/9CLOTTY/13E1/11P1R1/5HUNH2R1A1/7AEOLIaN1/8MIAOWS1/11R3/3t6AI3/3R5AYE3/3A2UTILISE2/1CONGO3EN4/3Q1FEAZE5",
        "EEEILTU",
        1,
    ),
    (
        "2NUGGET7/4E10/4I10/3ES10/3EH10/3LAMA1ATRIA2/3I2LILO5/3E3NAYS4/3r11/15/15/15/15/15/15",
        "AAIORUY",
        1,
    ),
    ("7K7/7A7/6AE7/5NU8/5ED4P3/5BI4I3/6O4G3/6SHOVEL3/11I3/11k3/11E3/15/15/15/15", "EIIORTU", 2),
    ("7K7/7A7/6AE7/5NU8/5ED8/5BI8/6O8/6SHOVE4/15/15/15/15/15/15/15", "AADIIOO", 2),
    (
        "15/12A2/12Z2/11JO2/4T6U3/1F2A6I3/1O2N6C3/1R2G1AERILY3/1ATROPINE6/4E10/4D10/15/15/15/15",
        "IIRRTUW",
        2,
    ),
    (
        "7A6J/7M1KLEPTO/6NOVA1HAIL/7U2O3E/7R2N2IS/9ET2Z1/9NONFAT/7QIS1AERO/7INURE3/9E2BUM/9DUCAT1/11O2C/11Y2O/9WHEENS/6GITE1R2S",
        "DEEGLL?",
        1,
    ),
    (
        "7A6J/7M1KLEPTO/6NOVA1HAIL/7U2O3E/7R2N2IS/9ET2Z1/9NONFAT/7QIS1AERO/7INURE3/9E2BUM/9DUCAT1/11O2C/11Y2O/9WHEENS/6GITE1R2S",
        "DEEGLL?",
        2,
    ),
]


def test_a_leave_far_larger_than_scores_does_not_round_a_refined_bound_away():
    """The same rounding made large: with one leave worth 3e9 (a float32 step of 256), taking
    the difference of two leaves off a span's bound lost whole points, and the best play's
    anchor (H12 (J)ADE, 36) was passed over for a 24-point play (a helper's attack)."""
    solver = solver_for("english")
    board = Board.from_cgp(
        solver.rules,
        "15/15/15/15/15/15/4V1HOBBER3/3VIMEN1R2KUE/2DIN1TEQUILA2/2ARE4X5/2DID4I5/"
        "2OD3JOnES3/2S6G5/15/15",
    )
    leaves = Leaves(Leaves.to_bytes({(4, 5, 5, 15): 3e9, (1,): 0.5}), solver.rules)
    full, _ = assert_head(solver, board, "AEDIEOE", 1, rank="equity", leaves=leaves)
    assert full[0].notation == "H12 (J)ADE"


@pytest.mark.parametrize(("cgp", "rack", "n"), TIED_ACROSS_ANCHORS)
def test_plays_tied_in_equity_across_anchors_rank_in_generation_order(cgp, rack, n):
    """A refined span bound took the difference of two leaves off the float bound, and
    rounded a few millionths below the play it bounded: when a tied play at another anchor
    had set the floor first, the anchor of the play that comes first in generation order
    was passed over, and the later of the two ranked. A refined bound now adds the tighter
    leave to the span's points, as emit() adds a play's."""
    solver = solver_for("english")
    board = Board.from_cgp(solver.rules, cgp)
    full, _ = assert_head(solver, board, rack, n, rank="equity", leaves=twl06_leaves())
    equities = full.equities()
    assert equities[n - 1] == equities[n], "the case no longer ties at the cut"


def test_count_all_searches_everything_under_a_limit():
    """A request for every play under a server's cap: the list is cut, the count is not."""
    solver = solver_for("english")
    board = positions("english")[9]
    rack = random_rack(board, random.Random(3))
    full = solver.generate_moves(board, rack)
    for n in (0, 1, 25):
        top = solver.generate_moves(board, rack, limit=n, count_all=True)
        assert top.total == top.generated == full.total
        assert [m.notation for m in top] == [m.notation for m in full[:n]]


def test_fields_read_the_records_as_moves_do():
    """MoveList.fields() (the batch path: no Move objects) says what the Moves say, in the
    same order, exchanges and equity ordering included."""
    solver = solver_for("english")
    board = positions("english")[7]
    rack = random_rack(board, random.Random(8))
    for kwargs in (
        {},
        {"limit": 5},
        {"include_exchanges": True, "rank": "equity", "leaves": twl06_leaves()},
    ):
        moves = solver.generate_moves(board, rack, **kwargs)
        expected = [
            (m.notation, m.score, m.row, m.col, m.direction, m.word, m.placed) for m in moves
        ]
        assert moves.fields() == expected and len(expected) == len(moves) > 0
        assert [moves.placed(i) for i in range(len(moves))] == [m.placed for m in moves]
        assert moves.placed(-1) == moves[-1].placed
        with pytest.raises(IndexError):
            moves.placed(len(moves))


@pytest.mark.parametrize("rack", ["IIUUVVW", "QU?", "AEINRST", "UUUVWWY"])
def test_top_n_with_exchanges_is_the_head_of_the_full_list(rack):
    """Exchanges are built only for the first N places: the head is the same, ties and
    the pass included, by equity (bad racks: exchanges lead) and by score (they trail)."""
    solver = solver_for("english")
    board = positions("english")[3]
    for kwargs in ({"rank": "equity", "leaves": twl06_leaves()}, {}):
        full = solver.generate_moves(board, rack, include_exchanges=True, **kwargs)
        want = [
            (m.notation, e)
            for m, e in zip(full, full.equities() or [None] * len(full), strict=True)
        ]
        for n in (1, 2, 3, 5, 8, 13, 40, 200):
            top = solver.generate_moves(board, rack, include_exchanges=True, limit=n, **kwargs)
            got = [
                (m.notation, e)
                for m, e in zip(top, top.equities() or [None] * len(top), strict=True)
            ]
            assert got == want[:n], (rack, n, kwargs.get("rank"))


def test_top_n_by_equity_with_exchanges_on_many_racks():
    """The head of the full list by equity, exchanges and the pass included, on random
    racks over many boards: when the top plays outrank every exchange the exchanges are
    not listed at all (Solver._plays_fill), and the head must not notice."""
    solver, leaves = solver_for("english"), twl06_leaves()
    rng = random.Random(21)
    skipped = 0
    for board in positions("english")[::3]:
        for _ in range(6):
            rack = random_rack(board, rng)
            full = solver.generate_moves(
                board, rack, rank="equity", leaves=leaves, include_exchanges=True
            )
            want = list(zip([m.notation for m in full], full.equities(), strict=True))
            for n in (1, 2, 4):
                top = solver.generate_moves(
                    board, rack, rank="equity", leaves=leaves, include_exchanges=True, limit=n
                )
                got = list(zip([m.notation for m in top], top.equities(), strict=True))
                assert got == want[:n], (board.to_cgp(), rack, n)
                skipped += not top._extra
    assert skipped >= 20  # the skip was taken, not only the listing


def test_fields_of_a_list_with_exchanges_merged_by_equity():
    """MoveList.fields(first=N) decodes only the records the first N entries hold (plays
    keep their ranked order among the exchanges), and equals reading the Moves."""
    solver, leaves = solver_for("english"), twl06_leaves()
    rng = random.Random(8)
    for board in positions("english")[::5]:
        rack = random_rack(board, rng)
        moves = solver.generate_moves(
            board, rack, rank="equity", leaves=leaves, include_exchanges=True
        )
        for first in (1, 3, 10, None):
            head = moves if first is None else moves[:first]
            assert moves.fields(first=first) == [m.fields() for m in head], (rack, first)


def test_decoding_records_in_c_keeps_no_memory():
    """describe() builds each entry by hand (lists and tuples, strings joined): reading the
    same records thousands of times leaves nothing behind."""
    import gc
    import tracemalloc

    solver = solver_for("english")
    board = positions("english")[3]
    moves = solver.generate_moves(board, "AEINRS?", limit=40)
    for lists in (False, True):
        moves.fields(lists=lists)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            moves.fields(lists=lists)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert grown < 20_000, (lists, grown)  # 12,000 entries read: a leak shows in MBs


def _blank_only_square(solver: Solver, board: Board, rack: str, move) -> bool:
    """Whether `move` puts its blank where no letter of the rack could go: a square whose
    perpendicular word no rack letter completes."""
    for row, col, letter in move.placed:
        if not letter.islower():
            continue
        step = (1, 0) if move.direction == "across" else (0, 1)  # the perpendicular
        before, after = "", ""
        r, c = row - step[0], col - step[1]
        while 0 <= r and 0 <= c and board.letter_at(r, c):
            before = board.letter_at(r, c).upper() + before
            r, c = r - step[0], c - step[1]
        r, c = row + step[0], col + step[1]
        while r < solver.rules.rows and c < solver.rules.cols and board.letter_at(r, c):
            after += board.letter_at(r, c).upper()
            r, c = r + step[0], c + step[1]
        if (before or after) and not any(
            before + x + after in solver.lexicon for x in set(rack) - {BLANK}
        ):
            return True
    return False


def test_plays_whose_blank_goes_where_no_rack_letter_can_are_still_found():
    """A square only a blank can fill: a span through it holds only plays with a blank, so
    its bound by equity is that of the blank's plays (the blank's leave gone). The best
    play is found where it is such a play, on boards of real self-play games."""
    solver = solver_for("english")
    leaves = twl06_leaves()
    rng = random.Random(5)
    found = 0
    for board in positions("english")[4:]:
        for _ in range(12):
            rack = random_rack(board, rng).replace("?", "")[:6] + "?"
            full, top = assert_head(solver, board, rack, 1, rank="equity", leaves=leaves)
            found += bool(full) and _blank_only_square(solver, board, rack, full[0])
    assert found >= 3  # the case this is about did come up


def blank_rack(board: Board, rng: random.Random, blanks: int, size: int) -> str | None:
    """A rack of `size` tiles, `blanks` of them blanks, from the tiles the board leaves
    unseen; None when the board has played too many blanks."""
    rules = board.rules
    left = unseen(board)
    if left[0] < blanks:
        return None
    letters = [rules.alphabet[t - 1] for t, n in left.items() if t for _ in range(n)]
    return "".join(rng.sample(letters, size - blanks)) + BLANK * blanks


@settings(max_examples=300, deadline=None)
@given(
    index=st.integers(0, 10**6),
    seed=st.integers(0, 10**9),
    n=st.sampled_from(SIZES),
    blanks=st.integers(1, 2),
    size=st.integers(2, 7),
    mode=st.sampled_from(["across", "down", "both"]),
)
def test_blank_racks_laid_from_words_are_the_head(index, seed, n, blanks, size, mode):
    """By equity a rack with a blank has each anchor's plays laid from the words of its
    parts (laid.c) rather than walked: the top N are the full ranking's first N (the full
    list is walked), ties in the walk's order, on every board of two self-played games,
    for racks of 2 to 7 tiles (the last turns' too) and every direction."""
    assume(blanks < size)
    solver = solver_for("english")
    boards = positions("english")
    board = boards[index % len(boards)]
    rack = blank_rack(board, random.Random(seed), blanks, size)
    assume(rack is not None)
    assert_head(solver, board, rack, n, mode, rank="equity", leaves=twl06_leaves())


@pytest.mark.parametrize("rack", ["AEINR??", "EILNOR?", "AEEOQR?", "DGKSTZ?", "FIJQV??", "ABDJOY?"])
def test_laid_plays_tie_in_the_walks_order(rack):
    """Openings tie by the dozen (a word at mirrored or shifted squares), and a blank
    on each square its letter takes is a play of its own: the laid plays carry the walk's
    order as their key (left tiles, a mark, right tiles; a blank after its letter on the
    right, after every letter on the left), so the first 40 are the full ranking's, ties
    and all, on the empty board and the bench's most crowded one."""
    solver = solver_for("english")
    leaves = twl06_leaves()
    crowded = [
        ln
        for ln in data_path("bench", "positions.cgp").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ][6]
    for board in (Board.empty(solver.rules), Board.from_cgp(solver.rules, crowded)):
        full, _ = assert_head(solver, board, rack, 40, rank="equity", leaves=leaves)
        equities = full.equities()
        assert len(set(equities[:40])) < 40 or len(full) < 40, "some of the first 40 tie"


def test_blank_racks_with_made_up_leaves_are_the_head():
    """Leave tables of random values, large and small, with blanks laid: the parts are
    bounded by their own leaves, best first, so any table still finds the head."""
    solver = solver_for("english")
    rules = solver.rules
    rng = random.Random(8)
    boards = positions("english")
    for trial in range(30):
        table = {}
        for _ in range(300):
            k = rng.randint(1, 6)
            key = tuple(sorted(rng.randint(0, len(rules.alphabet)) for _ in range(k)))
            table[key] = rng.uniform(-60, 60)
        leaves = Leaves(Leaves.to_bytes(table), rules)
        board = boards[(5 * trial) % len(boards)]
        rack = blank_rack(board, rng, 1 + trial % 2, 7)
        if rack is None:
            continue
        assert_head(solver, board, rack, rng.choice(SIZES), rank="equity", leaves=leaves)


def test_blank_racks_by_equity_lay_only_the_plays_that_could_rank():
    """The point of laying: a part whose own tiles and leave cannot beat the floor is never
    looked up, so the plays made are the few that could rank. Walked, these racks made
    4.8% of their plays (9,348 of 196,695); with the anchors where a left part from the
    rack can go laid (the others, after a board tile or an anchor, are still walked),
    1.2%."""
    solver = solver_for("english")
    leaves = twl06_leaves()
    rng = random.Random(21)
    boards = positions("english")
    generated = total = racks = 0
    for i in range(40):
        board = boards[(3 * i) % len(boards)]
        rack = blank_rack(board, rng, 1 + i % 2, 7)
        if rack is None:
            continue
        full, top = assert_head(solver, board, rack, 1, rank="equity", leaves=leaves)
        generated += top.generated
        total += full.total
        racks += 1
    assert racks >= 20
    assert generated < total / 40, (generated, total)


@pytest.mark.skipif(
    not Path("/proc/self/statm").exists(), reason="reads the resident size from Linux's /proc"
)
def test_blank_racks_keep_no_memory_whatever_the_limit():
    """A search by equity of a rack with a blank takes 13 KiB for what laying remembers of
    its parts and gives it back: also when a limit of 0 returns before any search (a
    helper's attack found that path keeping it, 12 KiB a call)."""
    solver = solver_for("english")
    leaves = twl06_leaves()
    board = positions("english")[5]

    def resident() -> int:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    for limit in (0, 1):
        solver.generate_moves(board, "AEINST?", limit=limit, rank="equity", leaves=leaves)
        before = resident()
        for _ in range(4000 if limit else 20000):
            solver.generate_moves(board, "AEINST?", limit=limit, rank="equity", leaves=leaves)
        grown = resident() - before
        assert grown < 40 * 2**20, (limit, grown)  # leaking, 20,000 calls keep 250 MiB
