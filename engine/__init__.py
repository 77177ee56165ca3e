"""Anchor engine: rulesets, boards, KWG lexica, scoring, validation and move generation."""

from .board import ACROSS, DOWN, Board
from .endgame import Endgame
from .endgame import Table as EndgameTable
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
