"""CLI rough edges a new user hits (issue 29): each ends with its exit code and one line
naming the fix, no traceback, no work lost and nothing left behind."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest

from anchor.engine import Lexicon, Ruleset

from .conftest import ROOT, data_path

pytestmark = pytest.mark.subprocess  # not in `make test-fast` (pyproject: markers)


def anchor(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "anchor.client.cli", *argv],
        capture_output=True, text=True, cwd=ROOT, timeout=timeout,
    )  # fmt: skip


def one_line(done: subprocess.CompletedProcess, code: int, message: str) -> None:
    assert done.returncode == code, (done.stdout[-500:], done.stderr[-500:])
    assert "Traceback" not in done.stderr
    said = [ln for ln in done.stderr.splitlines() if not ln.startswith("{")]
    assert len(said) == 1 and message in said[0], done.stderr


def test_version():
    from anchor.client.arguments import package_version
    from anchor.client.version import VERSION

    done = anchor("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"anchor {package_version()}"
    assert package_version()[0].isdigit()
    # the installed metadata (package_version) takes it from where --version reads it
    assert VERSION == package_version() == importlib.metadata.version("anchor-scrabble")
    worker = anchor("worker", "--version")  # anchor-worker's own parser: it was refused
    assert worker.returncode == 0 and worker.stdout.strip() == f"anchor {package_version()}"


@pytest.mark.parametrize(
    "argv, message",
    [
        (("worker", "--log-level", "BOGUS"), "'BOGUS' is not a log level"),
        (("worker", "--queue", ""), "'' is not a queue name"),
        (("analyze", "--rack", "AB", "--queue", "a b"), "'a b' is not a queue name"),
    ],
)
def test_bad_worker_and_queue_arguments(argv, message):
    one_line(anchor(*argv), 2, message)


def test_a_closed_pipe_ends_quietly():
    """`anchor analyze ... | head -2`: no "[Errno 32] Broken pipe", the status of a Unix
    tool stopped by SIGPIPE."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "anchor.client.cli", "analyze", "--rack", "AEINS??"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    proc.stdout.readline()
    proc.stdout.close()  # the reader is gone; some 79,000 lines are still to come
    assert proc.wait(120) == 141
    assert proc.stderr.read() == b""


def test_a_fifo_given_to_annotate_is_refused_at_once(tmp_path):
    fifo = tmp_path / "game.gcg"
    os.mkfifo(fifo)
    done = anchor("annotate", str(fifo), "--out", str(tmp_path / "report"), timeout=30)
    one_line(done, 2, "is not a file or a folder of .gcg files")


def test_every_out_is_checked_before_any_work(tmp_path):
    missing = tmp_path / "no" / "such" / "x.klv2"
    done = anchor("train-leaves", "--out", str(missing), "--games", "1")
    one_line(done, 2, "no folder")
    assert "iteration" not in done.stdout and not done.stdout.strip()  # no training ran
    folder = tmp_path / "dir"
    folder.mkdir()
    words = tmp_path / "words.txt"
    words.write_text("CAT\nDOG\n")
    done = anchor("build-lexicon", "--words", str(words), "--out", str(folder))
    one_line(done, 2, "is a folder; give the lexicon (.kwg) file to write")
    assert list(folder.iterdir()) == []  # no .tmp left behind
    a_file = tmp_path / "file"
    a_file.write_text("x")
    one_line(anchor("selfplay", "--games", "1", "--out", str(a_file)), 2, "is a file")


def test_a_failed_save_leaves_no_temporary_file(tmp_path):
    rules = Ruleset.load("english")
    lexicon = Lexicon.build(["CAT", "DOG"], rules)
    target = tmp_path / "in-the-way.kwg"
    target.mkdir()  # a folder where the file should go
    with pytest.raises(OSError):
        lexicon.save(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in-the-way.kwg"]


ENGLISH_KWG = ROOT / "dictionaries" / "build" / "english.kwg"


@pytest.fixture
def lexicon_dir(tmp_path):
    """A folder holding the default English lexicon and its sidecar."""
    import shutil

    folder = tmp_path / "lexica"
    folder.mkdir()
    for name in ("english.kwg", "english.kwg.json"):
        shutil.copy(ENGLISH_KWG.parent / name, folder / name)
    return folder


def test_lexicon_dir_is_the_folder_looked_in(lexicon_dir, tmp_path):
    """`--dir` anywhere on the line; `path` and `verify` look only there (verify of a
    corrupt folder checked another one and said ok; path ignored --dir)."""
    done = anchor("lexicon", "path", "english", "--dir", str(lexicon_dir))
    assert done.returncode == 0 and done.stdout.strip() == str(
        (lexicon_dir / "english.kwg").resolve()
    )
    assert anchor("lexicon", "verify", "--dir", str(lexicon_dir)).returncode == 0
    with open(lexicon_dir / "english.kwg", "ab") as fh:
        fh.write(b"\0\0\0\0")
    done = anchor("lexicon", "verify", "--dir", str(lexicon_dir))
    assert done.returncode == 1 and str(lexicon_dir) in done.stdout and "sha256" in done.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line(anchor("lexicon", "path", "english", "--dir", str(empty)), 2, f"in {empty}")
    one_line(anchor("lexicon", "verify", "--dir", str(empty)), 2, "no lexicon is installed in")


def test_lexicon_install_takes_dir_before_the_names(lexicon_dir):
    done = anchor("lexicon", "install", "--dir", str(lexicon_dir), "english")
    assert done.returncode == 0, done.stderr  # intact: nothing to do, and not "unrecognized"


def test_lexicon_install_repairs_an_installed_lexicon_without_building_it(magpie_twl06, tmp_path):
    """The command itself (its tests elsewhere call lexica.install): over twl06 installed
    with its bingo-word file emptied (a crash while it was written) and its sidecar gone,
    install writes those two again, keeps the KWG (the recipe's bytes) and fetches nothing;
    verify then says ok."""
    folder = tmp_path / "lexica"
    folder.mkdir()
    kwg = folder / "twl06.kwg"
    magpie_twl06.save(kwg)
    pinned = kwg.read_bytes()
    (folder / "twl06.kwg.anagrams").write_bytes(b"")
    (folder / "twl06.kwg.json").unlink()
    cache = tmp_path / "cache"
    command = ["lexicon", "install", "twl06", "--dir", str(folder)]
    done = subprocess.run(
        [sys.executable, "-m", "anchor.client.cli", *command],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, "ANCHOR_CACHE_DIR": str(cache)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [  # progress, on stderr
        f"twl06: wrote its sidecar {kwg}.json (the KWG is the recipe's)",
        f"twl06: already installed at {kwg}",
        f"twl06: rewrote its bingo words to {kwg}.anagrams",
    ]
    assert kwg.read_bytes() == pinned and not cache.exists()  # nothing fetched or built
    done = anchor("lexicon", "verify", str(kwg))
    assert done.returncode == 0 and done.stdout.startswith(f"{kwg}: ok"), done.stdout


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_lexicon_path_that_is_not_a_file_says_what_it_is(tmp_path, kind):
    target = tmp_path / "x.kwg"
    if kind == "folder":
        target.mkdir()
    else:
        os.mkfifo(target)
    said = "is a folder" if kind == "folder" else "is not a regular file"
    one_line(anchor("analyze", "--rack", "AB", "--lexicon", str(target)), 2, said)


def test_a_worker_refusing_a_lexicon_names_the_users_file(tmp_path):
    bad = tmp_path / "bad.kwg"
    bad.write_bytes(b"garbage!")
    done = anchor("worker", "--lexicon", f"bad={bad}", "--redis-url", "redis://127.0.0.1:1/0")
    one_line(done, 2, f"{bad} is not a usable KWG file")
    assert "anchor-lexica" not in done.stderr  # not the snapshot it maps


def test_analyze_says_what_it_analysed_and_where_the_time_went():
    """An empty board is said, not silently assumed; generation time apart from the
    lexicon's opening; the equity columns have a header."""
    done = anchor("analyze", "--rack", "AEINRST", "--top", "2")
    head = done.stdout.splitlines()[0]
    assert "on an empty board" in head and "generated in" in head and "opening the lexicon" in head
    cgp = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15 AEINRST/ 0/0 0"
    assert "empty board" not in anchor("analyze", "--cgp", cgp, "--top", "1").stdout
    kwg = ROOT.parent / "shared" / "data" / "kwg"
    done = anchor(
        "analyze", "--rack", "AEINRST", "--top", "2", "--lexicon", str(kwg / "TWL06.kwg"),
        "--leaves", str(kwg / "TWL06.klv2"),
    )  # fmt: skip
    assert done.stdout.splitlines()[1].split() == ["play", "score", "equity"]


def test_train_leaves_help_lists_each_ruleset_once():
    done = anchor("train-leaves", "--help")
    text = " ".join(done.stdout.split())
    assert "english (default), russian, erudit, super-english or a .toml file" in text


def test_annotate_says_how_to_name_a_records_encoding(tmp_path):
    """A cp1251 record without #character-encoding failed with "'Ë' is not a letter of the
    russian alphabet" and no word of the encoding (issue 50)."""
    record = tmp_path / "game.gcg"
    record.write_bytes("#player1 a A\n#player2 b B\n>a: АБВГДЕЖ 8H ДОМ +10 10\n".encode("cp1251"))
    done = anchor("annotate", str(record), "--ruleset", "russian", "--no-progress",
                  "--out", str(tmp_path / "report"))  # fmt: skip
    assert "add '#character-encoding cp1251' as its first line" in done.stdout + done.stderr


def test_a_bare_kwg_gets_a_hint_and_lexicon_index_writes_its_bingo_words(tmp_path):
    """A KWG built elsewhere has no NAME.kwg.anagrams, so every start built the bingo-word
    table (0.15 s of `anchor analyze`) without a word (issue 49): now a one-line warning
    names `anchor lexicon index`, which writes the file; the plays are the same after."""
    kwg = tmp_path / "mine.kwg"
    kwg.write_bytes(data_path("kwg", "TWL06.kwg").read_bytes())
    argv = ("analyze", "--lexicon", str(kwg), "--rack", "AEINRST", "--top", "3", "--json")
    before = anchor(*argv)
    assert before.returncode == 0, before.stderr
    assert before.stderr.strip() == (
        f"anchor analyze: warning: {kwg} has no bingo-word file beside it, so each process "
        "builds one as it starts (a tenth of a second or more, and its own memory): "
        f"`anchor lexicon index {kwg}` writes it"
    )
    index = anchor("lexicon", "index", str(kwg))
    assert index.returncode == 0 and index.stdout.strip() == f"{kwg}: wrote {kwg}.anagrams"
    after = anchor(*argv)
    assert after.returncode == 0 and after.stderr == ""
    assert after.stdout == before.stdout
    assert Lexicon.open(kwg, Ruleset.load("english")).anagrams is not None
    nothing = anchor("lexicon", "index")
    assert nothing.returncode == 2 and "name the KWG files to index" in nothing.stderr
