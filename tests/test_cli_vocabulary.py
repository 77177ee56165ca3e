"""One vocabulary across the command lines (issue 50): an option name means one thing in
every subcommand, every option says what it does and its default, every subcommand has a
description and examples, and the examples run."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anchor.client.cli import build_parser
from anchor.client.protocol.settings import VersionAction
from anchor.worker.cli import build_parser as worker_parser

from .conftest import DEFAULT_KWG, ROOT, data_path

# Options whose subject is each command's own, so their help names it: the concept is one.
OWN_SUBJECT = {
    "--out": "each command writes its own kind of output (a folder of GCG files, a report, "
    "a .klv2 or a .kwg file)",
    "--dir": "each lexicon action's folder (install into, list, verify, look in)",
    "--ruleset": "how the default is found differs (annotate reads each record's; show and "
    "build-lexicon have no lexicon to ask)",
}


def commands(parser: argparse.ArgumentParser, prefix: str = "anchor"):
    """(name, parser) of every subcommand, nested ones too (lexicon install, ...)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name == "worker":  # handed to the worker's own parser, checked below
                    continue
                yield f"{prefix} {name}", sub
                yield from commands(sub, f"{prefix} {name}")


def leaf_commands():
    every = list(commands(build_parser()))
    parents = {name.rsplit(" ", 1)[0] for name, _ in every}
    return [(n, p) for n, p in every if n not in parents] + [("anchor worker", worker_parser())]


def options(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if action.option_strings and not isinstance(
            action, argparse._HelpAction | argparse._VersionAction | VersionAction
        ):
            yield action


def without_parentheses(text: str) -> str:
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\s*\([^()]*\)", "", text)
    return " ".join(text.split())


@pytest.mark.parametrize(
    "name,parser", leaf_commands(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_option_says_what_it_does_and_its_default(name, parser):
    formatter = parser._get_formatter()
    for action in options(parser):
        assert action.help and action.help.strip(), f"{name} {action.option_strings[0]}: no help"
        shown = formatter._expand_help(action)
        if action.nargs == 0:  # a flag says what it does: `--no-cut (default: True)` misleads
            assert not re.search(r"default: (True|False)", shown), f"{name}: {shown}"
        elif action.default is not None and action.default is not False:  # 0 is a default
            assert "default:" in shown, f"{name} {action.option_strings[0]}: default not shown"


@pytest.mark.parametrize(
    "name,parser", leaf_commands(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_command_has_a_description_and_an_example(name, parser):
    assert parser.description and len(parser.description) > 40, name
    assert parser.epilog and "example:" in parser.epilog, name
    examples = [ln.strip() for ln in parser.epilog.splitlines() if ln.startswith("  ")]
    assert examples and all(e.startswith(("anchor", name.split()[0])) for e in examples), name


def test_a_name_means_one_thing_in_every_command():
    """Where two subcommands take an option of one name, its help (less what is in
    parentheses: defaults, the command's own detail) is the same text."""
    seen: dict[str, tuple[str, str]] = {}
    for name, parser in leaf_commands()[:-1]:
        for action in options(parser):
            for flag in action.option_strings:
                if flag in OWN_SUBJECT:
                    continue
                text = without_parentheses(action.help)
                first = seen.setdefault(flag, (name, text))
                assert first[1] == text, f"{flag}: {first[0]} says {first[1]!r}, {name} {text!r}"
    assert len(seen) > 40  # the walk found the options


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


def refused(*argv: str, parser=build_parser) -> None:
    with pytest.raises(SystemExit) as stop:
        parser().parse_args(list(argv))
    assert stop.value.code == 2


def test_simulation_options_have_the_sim_names_everywhere():
    """--plies was the simulation's depth in analyze and the search's in endgame;
    --candidates 15 in analyze, --sim-candidates elsewhere; --iterations simulation in
    analyze, training in train-leaves."""
    args = parse("analyze", "--sim", "--sim-plies", "3", "--sim-candidates", "7",
                 "--sim-iterations", "50", "--iterations-per-job", "25")  # fmt: skip
    assert (args.sim_plies, args.sim_candidates, args.sim_iterations) == (3, 7, 50)
    assert args.iterations_per_job == 25
    for old in ("--plies", "--candidates", "--iterations", "--per-job"):
        refused("analyze", "--sim", old, "3")
    for command in ("selfplay", "annotate"):
        help_text = build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert "--sim-plies" in help_text and "--sim-candidates" in help_text
    assert parse("endgame", "--cgp", "x", "--plies", "4").plies == 4
    assert parse("train-leaves", "--out", "x.klv2", "--iterations", "3").iterations == 3


def test_games_per_job_is_one_name():
    assert parse("selfplay", "--games-per-job", "4").games_per_job == 4
    assert parse("train-leaves", "--out", "x", "--games-per-job", "4").games_per_job == 4
    refused("selfplay", "--per-job", "4")
    refused("train-leaves", "--out", "x", "--per-job", "4")


def test_progress_is_one_switch_with_one_default(monkeypatch):
    """annotate had --quiet (a bar by default), selfplay --progress (none by default)."""
    from anchor.client.arguments import progress_wanted

    refused("annotate", "x.gcg", "--out", "o", "--quiet")
    for argv in (("selfplay",), ("annotate", "x.gcg", "--out", "o")):
        assert parse(*argv).progress is None
        assert parse(*argv, "--progress").progress is True
        assert parse(*argv, "--no-progress").progress is False
    args = parse("selfplay")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert progress_wanted(args)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not progress_wanted(args)


def test_the_worker_takes_lane_like_every_command():
    args = worker_parser().parse_args(["--lane", "interactive", "--lane", "batch"])
    assert args.lane == ["interactive", "batch"]
    refused("--lanes", "batch", parser=worker_parser)
    from anchor.worker.main import lanes_from

    assert lanes_from(["batch"]) == ("batch",)
    assert lanes_from(["batch,interactive"]) == ("batch", "interactive")
    with pytest.raises(ValueError, match="--lane"):
        lanes_from(["batch", "batch"])


def test_train_leaves_defaults_to_english_like_every_command():
    from anchor.client.cli import resolve_ruleset

    args = parse("train-leaves", "--out", "x.klv2")
    resolve_ruleset(args)
    assert args.ruleset == "english"


def test_help_texts_that_were_wrong():
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices
    show = {a.dest: a.help for a in sub["show"]._actions}
    assert "lexicon" not in show["ruleset"]
    install = sub["lexicon"]._subparsers._group_actions[0].choices["install"]
    assert "the default set" not in install.format_help()
    assert "english, russian, erudit" in " ".join(install.format_help().split())
    assert "./dictionaries/build" in sub["lexicon"].format_help()
    top = " ".join(parser.format_help().split())
    assert "ranked by score, equity or simulation" in top
    lexicon = next(a for a in worker_parser()._actions if a.dest == "lexicon")
    assert f"--lexicon {lexicon.metavar}" in (ROOT / "README.md").read_text()


def test_analyze_without_a_position_says_so(capsys):
    from anchor.client.cli import main

    assert main(["analyze"]) == 2
    said = capsys.readouterr().err
    assert said.startswith("anchor analyze: error: no position: give --cgp")


def examples() -> list[tuple[str, list[str]]]:
    found = []
    for name, parser in leaf_commands():
        for line in parser.epilog.splitlines():
            if line.startswith("  "):
                found.append((name, shlex.split(line.strip())))
    return found


# Examples a test does not run, and why: each is run elsewhere in the suite.
NOT_RUN = {
    "lexicon install": "downloads and builds word lists (tests/test_lexica.py installs them)",
    "anchor worker": "serves until stopped (tests/test_service.py and test_fleet.py run it)",
    "anchor-worker": "serves until stopped (tests/test_service.py and test_fleet.py run it)",
}


@pytest.mark.subprocess
def test_the_examples_run(tmp_path):
    """Every example in `--help` runs as written, in a folder holding what the examples
    name: the words of words.txt (TWL06), lexica by name, and english.klv2 and mine.kwg as
    the train-leaves and build-lexicon examples write them (run first)."""
    lexica = tmp_path / "lexica"
    lexica.mkdir()
    for path in DEFAULT_KWG.parent.glob("english.kwg*"):
        (lexica / path.name).symlink_to(path)
    words = data_path("wordlists", "twl06.txt").read_text().split()
    (tmp_path / "words.txt").write_text("\n".join(words[::50]) + "\n")
    env = {
        "ANCHOR_LEXICON_DIR": str(lexica),
        "HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
    }
    runs = examples()
    first = ("anchor train-leaves", "anchor build-lexicon")  # they write english.klv2, mine.kwg
    runs.sort(key=lambda run: run[0] not in first)
    ran = 0
    for _name, argv in runs:
        if any(key in " ".join(argv[:3]) for key in NOT_RUN):
            continue
        done = subprocess.run(
            [sys.executable, "-m", "anchor.client.cli", *argv[1:]],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, (argv, done.stdout[-800:], done.stderr[-800:])
        ran += 1
    assert ran >= 16
    assert (tmp_path / "report" / "index.html").is_file()
    assert list((tmp_path / "games").glob("*.gcg"))
    shutil.rmtree(tmp_path / "report")


def test_every_document_the_help_cites_is_one_anchor_docs_prints(capsys):
    """The help texts cite PROTOCOL.md and others; `anchor docs` prints each of them from
    the installed copy (tests/test_install.py checks a wheel's)."""
    from anchor.client.cli import main
    from anchor.client.docs import DOCS

    texts = [parser.format_help() for _name, parser in leaf_commands()]
    texts.append(build_parser().format_help())
    cited = {name for text in texts for name in re.findall(r"\b[A-Z][A-Z-]+\.md\b", text)}
    files = {Path(relative).name: key for key, (relative, _about) in DOCS.items()}
    assert cited and cited <= set(files), cited - set(files)
    for name in cited:
        assert main(["docs", files[name]]) == 0
        assert capsys.readouterr().out.startswith("# ")
    assert main(["docs", "nothing"]) == 2
    assert "no document named 'nothing'" in capsys.readouterr().err
