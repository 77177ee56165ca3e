"""Exceptions of the engine. Every message names what is wrong so a user can fix it."""

from __future__ import annotations


class AnchorError(Exception):
    """Base class of every error the engine raises on purpose."""


class RulesetError(AnchorError, ValueError):
    """A ruleset file or name is unusable (missing field, bad grid, wrong totals...)."""


class InputError(AnchorError, ValueError):
    """Malformed user input: a board, a rack, a coordinate, a play, a CGP or GCG text."""


class RackError(InputError):
    """A rack no game could deal: a letter outside the alphabet, more tiles than a rack
    holds, or more of a tile than the set has."""


class PositionError(InputError):
    """A position the rules do not allow for what was asked of it: a board and racks no bag
    could hold, an endgame with tiles still in the bag."""


class LexiconError(AnchorError, ValueError):
    """A lexicon cannot be built or a KWG file is truncated, corrupt or foreign."""


class WorkLimitError(AnchorError):
    """A computation ran past the time it was given (Solver.generate_moves' `budget`)."""
