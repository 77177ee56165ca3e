"""Every CLI error is one line on stderr and a non-zero exit, never a traceback: the
table of mistakes a new user makes, each run through the real `anchor` command."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from anchor.client import cli, commands
from anchor.engine import Board, InputError, Ruleset, Solver

from .conftest import DATA, ROOT, data_path
from .service import free_port

pytestmark = pytest.mark.subprocess  # not in `make test-fast` (pyproject: markers)

EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15"
TWL06_KLV2 = DATA / "kwg" / "TWL06.klv2"


def anchor(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "anchor.client.cli", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def huge_ruleset(tmp_path) -> str:
    text = (ROOT / "engine" / "rulesets" / "english.toml").read_text(encoding="utf-8")
    path = tmp_path / "big.toml"
    path.write_text(text.replace("Q 1 10", "Q 1 1001").replace('"english"', '"big"', 1))
    return str(path)


CASES = [
    (("analyze", "--rack", ""), "the rack is empty"),
    (("analyze", "--cgp", EMPTY), "no rack: give --rack"),
    (("analyze", "--rack", "AB", "--redis-url", "redis://127.0.0.1:{port}/0"),
     "cannot reach Redis at redis://127.0.0.1:"),
    (("analyze", "--rack", "AB", "--redis-url", "redis://:hunter2@127.0.0.1:{port}/0"),
     "cannot reach Redis at redis://***@127.0.0.1:"),
    (("analyze", "--rack", "AB", "--redis-url", "http://x"),
     "bad Redis URL 'http://x': it must start with redis://, rediss:// or unix://"),
    (("worker", "--metrics-port", "99999"), "99999 is not a TCP port (0..65535)"),
    # (an unreachable Redis is waited for: test_fleet.py, a worker started before Redis)
    (("worker", "--redis-url", "redis://127.0.0.1:{port}/0", "--lane", "fast"),
     "anchor worker: error: bad --lane 'fast'"),
    (("analyze", "--ruleset", "{huge}", "--rack", "QI"),
     "1001 points; a tile may be worth 0..1000"),
    (("analyze", "--ruleset", "russian", "--lexicon", "english", "--rack", "АБ"),
     "holds english words"),
    (("analyze", "--ruleset", "klingon", "--rack", "AB"), "unknown ruleset"),
    (("analyze", "--lexicon", "/nowhere/x.kwg", "--rack", "AB"), "/nowhere/x.kwg does not exist"),
    (("analyze", "--rack", "AB", "--leaves", "nosuch.klv2"),
     "no leave values named 'nosuch' (looked for nosuch.klv2"),
    (("analyze", "--rack", "AB", "--rank", "score", "--leaves", "english"),
     "--leaves gives leave values for --rank equity"),
    (("analyze", "--rack", "AB", "--redis-url", "redis://127.0.0.1:{port}/0",
      "--leaves", "/some/where/english.klv2"), "give the name a worker serves"),
    (("score", "--board", "/nowhere/board.txt", "8H AB"), "cannot read board file"),
    (("analyze", "--top", "-1", "--rack", "AB"), "-1 is negative"),
    (("selfplay", "--games", "0"), "must be at least 1"),
    # what a newcomer's attack found (issue 50): each was an internal error, a traceback,
    # an error naming the wrong command, or an option silently ignored
    (("analyze", "--top", "9" * 23, "--rack", "AB"), "is too large (at most 2,147,483,647)"),
    (("selfplay", "--seed", str(2**64)), "--seed: 18446744073709551616 is too large"),
    (("annotate", "x.gcg", "--out", "o", "--top", "9" * 23), "--top: " + "9" * 23 + " is too"),
    (("endgame", "--cgp", "x", "--plies", "9" * 23), "--plies: " + "9" * 23 + " is too large"),
    (("endgame", "--cgp", "x", "--parts", "2000"), "--parts: 2000 is too many (at most 1024)"),
    (("analyze", "--rack", "AB", "--timeout", "nan"), "'nan' is not a positive number of seconds"),
    (("analyze", "--rack", "AB", "--timeout", "-5"), "'-5' is not a positive number of seconds"),
    (("worker", "--workers", "9" * 23), "anchor worker: error: argument --workers"),
    (("worker", "--workers", "300"), "300 is too many (at most 256)"),
    (("worker", "--workers", "2", "--metrics-port", "65535"), "would go past port 65535"),
    (("analyze", "--rack", "AB", "--js"), "anchor analyze: error: unrecognized arguments: --js"),
    (("lexicon", "path", "english", "--x"), "anchor lexicon path: error: unrecognized"),
    (("analyze", "--rack", "AB", "--sim-iterations", "10"), "--sim-iterations shape a simulation"),
    (("analyze", "--cgp", EMPTY, "--board", "/etc/passwd", "--rack", "AB"), "not both"),
    (("selfplay", "--out", ""), "argument --out: empty"),
    (("train-leaves", "--out", ""), "argument --out: empty"),
    (("docs", ""), "no document named ''"),
    (("lexicon", "list", "nosuch"), "no recipe or installed lexicon named nosuch"),
    (("score", "--cgp", EMPTY, "garbage"), "'garbage': bad play"),
]  # fmt: skip


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_each_mistake_is_one_clear_line(argv, message, tmp_path, default_english):
    port = free_port()  # nothing listens on it
    argv = [a.format(port=port, huge=huge_ruleset(tmp_path)) for a in argv]
    done = anchor(*argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if not line.startswith("{")]  # JSON logs
    assert len(said) == 1, done.stderr
    assert message in said[0], done.stderr
    assert "hunter2" not in done.stderr


def test_metrics_port_in_use_is_one_line(server, default_english):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = anchor(
            "worker", "--redis-url", server.url, "--lexicon", "english",
            "--metrics-port", str(port), "--burst",
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"cannot serve metrics on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bug_is_one_line_unless_debugging(monkeypatch, capsys):
    def broken(_args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(commands, "cmd_show", broken)
    monkeypatch.delenv("ANCHOR_DEBUG", raising=False)
    assert cli.main(["show"]) == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error ZeroDivisionError" in err
    monkeypatch.setenv("ANCHOR_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["show"])


def test_leaves_by_path_imply_equity(capsys):
    kwg = str(data_path("kwg", "TWL06.kwg"))
    argv = ["analyze", "--lexicon", kwg, "--rack", "AEINRST", "--top", "3"]
    assert cli.main([*argv, "--leaves", str(TWL06_KLV2)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["play", "score", "equity"]  # the columns' header
    assert len(lines[2].split()) == 5  # rank, coordinate, word, score and equity
    assert cli.main(argv) == 0
    assert len(capsys.readouterr().out.splitlines()[1].split()) == 4


def test_solver_takes_a_leaves_path_or_says_what_it_wants(magpie_twl06):
    rules = Ruleset.load("english")
    solver = Solver(magpie_twl06, rules)
    board = solver_board = Board.empty(rules)
    by_path = solver.generate_moves(board, "AEINRS?", limit=5, rank="equity", leaves=TWL06_KLV2)
    same = solver.generate_moves(
        solver_board, "AEINRS?", limit=5, rank="equity", leaves=solver.leaves(TWL06_KLV2)
    )
    assert [m.notation for m in by_path] == [m.notation for m in same]
    with pytest.raises(InputError, match="leaves must be Leaves"):
        solver.generate_moves(board, "AB", rank="equity", leaves=5)
    with pytest.raises(InputError, match="only with rank='equity'"):
        solver.generate_moves(board, "AB", leaves=TWL06_KLV2)
