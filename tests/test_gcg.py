"""Replays every English game record in ../shared/data/gcg: the recorded score of every
play is an independent scoring oracle (written by Quackle, Macondo and people)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import InputError, Ruleset
from anchor.engine.gcg import (
    CHALLENGE_BONUS,
    END_RACK,
    EXCHANGE,
    PASS,
    PLAY,
    WITHDRAWN,
    decode_gcg,
    parse_gcg,
    read_gcg,
    replay,
    write_gcg,
)

from .conftest import data_path

ENGLISH = Ruleset.load("english")

# Records that are not English Scrabble: replaying them with English tiles is meaningless.
NOT_ENGLISH = {
    "polish_endgame.gcg": "a Polish game (Ę, Ć, Ł...): the Polish ruleset is not bundled",
}
# Lines whose recorded running total is the record's own slip, not a scoring question.
TOTAL_SLIPS = {
    ("capp.gcg", 14): "Quackle wrote a withdrawn 45-point phony as '+0' while the total drops 45",
}


def gcg_files() -> list[Path]:
    return sorted(data_path("gcg").rglob("*.gcg"))


def english_files() -> list[Path]:
    return [p for p in gcg_files() if p.name not in NOT_ENGLISH]


def test_the_data_set_is_all_there():
    assert len(gcg_files()) == 44


@pytest.mark.parametrize("path", english_files(), ids=lambda p: p.name)
def test_every_recorded_play_score_matches(path):
    game = read_gcg(path)
    turns = list(replay(game, ENGLISH))
    plays = [t for t in turns if t.event.kind == PLAY]
    mismatches = [
        f"line {t.event.line}: {t.event.text.strip()} -> we score {t.score.total}"
        for t in plays
        if t.score.total != t.event.score
    ]
    assert not mismatches, "\n".join(mismatches)
    assert len(turns) == len(game.events)


def test_total_plays_replayed():
    count = sum(
        1 for p in english_files() for t in replay(read_gcg(p), ENGLISH) if t.event.kind == PLAY
    )
    assert count == 839


@pytest.mark.parametrize("path", english_files(), ids=lambda p: p.name)
def test_running_totals_add_up(path):
    game = read_gcg(path)
    totals: dict[int, int] = {}
    for ev in game.events:
        expected = totals.get(ev.player_index, 0) + ev.score
        if (path.name, ev.line) in TOTAL_SLIPS:
            assert expected != ev.total
        else:
            assert expected == ev.total, f"line {ev.line}: {ev.text}"
        totals[ev.player_index] = ev.total


@pytest.mark.parametrize("name, reason", NOT_ENGLISH.items())
def test_non_english_records_fail_clearly(name, reason):
    path = next(p for p in gcg_files() if p.name == name)
    with pytest.raises(InputError, match="not a letter of the english alphabet"):
        list(replay(read_gcg(path), ENGLISH))


def test_withdrawn_phony_leaves_the_board():
    path = next(p for p in gcg_files() if p.name == "doug_v_emely_double_challenge.gcg")
    turns = list(replay(read_gcg(path), ENGLISH))
    i = next(k for k, t in enumerate(turns) if t.event.kind == WITHDRAWN)
    phony = turns[i - 1]
    assert phony.event.kind == PLAY and phony.event.word == "TIL.."
    assert turns[i + 1].board == phony.board  # the phony's tiles are gone again


def test_event_kinds_and_encodings():
    game = parse_gcg(
        "#player1 a Alice A\n#player2 b Bob\n"
        ">a: ABC?DEF 8d FaCED +30 30\n"
        ">b: XYZ -XY +0 0\n"
        ">a: GHI - +0 30\n"
        ">b: QQ 9E QI +11 11 trailing comment\n"
        ">b: QQ -- -11 0\n"
        ">a: ABC (challenge) +5 35\n"
        ">a:  (QQ) +20 55\n"
        ">b: QQ (QQ) -20 -20\n"
    )
    kinds = [e.kind for e in game.events]
    assert kinds == [PLAY, EXCHANGE, PASS, PLAY, WITHDRAWN, CHALLENGE_BONUS, END_RACK, END_RACK]
    assert game.players[0].name == "Alice A" and game.players[1].name == "Bob"
    assert game.events[1].tiles == "XY" and game.events[6].tiles == "QQ"
    assert [e.player_index for e in game.events] == [0, 1, 0, 1, 1, 0, 0, 1]


def test_latin1_and_utf8_names():
    by_name = {p.name: p for p in gcg_files()}
    assert "ú" in read_gcg(by_name["some_isc_game.gcg"]).players[1].nick
    latin = read_gcg(by_name["name_iso8859-1.gcg"])
    utf8 = read_gcg(by_name["name_utf8_noheader.gcg"])
    assert latin.players[0].nick == utf8.players[0].nick == "césar"


@pytest.mark.parametrize(
    "line, message",
    [
        (">a 8D CAT +5 5", "without 'nick:'"),
        (">a: 8D CAT", r"no '\+score total'"),
        (">a: +5 5", "nothing between"),
        (">a: ABC ??? +5 5", "cannot read move"),
    ],
)
def test_bad_move_lines(line, message):
    with pytest.raises(InputError, match=message):
        parse_gcg(line)


MOVE_TOKENS = st.sampled_from(
    [
        "8D",
        "D8",
        "h2",
        "15O",
        "WORD",
        "W.RD",
        "(challenge)",
        "(time)",
        "(AB)",
        "--",
        "-",
        "-AB",
        "+5",
        "-5",
        "12",
        "0",
        "AEINRST",
        "?",
        "x",
        ":",
        ">p:",
        "#note",
        "#player1 p P",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(MOVE_TOKENS, max_size=7).map(" ".join), max_size=12))
def test_fuzz_gcg_lines_parse_or_fail_clearly(lines):
    text = "#player1 p P\n#player2 q Q\n" + "\n".join(
        (">p: " if i % 2 == 0 else ">q: ") + line for i, line in enumerate(lines)
    )
    try:
        game = parse_gcg(text)
    except InputError:
        return
    try:
        for turn in replay(game, ENGLISH):
            assert turn.board.tile_count() >= 0
    except InputError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_gcg_bytes(data):
    try:
        game = parse_gcg(decode_gcg(data))
        list(replay(game, ENGLISH))
    except InputError:
        pass


def test_leave_kept_by_each_kind_of_move_line():
    from anchor.engine.gcg import leave_kept

    game = parse_gcg(
        "#player1 a A\n#player2 b B\n"
        ">a: ABDEH?S 8D BADgES +28 28\n"
        ">b: QQXYZAB -QQ? +0 0\n"
        ">b: QQXYZAB -QQX +0 0\n"
        ">a: AEH - +0 28\n"
        ">b: XYZAB -3 +0 0\n"
    )
    kept = [leave_kept(t, ENGLISH) for t in replay(game, ENGLISH)]
    index = ENGLISH.letter_index
    assert kept[0] == (index["H"],)  # the blank stood for the G
    assert kept[1] is None  # the record exchanges a blank the rack does not hold
    assert kept[2] == tuple(sorted(index[c] for c in "YZAB"))
    assert kept[3] == tuple(sorted(index[c] for c in "AEH"))
    assert kept[4] is None  # an exchange recorded only as a count


def _comparable(game):
    return (
        game.players,
        [replace(ev, line=0, text="") for ev in game.events],
        {k: v for k, v in game.pragmas.items() if k != "character-encoding"},
        game.notes,
        [line for line in game.placed if line[0] != "character-encoding"],
    )


def _remarks(text: str) -> list[tuple[str, int]]:
    """Each `#` line with the number of move lines before it."""
    out, moves = [], 0
    for line in text.splitlines():
        if line.startswith(">"):
            moves += 1
        elif line.startswith("#") and not line.startswith("#character-encoding"):
            out.append((" ".join(line.split()), moves))
    return out


@pytest.mark.parametrize("path", gcg_files(), ids=lambda p: p.name)
def test_write_then_read_gives_the_same_game(path):
    """One Game model for reading and writing: every shared record survives the trip."""
    game = read_gcg(path)
    text = write_gcg(game)
    again = parse_gcg(text, source=str(path))
    assert _comparable(again) == _comparable(game)
    assert write_gcg(again) == text
    original = decode_gcg(path.read_bytes())
    if all(ln.strip().startswith(("#", ">")) for ln in original.splitlines() if ln.strip()):
        assert _remarks(text) == _remarks(original)  # every pragma and note where it stood


def test_notes_stay_after_the_move_they_comment_on():
    """Three notes on three turns came out all at the top, losing which move each was on."""
    text = (
        "#character-encoding UTF-8\n#player1 a A\n#player2 b B\n"
        ">a: AEINRST 8D RETAINS +66 66\n#note a bingo\n"
        ">b: EIOUQXZ 7H Ox +18 18\n#note the X on a double\n"
        ">a: ABCDEFG -ABC +0 66\n#note an exchange\n#rack1 DEFGHIJ\n"
    )
    game = parse_gcg(text)
    assert write_gcg(game) == text
    assert game.notes == ("a bingo", "the X on a double", "an exchange")
    changed = replace(game, notes=("one note",))  # no longer what was read: at the top
    head = write_gcg(changed).split(">")[0]
    assert "#rack1 DEFGHIJ" in head and "#note one note" in head
    assert parse_gcg(write_gcg(changed)).notes == ("one note",)


def test_a_record_in_another_encoding_naming_none_gets_a_hint(tmp_path):
    """A cp1251 record without #character-encoding failed with "'Ë' is not a letter of the
    russian alphabet" and no word of the encoding."""
    record = tmp_path / "game.gcg"
    text = "#player1 a A\n#player2 b B\n>a: АБВГДЕЖ 8H ДОМ +10 10\n"
    record.write_bytes(text.encode("cp1251"))
    game = read_gcg(record)
    assert game.guessed and game.encoding == "latin-1"
    with pytest.raises(InputError, match="#character-encoding cp1251"):
        list(replay(game, Ruleset.load("russian")))
    record.write_bytes(("#character-encoding cp1251\n" + text).encode("cp1251"))
    assert not read_gcg(record).guessed
