"""Anchor engine: rulesets, boards, KWG lexica, scoring, validation and move generation."""

from .board import ACROSS, DOWN, Board
from .errors import (
    AnchorError,
    InputError,
    LexiconError,
    PositionError,
    RackError,
    RulesetError,
    WorkLimitError,
)
from .leaves import Leaves
from .lexicon import BuildReport, Lexicon
from .lexicon_info import LexiconInfo
from .moves import Move, MoveList
from .notation import Play, parse_play, parse_rack
from .position import Position, parse_cgp
from .rules import EndRules, Ruleset
from .scoring import Score, TileScore, Validation, WordScore, score_play, validate_play
from .solver import Solver

# loaded when first asked for: a command that solves no endgame does not pay for the module
_LAZY = {"Endgame": "Endgame", "EndgameTable": "Table"}


def __getattr__(name: str):
    if name in _LAZY or name == "endgame":  # the module too, as when it loaded with the package
        import importlib

        endgame = importlib.import_module(f"{__name__}.endgame")  # sets the attribute
        return endgame if name == "endgame" else getattr(endgame, _LAZY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "ACROSS",
    "DOWN",
    "AnchorError",
    "Board",
    "BuildReport",
    "EndRules",
    "Endgame",
    "EndgameTable",
    "InputError",
    "Leaves",
    "Lexicon",
    "LexiconInfo",
    "LexiconError",
    "Move",
    "MoveList",
    "Play",
    "Position",
    "PositionError",
    "RackError",
    "Ruleset",
    "RulesetError",
    "Score",
    "Solver",
    "TileScore",
    "Validation",
    "WordScore",
    "WorkLimitError",
    "parse_cgp",
    "parse_play",
    "parse_rack",
    "score_play",
    "validate_play",
]
