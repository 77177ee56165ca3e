"""Solver: the public entry point tying a lexicon and a ruleset together."""

from __future__ import annotations

from collections.abc import Iterable

from .board import Board
from .errors import InputError
from .lexicon import Lexicon
from .notation import Play, parse_play
from .rules import Ruleset
from .scoring import Score, Validation, score_play, validate_play


class Solver:
    """Scores, validates and (with the move generator) finds plays for one lexicon."""

    __slots__ = ("lexicon", "rules")

    def __init__(self, lexicon: Lexicon, rules: Ruleset | None = None):
        rules = rules or lexicon.rules
        if lexicon.rules.alphabet != rules.alphabet:
            raise InputError(
                f"lexicon was opened for the {lexicon.rules.name} alphabet, "
                f"not the {rules.name} one"
            )
        self.lexicon = lexicon
        self.rules = rules

    def _check_board(self, board: Board) -> None:
        if not isinstance(board, Board):
            raise InputError(f"expected a Board, not {type(board).__name__}")
        if (board.rules.rows, board.rules.cols, board.rules.alphabet) != (
            self.rules.rows,
            self.rules.cols,
            self.rules.alphabet,
        ):
            raise InputError(
                f"board is for {board.rules.name} ({board.rules.rows}x{board.rules.cols}); "
                f"this solver plays {self.rules.name}"
            )

    def parse_play(self, board: Board, text: str) -> Play:
        self._check_board(board)
        return parse_play(board, text)

    def score_play(self, board: Board, play: Play | str) -> Score:
        """Score a play given as notation ('8D WORD') or a Play. Raises InputError if malformed."""
        self._check_board(board)
        return score_play(board, play)

    def validate_play(
        self,
        board: Board,
        play: Play | str | Iterable[tuple[int, int, str]],
        rack: str | None = None,
    ) -> Validation:
        """Every rule a play breaks, as messages; `ok` when it breaks none."""
        self._check_board(board)
        return validate_play(board, play, self.lexicon, rack)
