from __future__ import annotations

import json
import subprocess
import sys

import pytest

from anchor.client.cli import main
from anchor.engine import LexiconInfo

from .conftest import DEFAULT_KWG


def test_demo_shows_a_board_and_a_scored_play(capsys, default_english):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "A B C D E F G H I J K L M N O" in out
    assert "  8 = . . W I N D Y" in out
    assert "DONATES (10B)" in out and "JAVELINA (E3)" in out
    assert "all tiles used: +50" in out and "total 82" in out and "valid: yes" in out


def test_console_script_runs_in_a_fresh_process(default_english):
    exe = [sys.executable, "-m", "anchor.client.cli", "demo"]
    done = subprocess.run(exe, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "total 82" in done.stdout


def test_score_json(capsys, default_english):
    cgp = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0"
    assert main(["score", "--cgp", cgp, "8H RETAINS", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "play": "8H RETAINS",
        "ok": True,
        "errors": [],
        # R on the centre (x2 word), I on 8L (x2 letter): (1+1+1+1+2+1+1) x2 = 16, + 50
        "score": 66,
        "bingo": 50,
        "words": [{"word": "RETAINS", "coordinate": "8H", "score": 16, "main": True}],
    }


def test_score_reports_invalid_play(capsys, default_english):
    cgp = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0"
    assert main(["score", "--cgp", cgp, "8A RETAINS"]) == 1
    out = capsys.readouterr().out
    assert "must cover the centre square 8H" in out


def test_bad_input_is_one_clear_line(capsys):
    assert main(["score", "--cgp", "15/15", "8H AB", "--no-lexicon"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("anchor score: error: CGP board has 2 rows") and "Traceback" not in err
    assert main(["show", "--ruleset", "klingon"]) == 2
    assert "unknown ruleset" in capsys.readouterr().err
    assert main(["analyze"]) == 2  # errors name their command, as argparse's own do
    assert capsys.readouterr().err.startswith("anchor analyze: error: no position")


def test_build_lexicon(tmp_path, capsys):
    words = tmp_path / "words.txt"
    words.write_text("cat\nCAT\ndog\nnaïve\n\nzebra\n", encoding="utf-8")
    out = tmp_path / "mine.kwg"
    assert main(["build-lexicon", "--words", str(words), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "3 words kept, 1 rejected, 1 duplicates" in captured.out
    assert f"{words}:4: rejected 'naïve'" in captured.err
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9\n".encode("latin-1"))
    assert main(["build-lexicon", "--words", str(latin), "--out", str(out)]) == 2
    assert "not UTF-8" in capsys.readouterr().err
    # Russian words under English rules: nothing fits, nothing is written, exit 2
    russian = tmp_path / "ru.txt"
    russian.write_text("дом\nкот\n", encoding="utf-8")
    empty = tmp_path / "empty.kwg"
    assert main(["build-lexicon", "--words", str(russian), "--out", str(empty)]) == 2
    assert "no word fits the english alphabet (2 rejected)" in capsys.readouterr().err
    assert not empty.exists()
    assert main(["build-lexicon", "--ruleset", "russian", "--words", str(russian),
                 "--out", str(empty)]) == 0  # fmt: skip
    assert LexiconInfo.read(empty).ruleset == "russian" and LexiconInfo.read(empty).words == 2


def test_default_lexicon_file(default_english):
    assert len(default_english) == 172_820
    assert default_english.path == str(DEFAULT_KWG)
    assert default_english.contains("RETAINS") and not default_english.contains("QZX")


def test_demo_lists_the_best_plays(capsys, default_english):
    main(["demo"])
    out = capsys.readouterr().out
    assert "All 645 legal plays for ADENOST" in out
    assert "  1. 10B DONATES" in out


def test_analyze_text_and_json(capsys, magpie_twl06):
    from .conftest import data_path

    cgp = data_path("bench", "positions.cgp").read_text().splitlines()[3]
    kwg = str(data_path("kwg", "TWL06.kwg"))
    assert main(["analyze", "--cgp", cgp, "--lexicon", kwg, "--top", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Rack CGILLRS: the top 3 plays")
    assert out[1].split() == ["1.", "H10", "(G)RILLS", "24"]
    assert main(["analyze", "--cgp", cgp, "--lexicon", kwg, "--json", "--mode", "across"]) == 0
    plays = json.loads(capsys.readouterr().out)
    assert plays and all(p["direction"] == "across" for p in plays)
    assert set(plays[0]) == {"notation", "score", "row", "col", "direction", "word", "placed"}
    assert [p["score"] for p in plays] == sorted((p["score"] for p in plays), reverse=True)
    assert main(["analyze", "--cgp", cgp.split()[0], "--lexicon", kwg]) == 2
    assert "no rack" in capsys.readouterr().err


@pytest.mark.parametrize("ruleset", ["russian", "erudit"])
def test_analyze_cyrillic(capsys, ruleset):
    cgp = "15/15/15/15/15/15/15/7ТАСОВКА1/15/15/15/15/15/15/15 ЕЖИКЛМН/ 0/0 0"
    assert (
        main(["analyze", "--ruleset", ruleset, "--lexicon", ruleset, "--cgp", cgp, "--top", "5"])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Rack ЕЖИКЛМН: the top 5 plays")
    assert len(out) == 6 and all(any("А" <= ch <= "я" for ch in line) for line in out[1:])


def test_progress_draws_on_a_terminal_and_stays_out_of_logs():
    import io

    from anchor.client.client import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    class Games(Progress):
        unit = "games"

        def count(self, result: dict) -> int:
            return len(result["games"])

    log = io.StringIO()
    bar = Games(3, stream=log, what="jobs")
    bar.step(3, [{"games": [1, 2]}] * 3)
    bar.close()
    assert log.getvalue() == ""  # not a terminal: nothing, not even a carriage return
    tty = Terminal()
    bar = Games(3, stream=tty, what="jobs")
    for _ in range(3):
        bar.step(1, [{"games": [1, 2]}])
    bar.close()
    drawn = tty.getvalue()
    assert "3/3" in drawn and "games/s" in drawn and "100%" in drawn
    assert bar.counted == 6


def test_dependencies_point_one_way():
    """engine imports no service library; the client never imports the worker (DESIGN.md)."""
    probe = (
        "import sys, anchor.engine; bad = {'redis', 'rq', 'msgpack'} & set(sys.modules); "
        "import anchor.client.cli, anchor.client.client, anchor.client.games; "
        "print(sorted(bad), [m for m in sys.modules if m.startswith('anchor.worker')])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "[] []", done.stderr
