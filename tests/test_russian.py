"""Russian Scrabble, Эрудит and Super Scrabble end to end: real lexica from the
registries (anchor lexicon install), hand-computed scores, the oracle, self-played games."""

from __future__ import annotations

import random

import pytest

from anchor.engine import Board, Lexicon, Ruleset, Solver, parse_cgp, parse_play, score_play
from anchor.engine.gcg import parse_gcg, replay
from anchor.engine.selfplay import play_game

from .conftest import ROOT
from .oracle import all_plays
from .test_movegen_oracle import compare, random_board

BUILD = ROOT / "dictionaries" / "build"


def lexicon_for(name: str) -> Lexicon:
    path = BUILD / f"{name}.kwg"
    if not path.exists():
        pytest.fail(f"{path} is missing: `make test` builds it (anchor lexicon install {name})")
    return Lexicon.open(path, Ruleset.load(name))


@pytest.fixture(scope="module")
def russian_lex() -> Lexicon:
    return lexicon_for("russian")


@pytest.fixture(scope="module")
def erudit_lex() -> Lexicon:
    return lexicon_for("erudit")


def test_russian_lexicon_contents(russian_lex):
    assert len(russian_lex) == 61_783
    for word in ("ножницы", "сани", "ёж", "ель", "кофе", "абажур"):
        assert russian_lex.contains(word), word
    for word in ("москва", "иван", "ооо", "еж", "бежать", "быстро", "ежи", "мы"):
        assert not russian_lex.contains(word), word


def test_erudit_lexicon_folds_yo(erudit_lex):
    assert len(erudit_lex) == 61_776  # seven pairs like ёж/еж became one word
    assert erudit_lex.contains("ЕЖ") and erudit_lex.contains("ёж")
    assert all("Ё" not in w for w in erudit_lex)


def test_russian_hand_scores(russian):
    empty = Board.empty(russian)
    # ЁЖ on 8H-8I: Ё 3 + Ж 5 = 8, the centre doubles: 16
    assert score_play(empty, "8H ЁЖ").total == 16
    # ЁЖ with a blank for Ж: Ё 3 + ж 0 = 3, doubled: 6
    assert score_play(empty, "8H Ёж").total == 6
    # ТАСОВКА on 8H-8N: Т1 А1 С1 О1 В1x2 (8L is a double letter) К2 А1 = 9, x2 = 18, +50
    assert score_play(empty, "8H ТАСОВКА").total == 18 + 50
    board = empty.apply(parse_play(empty, "8H ТАСОВКА"))
    # 9G ЁЖ under ТАСОВКА (scoring does not ask whether the words exist):
    # Ё on 9G, a double letter: 3x2 = 6; Ж on 9H: 5. Main word ЁЖ = 11.
    # Ж also makes ТЖ down H8-H9: Т 1 + Ж 5 = 6. Total 17.
    s = score_play(board, "9G ЁЖ")
    assert {w.word: w.score for w in s.words} == {"ЁЖ": 11, "ТЖ": 6}
    assert s.total == 17


def test_erudit_hand_scores(erudit):
    empty = Board.empty(erudit)
    # the centre gives no premium in Эрудит: Е 1 + Ж 5 = 6
    assert score_play(empty, "8H ЕЖ").total == 6
    # ТАСОВКА: Т2 А1 С2 О1 В2x2 (8L) К2 А1 = 13, no word premium, bingo 15: 28
    assert score_play(empty, "8H ТАСОВКА").total == 13 + 15
    # blanks score 0 here too: тАСОВКА = 11 + 15
    assert score_play(empty, "8H тАСОВКА").total == 11 + 15


def test_cyrillic_notation_and_cgp(russian, russian_lex):
    cgp = "15/15/15/15/15/15/15/7ТАСОВКА1/15/15/15/15/15/15/15 ЁЖИКЛМН/ 0/0 0"
    pos = parse_cgp(russian, cgp)
    assert pos.racks == ("ЁЖИКЛМН", "") and pos.to_cgp().startswith(pos.board.to_cgp())
    play = parse_play(pos.board, "H7 Ё(Т)")
    assert play.word == "ЁТ" and play.placed == ((6, 7, "Ё"),)
    moves = Solver(russian_lex).generate_moves(pos.board, pos.racks[0])
    assert len(moves) > 10
    for m in moves[:50]:
        assert parse_play(pos.board, m.notation).placed == m.placed


def russian_words(lexicon: Lexicon, seed: int, n: int) -> set[str]:
    words = [w for w in lexicon if 2 <= len(w) <= 7]
    rng = random.Random(seed)
    short = [w for w in words if len(w) <= 3]
    return set(rng.sample(short, min(150, len(short)))) | set(rng.sample(words, n))


@pytest.mark.parametrize("name", ["russian", "erudit"])
def test_oracle_on_cyrillic_positions(name, request):
    lexicon = request.getfixturevalue(f"{name}_lex")
    rules = lexicon.rules
    words = russian_words(lexicon, 3, 350)
    small = Lexicon.build(words, rules)
    solver = Solver(small, rules)
    rng = random.Random(11)
    bag = "".join(ch * n for ch, n in rules.counts.items()) + "?" * rules.blanks
    total = 0
    for i in range(120):
        board = random_board(rules, small, sorted(words), rng, plays=rng.choice([0, 3, 8, 15]))
        rack = "".join(rng.sample(bag if i % 3 == 0 else bag.replace("?", ""), 7))
        total += compare(solver, board, rack, words)
        moves = solver.generate_moves(board, rack)
        assert moves.fields() == [m.fields() for m in moves]  # decoded in C, Cyrillic too
    assert total > 500


@pytest.mark.parametrize("name", ["english", "russian", "erudit"])
def test_self_played_game_conserves_tiles(name):
    lexicon = lexicon_for(name)
    solver = Solver(lexicon)
    for seed in (1, 2):
        game = play_game(solver, seed=seed, check=True)  # checks every turn, raises if not
        assert game.end in ("out", "scoreless") and len(game.turns) > 10
        placed = sum(len(t.move.placed) for t in game.turns)
        assert placed == game.board.tile_count()
        record = parse_gcg(game.to_gcg())
        finals: dict[int, int] = {}
        for ev in record.events:
            finals[ev.player_index] = ev.total
        assert [finals[i] for i in range(2)] == game.scores
        for turn in replay(record, lexicon.rules):
            if turn.score is not None:
                assert turn.score.total == turn.event.score


def test_super_scrabble_board(twl06_words):
    rules = Ruleset.load("super-english")
    assert (rules.rows, rules.cols, rules.total_tiles, rules.blanks) == (21, 21, 200, 4)
    assert rules.multipliers(0, 0) == (1, 4) and rules.multipliers(2, 5) == (4, 1)
    assert rules.multipliers(*rules.centre) == (1, 2)
    # the middle 15x15 is the standard board
    english = Ruleset.load("english")
    assert all(rules.premiums[r + 3][3:18] == english.premiums[r] for r in range(15))
    rng = random.Random(5)
    words = {w.upper() for w in rng.sample([w for w in twl06_words if len(w) <= 8], 400)}
    words |= {w.upper() for w in twl06_words if len(w) == 2}
    small = Lexicon.build(words, rules)
    solver = Solver(small, rules)
    for i in range(60):
        board = random_board(rules, small, sorted(words), rng, plays=rng.choice([0, 5, 15, 30]))
        bag = "AAEEIINORSTLDG??" if i % 2 else "AEEIINORSTLDGQZXJK"
        compare(solver, board, "".join(rng.sample(bag, 7)), words)


def test_super_scrabble_self_play(twl06_words):
    rules = Ruleset.load("super-english")
    solver = Solver(Lexicon.build(twl06_words, rules))
    game = play_game(solver, seed=3, players=4)
    assert game.end in ("out", "scoreless") and len(game.players) == 4


def test_all_plays_oracle_matches_generator_on_real_russian_lexicon(russian_lex):
    # one crowded real position against the full lexicon (61,783 words)
    solver = Solver(russian_lex)
    game = play_game(solver, seed=9)
    board = Board.empty(russian_lex.rules)
    for turn in game.turns[:10]:
        board = board.apply(turn.move.placed)
    rack = "АЕИНОРТ"
    got = {frozenset(m.placed): m.score for m in solver.generate_moves(board, rack)}
    assert got == all_plays(board, rack, set(russian_lex))
