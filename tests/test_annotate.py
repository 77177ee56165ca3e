"""Annotation of the recorded games: the bookkeeping per turn and per player, the command
over the whole shared data set, and the HTML report as a browser renders it."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from anchor.client.cli import main
from anchor.engine import Board, Ruleset, Solver
from anchor.engine.annotate import annotate_game
from anchor.engine.gcg import read_gcg, replay

from .conftest import data_path

ENGLISH = Ruleset.load("english")


@pytest.fixture(scope="module")
def solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06, ENGLISH)


def game_path(name: str) -> Path:
    return next(p for p in data_path("gcg").rglob("*.gcg") if p.name == name)


def test_turn_bookkeeping_against_the_generator(solver):
    game = read_gcg(game_path("doug_v_emely.gcg"))
    annotation = annotate_game(game, solver, top=5)
    turns = annotation["turns"]
    assert len(turns) == len(game.events)
    for turn, replayed in zip(turns, replay(game, ENGLISH), strict=True):
        if not turn.get("analysed"):
            continue
        scores = solver.generate_moves(replayed.board, turn["rack"]).scores()
        assert turn["total_plays"] == len(scores)
        if turn["rank_by"] != "endgame":  # an empty bag's plays rank by endgame value
            assert [b[1] for b in turn["best"]] == scores[:5]
        assert turn["given_up"] == max(0, scores[0] - turn["score"])
        if turn["rank"] is not None:
            assert turn["rank"] == 1 + sum(1 for s in scores if s > turn["score"])
    donates = next(t for t in turns if t.get("played") == "10B DONATES")
    assert (donates["score"], donates["rank"], donates["given_up"], donates["bingo"]) == (
        82,
        1,
        0,
        True,
    )
    gale = next(t for t in turns if t.get("played") == "7C GALE")
    assert gale["rank"] == 17 and gale["given_up"] == 6 and gale["best"][0][1] == 22


def test_player_summary_adds_up(solver):
    annotation = annotate_game(read_gcg(game_path("josh2.gcg")), solver)
    for seat, summary in enumerate(annotation["summary"]):
        mine = [t for t in annotation["turns"] if t["player"] == seat and t.get("analysed")]
        assert summary["given_up"] == sum(t["given_up"] for t in mine)
        assert summary["analysed"] == len(mine)
        assert summary["average_given_up"] == round(summary["given_up"] / len(mine), 2)
        assert summary["bingos_missed"] == sum(
            1 for t in mine if t["bingo_available"] and not t.get("bingo")
        )
        assert (
            summary["final"]
            == [t for t in annotation["turns"] if t["player"] == seat][-1]["recorded_total"]
        )


def test_phony_and_withdrawn_turns(solver):
    annotation = annotate_game(read_gcg(game_path("doug_v_emely_double_challenge.gcg")), solver)
    til = next(t for t in annotation["turns"] if t.get("played") == "4B TIL(AX)")
    assert til["invalid_words"] == ["TILAX"] and til["rank"] is None  # a phony has no rank
    withdrawn = [t for t in annotation["turns"] if t["kind"] == "withdrawn"]
    assert len(withdrawn) == 1 and withdrawn[0]["recorded_score"] == -24


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    gcg = tmp_path_factory.mktemp("games")
    shutil.copytree(data_path("gcg"), gcg / "gcg")
    (gcg / "gcg" / "unreadable.gcg").symlink_to(gcg / "nowhere")
    kwg = str(data_path("kwg", "TWL06.kwg"))
    # two records cannot be annotated (below): exit status 1, the report written all the same
    assert (
        main(["annotate", str(gcg / "gcg"), "--out", str(out), "--lexicon", kwg, "--no-progress"])
        == 1
    )
    return out


def test_annotate_every_english_game(report, capsys):
    lines = [json.loads(line) for line in (report / "annotations.jsonl").read_text().splitlines()]
    assert len(lines) == 45
    failed = {line["game"]: line["error"] for line in lines if "error" in line}
    assert set(failed) == {"macondo/gcgio/testdata/polish_endgame.gcg", "unreadable.gcg"}
    assert "cannot read" in failed["unreadable.gcg"]
    pages = sorted(p.name for p in report.glob("*.html"))
    assert "index.html" in pages and len(pages) == 44
    index = (report / "index.html").read_text()
    assert "43 of 45 records annotated" in index and "not annotated" in index
    mismatched = [
        t
        for line in lines
        if "annotation" in line
        for t in line["annotation"]["turns"]
        if t.get("score_matches") is False and t["kind"] == "play"
    ]
    assert not mismatched


def test_annotate_refuses_what_is_not_a_game(tmp_path, capsys, default_english):
    games = tmp_path / "games"
    games.mkdir()
    (games / "binary.gcg").write_bytes(bytes(range(256)) * 4)
    (games / "words.gcg").write_text("AA\nAAH\nAAHED\n")
    out = tmp_path / "out"
    assert main(["annotate", str(games), "--out", str(out), "--no-progress"]) == 1
    printed = capsys.readouterr().out
    assert "0 of 2 games annotated" in printed
    assert "binary.gcg: a binary file, not a GCG game record" in printed
    assert "words.gcg: words.gcg: no moves, so not a GCG game record" in printed
    lines = [json.loads(x) for x in (out / "annotations.jsonl").read_text().splitlines()]
    assert [line["game"] for line in lines] == ["binary.gcg", "words.gcg"]


def test_annotate_checks_its_output_folder_first(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    ran = []
    monkeypatch.setattr("anchor.client.games.AnalysisClient", lambda *a, **k: ran.append(a))
    assert main(["annotate", str(data_path("gcg")), "--out", str(blocker), "--no-progress"]) == 2
    assert f"--out {blocker} is a file; give a folder" in capsys.readouterr().err
    assert not ran  # refused before any game was sent for annotation
    assert main(["annotate", str(tmp_path / "missing.gcg"), "--out", str(tmp_path / "o")]) == 2
    assert "missing.gcg does not exist" in capsys.readouterr().err


def test_self_play_records_annotate_without_naming_the_ruleset(tmp_path, capsys):
    games = tmp_path / "games"
    assert main(["selfplay", "--ruleset", "russian", "--games", "1", "--out", str(games)]) == 0
    (record,) = games.glob("*.gcg")
    text = record.read_text(encoding="utf-8")
    assert "#ruleset russian" in text and "#lexicon russian" in text
    out = tmp_path / "out"
    assert main(["annotate", str(games), "--out", str(out), "--no-progress"]) == 0
    assert "1 of 1 games annotated" in capsys.readouterr().out
    (line,) = [json.loads(x) for x in (out / "annotations.jsonl").read_text().splitlines()]
    turns = [t for t in line["annotation"]["turns"] if t["kind"] == "play"]
    assert turns and all(t["score_matches"] for t in turns)
    assert all(t["rank"] >= 1 for t in turns if t.get("analysed"))


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp / 'profile'}",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def png_pixels(path: Path) -> bytes:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return zlib.decompress(idat)


@pytest.mark.browser
def test_report_renders_in_headless_chromium(report, tmp_path):
    """One page a game: the move list, one board that follows the selected move (the
    URL's #tN here, as a click on the list sets it), only that move's details shown."""
    if not chromium():
        pytest.skip("Chromium is not installed and `make test` could not install it (apt)")
    page = report / "macondo__gcgio__testdata__doug_v_emely.html"
    assert page.stat().st_size < 150_000  # 28 turns (it was ~750 KB: a board a turn)
    dom = render(page.as_uri() + "#t4", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count("<svg") == 1  # one board
    moves = html[html.index('<ol id="moves">') : html.index("</ol>")]
    assert moves.count("<li>") == 28 and "10B DONATES 82" in moves
    assert 'class="best on"' in moves or 'class="miss on"' in moves  # turn 5 is selected
    assert "Turn 5, the board before it: doug 10B DONATES 82" in html
    shown = [part for part in html.split('<section class="turn"')[1:] if "hidden" not in part[:60]]
    assert len(shown) == 1 and shown[0].startswith(' id="turn-4"'), shown[0][:80]
    board = html[html.index('<svg id="board"') : html.index("</svg>")]
    assert board.count('fill="#ffc928"') == 7  # DONATES: the play made, seven tiles
    assert "points given up" in html
    shot = tmp_path / "shot.png"
    done = render(
        page.as_uri() + "#t20", tmp_path, f"--screenshot={shot}", "--window-size=1000,1400"
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = png_pixels(shot)
    assert len(set(pixels)) > 50  # a drawn page, not a blank one (choosing a turn scrolls not)
    index = render((report / "index.html").as_uri(), tmp_path, "--dump-dom")
    assert index.stdout.count("<a href=") == 43
    assert os.path.getsize(shot) > 20_000


def annotate_doug_v_emely(tmp_path: Path, *extra: str) -> tuple[Path, dict]:
    """`anchor annotate` of doug_v_emely.gcg by equity (TWL06 and its leaves, the top 3)
    with `extra` options: the output folder and the game's JSON Lines entry."""
    games = tmp_path / "games"
    games.mkdir()
    shutil.copy(game_path("doug_v_emely.gcg"), games)
    out = tmp_path / "out"
    argv = ["annotate", str(games), "--out", str(out), "--top", "3", "--no-progress"]
    kwg, klv2 = str(data_path("kwg", "TWL06.kwg")), str(data_path("kwg", "TWL06.klv2"))
    assert main([*argv, "--lexicon", kwg, "--leaves", klv2, *extra]) == 0
    (line,) = [json.loads(x) for x in (out / "annotations.jsonl").read_text().splitlines()]
    return out, line


def test_report_with_leaves_shows_equity_leaves_and_every_played_move(tmp_path):
    """Quackle-style: by equity the table has leave and equity columns, each analysed turn
    shows the play made (after a gap, with its rank, when it is not in the top N), the
    running score and the unseen tiles; premium squares are labelled, not colour only."""
    if not chromium():
        pytest.skip("Chromium is not installed and `make test` could not install it (apt)")
    out, line = annotate_doug_v_emely(tmp_path)
    analysed = [t for t in line["annotation"]["turns"] if t.get("analysed")]
    outside = [t for t in analysed if t["played"] not in [b[0] for b in t["best"]]]
    assert len(analysed) == 26 and outside  # some plays made are not among the best 3
    dom = render((out / "doug_v_emely.html").as_uri(), tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count("← played") == 26  # the play made, in every table
    assert html.count("<th>leave</th>") == 26 and html.count(">equity</th>") == 24
    assert html.count(">value</th>") == 2  # turns 25 and 26: the bag is empty
    assert html.count("⋯") == len(outside)
    for t in outside:  # a play not in the lexicon has no rank: "–"
        assert f"{t['equity_rank'] or '–'}</td><td>{t['played']}" in html
    assert html.count("Score after this turn:") == 28  # every turn, the end rack's too
    players = line["annotation"]["players"]
    totals = {}
    for turn in line["annotation"]["turns"]:
        totals[turn["player"]] = turn["recorded_total"]
        if turn is analysed[-1]:
            break
    last = " – ".join(f"{players[i]['name']} {totals.get(i, 0)}" for i in range(len(players)))
    assert f"Score after this turn: {last}" in html
    assert html.count("Unseen (") == 24 and html.count("the opponent holds") == 2
    assert ">TW</text>" in html and ">DL</text>" in html
    assert html.count("Winning line (value") == 2 and "14L (K)aFS 21</p>" in html
    assert "rank 1 of 106 plays by equity" in html
    first = [t for t in analysed if t["player"] == 0][0]
    assert f"Unseen ({len(first['unseen'])})" in html
    # the lexicon named, the end rack the record gives, the chance of winning, and where
    # the unseen tiles are (the opponent's rack is the one the record gives for their turn)
    assert 'lexicon <b class="lexicon">twl06</b>' in html and "rack unknown" not in html
    assert "tiles left at the end (OPEG) +14" in html
    assert html.count("Chance of winning for") == 26
    split = [t for t in analysed if "in_bag" in t]
    assert len(split) >= 20 and html.count("in the bag (") == len(split)
    for t in split:
        assert sorted(t["in_bag"] + t["opponent_holds"]) == sorted(t["unseen"])
    assert 0 < analysed[0]["win"] < 1 and "win_after" in analysed[0]


def test_annotation_with_leaves_reports_equity_given_up(solver):
    from anchor.engine.leaves import Leaves

    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH)
    game = read_gcg(game_path("doug_v_emely.gcg"))
    annotation = annotate_game(game, solver, top=3, leaves=leaves)
    for turn, replayed in zip(annotation["turns"], replay(game, ENGLISH), strict=True):
        if not turn.get("analysed") or turn["kind"] != "play" or turn["rank_by"] == "endgame":
            continue
        moves = solver.generate_moves(replayed.board, turn["rack"], rank="equity", leaves=leaves)
        assert turn["best_equities"] == [round(e, 3) for e in moves.equities()[:3]]
        kept = [0 if ch == "?" else ENGLISH.letter_index[ch] for ch in turn["rack"]]
        for _r, _c, ch in turn["placed"]:
            kept.remove(0 if ch.islower() else ENGLISH.letter_index[ch])
        assert turn["equity"] == pytest.approx(turn["score"] + leaves.value(kept), abs=1e-3)
        assert turn["equity_given_up"] == pytest.approx(
            max(0.0, moves.equities()[0] - turn["equity"]), abs=1e-2
        )
    first = annotation["summary"][0]
    assert first["equity_given_up"] == pytest.approx(
        sum(t.get("equity_given_up", 0) for t in annotation["turns"] if t["player"] == 0), abs=0.05
    )


def test_empty_bag_turns_are_solved_not_ranked_by_leaves(solver):
    """doug_v_emely turn 26: emely holds ?FS, the bag is empty, doug holds EGOP. Going out
    with 14L (K)aFS for 21 (+14 for doug's tiles) is best; leave values once ranked it 38th
    and advised 8K (I)F, keeping S?."""
    from anchor.engine.leaves import Leaves

    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH)
    game = read_gcg(game_path("doug_v_emely.gcg"))
    turns = annotate_game(game, solver, top=5, leaves=leaves)["turns"]
    endgame = [t for t in turns if t.get("rank_by") == "endgame"]
    assert [t["index"] for t in endgame] == [25, 26]
    last = endgame[-1]
    assert last["rack"] == "?FS" and last["opponent_rack"] == "EGOP"
    assert last["best"][0][0] == "14L (K)aFS" and last["equity_rank"] == 1
    solved = last["endgame"]
    assert solved["exact"] and solved["line"] == ["14L (K)aFS"]
    assert solved["value"] == 21 + 2 * 7 == solved["made_value"] and solved["value_lost"] == 0
    # doug before it: his play's value is what the solver says the position is worth to him
    before = endgame[0]["endgame"]
    reply = solver.solve_endgame(Board.from_cgp(ENGLISH, turns[26]["board"]), "?FS", "EGOP")
    assert before["made_value"] == 42 - reply.value
    assert (
        before["value"] >= before["made_value"]
        and before["value_lost"] == before["value"] - before["made_value"]
    )


def test_forked_processes_give_the_answers_of_one_thread(magpie_twl06):
    """Embedded analyze_many on forked processes (annotation is half Python, which
    threads take turns at) returns what one thread returns, in request order; a bad record
    among them is still its own error result."""
    from anchor.client import protocol as p
    from anchor.client.client import AnalysisClient
    from anchor.worker.runner import LexiconRegistry

    from .service import TWL06

    names = ["doug_v_emely.gcg", "guy_vs_bot.gcg", "incomplete.gcg"]
    texts = [game_path(n).read_text() for n in names]
    requests = [p.AnnotateRequest(t, lexicon="twl06", top=3) for t in [*texts, "not a game"]]

    def answers(**kwargs) -> list:
        client = AnalysisClient(registry=LexiconRegistry({"twl06": str(TWL06)}), **kwargs)
        assert client.processes == (kwargs.get("processes", False) and kwargs["threads"] > 1)
        return [
            p.answer(r, p.AnnotateResult).annotation if r["ok"] else r["error"]["code"]
            for r in client.analyze_many(requests)
        ]

    one = answers(threads=1)
    assert one == answers(threads=2, processes=True) == answers(threads=3, processes=True)
    assert one[-1] == p.BAD_GAME and all(isinstance(a, dict) for a in one[:-1])
    assert not AnalysisClient(registry=LexiconRegistry(), threads=1, processes=True).processes


def test_a_forked_process_that_dies_is_a_clear_error(monkeypatch):
    """A child killed mid-job (here it exits at once) ends analyze_many with a
    ServiceError saying what happened, and the pool is gone: no hang, no traceback."""
    import os

    from anchor.client import protocol as p
    from anchor.client.client import AnalysisClient, ServiceError
    from anchor.worker.runner import LexiconRegistry

    from .service import TWL06

    client = AnalysisClient(
        registry=LexiconRegistry({"twl06": str(TWL06)}), threads=2, processes=True
    )
    real = client._run_local

    def dies_on_the_third(payload):
        if payload == b"die":
            os._exit(9)
        return real(payload)

    monkeypatch.setattr(client, "_run_local", dies_on_the_third)
    game = p.encode_request(
        p.AnnotateRequest(game_path("doug_v_emely.gcg").read_text(), lexicon="twl06")
    )
    with pytest.raises(ServiceError, match="a process running the jobs died"):
        client.analyze_many([game, game, b"die", game])
    assert [r["ok"] for r in client.analyze_many([game, game])] == [True, True]


def test_equity_rank_and_equity_given_up_agree(solver):
    """One precision and one comparison: a play with no equity given up ranks first (QUOTH,
    turn 24, was "rank 2" beside "0.0 given up": float32 against float64), and a play
    not in the lexicon (TILAX, turn 5) gets no rank at all."""
    from anchor.engine.leaves import Leaves

    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH)
    annotation = annotate_game(read_gcg(game_path("doug_v_emely.gcg")), solver, leaves=leaves)
    turns = [t for t in annotation["turns"] if t.get("analysed") and t["kind"] == "play"]
    for turn in turns:
        if not turn["legal"]:
            assert turn["equity_rank"] is None and turn["rank"] is None, turn
        else:
            assert (turn["equity_rank"] == 1) == (turn["equity_given_up"] == 0), turn
    assert annotation["turns"][24]["equity_rank"] == 1
    assert not annotation["turns"][5]["legal"] and annotation["turns"][5]["equity_rank"] is None


@pytest.mark.browser
def test_report_with_simulation_shows_its_error_win_rate_and_best(tmp_path):
    """With simulation, each alternative's mean spread comes with its standard error and
    its chance of winning, and the simulation's best is marked."""
    if not chromium():
        pytest.skip("Chromium is not installed and `make test` could not install it (apt)")
    sim = ["--sim-iterations", "12", "--sim-candidates", "3", "--sim-plies", "1"]
    out, line = annotate_doug_v_emely(tmp_path, *sim)
    page = out / "doug_v_emely.html"
    assert page.stat().st_size < 150_000
    simulated = [t for t in line["annotation"]["turns"] if "sim" in t]
    dom = render(page.as_uri(), tmp_path, "--dump-dom")
    html = dom.stdout
    assert html.count(">win %</th>") == len(
        [t for t in line["annotation"]["turns"] if t.get("analysed")]
    )
    assert html.count("★") == sum(
        1
        for t in simulated
        if t["sim"][0][0] in [b[0] for b in t["best"]] or t["sim"][0][0] == t["played"]
    )
    mean, stdev, runs = simulated[0]["sim"][0][1:4]
    assert f"{mean:.1f} ± {stdev / runs**0.5:.1f}" in html


def test_scoreless_turns_in_a_row_reach_the_endgame(solver, monkeypatch):
    """The scoreless turns in a row before each turn (passes, exchanges, a play scoring
    nothing, a phony taken back) are what the endgame starts from: after one pass, a second
    ends the game. The annotation solved every empty-bag turn as if none had come before."""
    from types import SimpleNamespace

    from anchor.engine import annotate

    def turn(kind: str, score: int = 0):
        return SimpleNamespace(event=SimpleNamespace(kind=kind, score=score))

    kinds = [("play", 10), ("pass", 0), ("exchange", 0), ("play", 0), ("play", 5),
             ("withdrawn", -5), ("pass", 0), ("play", 12), ("pass", 0)]  # fmt: skip
    runs = annotate.scoreless_runs([turn(k, s) for k, s in kinds])
    assert runs == [0, 0, 1, 2, 3, 0, 4, 5, 0]
    game = read_gcg(game_path("doug_v_emely.gcg"))
    assert annotate.scoreless_runs(list(replay(game, ENGLISH)))[25:27] == [0, 0]
    monkeypatch.setattr(annotate, "scoreless_runs", lambda events: [1] * len(events))
    turns = annotate_game(game, solver, top=5)["turns"]
    board = Board.from_cgp(ENGLISH, turns[26]["board"])
    after_a_pass = solver.solve_endgame(board, "?FS", "EGOP", scoreless_turns=1)
    assert turns[26]["endgame"]["value"] == after_a_pass.value


@pytest.mark.parametrize("name", ["russian", "erudit"])
def test_a_game_ended_by_scoreless_turns_is_annotated_to_its_end(name):
    """Self-played games of these rulesets often end on their scoreless turns (six in
    Russian Scrabble, four in Эрудит). The turn that ends one has no reply to solve: it is
    worth what the end rules give (in Russian each side loses its own tiles, in Эрудит
    nothing), and its endgame entry says so; the annotation had refused such a record."""
    from anchor.dictionaries.lexica import lexicon_path
    from anchor.engine import Lexicon
    from anchor.engine.gcg import parse_gcg
    from anchor.engine.selfplay import play_game

    rules = Ruleset.load(name)
    solver = Solver(Lexicon.open(lexicon_path(name), rules), rules)
    game = next(g for g in (play_game(solver, s, check=False) for s in range(30))
                if g.end == "scoreless")  # fmt: skip
    turns = annotate_game(parse_gcg(game.to_gcg(name), source="self-play"), solver)["turns"]
    last = [t for t in turns if t.get("endgame")][-1]
    assert last["kind"] in ("pass", "play") and (last["kind"] == "pass" or not last["score"])
    seat = last["player"]  # what self-play's own end of the game gave each side
    assert last["endgame"]["made_value"] == game.adjustments[seat] - game.adjustments[1 - seat]
    assert last["endgame"]["value"] >= last["endgame"]["made_value"]  # the best is no worse
