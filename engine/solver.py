"""Solver: the public entry point tying a lexicon and a ruleset together."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

from . import _movegen
from .board import Board
from .errors import InputError, WorkLimitError
from .leaves import Leaves
from .lexicon import Lexicon, LexiconWarning, anagram_path
from .moves import EQUITY, Move, MoveList, exchanges
from .notation import Play, parse_play, parse_rack
from .peers import Peer, identity
from .rules import Ruleset
from .scoring import Score, Validation, score_play, validate_play

if TYPE_CHECKING:
    from . import endgame as _endgame

MODES = {"across": 1, "down": 2, "both": 3}
MAX_LIMIT = 1 << 40  # a larger limit keeps every play all the same


class Solver:
    """Scores, validates and (with the move generator) finds plays for one lexicon."""

    __slots__ = ("lexicon", "rules", "_generator", "_describe", "_leaves", "_racks", "_identity")

    def __init__(self, lexicon: Lexicon, rules: Ruleset | None = None):
        rules = rules or lexicon.rules
        if lexicon.rules.alphabet != rules.alphabet:
            raise InputError(
                f"lexicon was opened for the {lexicon.rules.name} alphabet, "
                f"not the {rules.name} one"
            )
        self.lexicon = lexicon
        self.rules = rules
        self._leaves: dict[str, Leaves] = {}
        self._racks: dict[str, tuple[tuple[int, ...], bytes]] = {}
        self._identity: bytes | None = None  # the lexicon's and rules' digest, for endgame peers
        try:
            self._generator = _movegen.Generator(
                lexicon.buffer,
                *rules.generator_args(),
                anagrams=lexicon.anagrams,
                exchange_min_bag=rules.exchange_min_bag,
            )
        except ValueError as exc:  # rules the generator cannot play exactly
            raise InputError(f"ruleset {rules.name}: {exc}") from None
        self._describe = self._generator.describe  # bound once: each MoveList carries it
        if lexicon.path is not None and not anagram_path(lexicon.path).exists():
            warnings.warn(
                f"{lexicon.path} has no bingo-word file beside it, so each process builds "
                "one as it starts (a tenth of a second or more, and its own memory): "
                f"`anchor lexicon index {lexicon.path}` writes it",
                LexiconWarning,
                stacklevel=2,
            )
        if self._generator.anagram_problem:  # a cache out of date: work on, but say so
            warnings.warn(
                f"{lexicon.anagram_path}: {self._generator.anagram_problem}, not the bingo "
                f"words of {lexicon.path}, so it is not used (each process builds its own: "
                f"more memory); `anchor lexicon index {lexicon.path}` writes it anew, or delete it",
                LexiconWarning,
                stacklevel=2,
            )
        elif self.bingo_words == "compared" and self._generator.anagram_names_kwg:
            warnings.warn(  # its set is this lexicon's, so it is shared: the rest is not
                f"{lexicon.anagram_path}: damaged (it names this lexicon, but its digest or "
                "its tables do not hold), so each process builds the bingo words again to "
                f"check it as it starts; `anchor lexicon index {lexicon.path}` writes it anew",
                LexiconWarning,
                stacklevel=2,
            )

    @property
    def bingo_words(self) -> str:
        """Where the generator's bingo words come from: "trusted" (the file beside the
        KWG, written for it), "compared" (a file written for another KWG of the same words:
        each process builds the set to check it), "built" (in this process) or "none"."""
        source = self._generator.anagram_source
        if source == "file":
            return "trusted" if self._generator.anagram_trusted else "compared"
        return source

    @property
    def shorter_words(self) -> str:
        """Where the words shorter than a rack (laid from, by equity) come from: "file" (the
        trusted bingo-word file's), "built" (in this process, at start: a file written
        before it held them, or none) or "none"."""
        return self._generator.short_words_source

    def leaves(self, path: str | os.PathLike) -> Leaves:
        """The leave values in a KLV2 file for this solver's rules, opened once."""
        key = os.fspath(path)
        if key not in self._leaves:
            self._leaves[key] = Leaves.open(key, self.rules)
        return self._leaves[key]

    def generate_moves(
        self,
        board: Board,
        rack: str,
        mode: str = "both",
        limit: int | None = None,
        include_exchanges: bool = False,
        rank: str = "score",
        leaves: Leaves | str | os.PathLike | None = None,
        budget: float | None = None,
        count_all: bool = False,
        max_exchange: int | None = None,
    ) -> MoveList:
        """Every legal play for `rack` on `board`, once each, ranked best first.

        mode: "both", "across" or "down". limit: keep only the top N, found best-first: the
        search skips whatever cannot rank (`total` is then None unless nothing was skipped),
        and memory stays within N records. include_exchanges: add every distinct
        exchange and the pass (score 0). rank: "score", or "equity" (score + value of the
        tiles kept, from `leaves`: Leaves or a .klv2 path). budget: seconds the search may
        take; WorkLimitError past it (None: no limit). count_all: with a limit, still
        search every play, so that `total` counts them (as slow as no limit, as little
        memory as the limit). max_exchange: with include_exchanges, the most tiles an
        exchange may put back (None: the whole rack; 0: the pass alone); Position decides it
        from the bag (`analyze` in analysis.py does).
        """
        # checked in the order that costs least when all is well: best-play requests come
        # by the million, and each check here is a sizeable part of one
        if board.__class__ is not Board or board.rules is not self.rules:
            self._check_board(board)
        known = self._racks.get(rack) if rack.__class__ is str else None
        tiles, counts = known if known is not None else self._rack(rack)
        mode_c = MODES.get(mode) if isinstance(mode, str) else None
        if mode_c is None:
            raise InputError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if limit is None:
            limit_c = -1
        elif (
            limit.__class__ is int or (isinstance(limit, int) and not isinstance(limit, bool))
        ) and limit >= 0:
            limit_c = min(limit, MAX_LIMIT)
        else:
            raise InputError(f"limit must be a whole number >= 0 or None, not {limit!r}")
        if rank == "equity":
            if leaves is None:
                raise InputError("ranking by equity needs leave values (a KLV2 file)")
            if hasattr(leaves, "table"):  # Leaves, or a LeaveModel
                pass
            elif isinstance(leaves, str | os.PathLike):
                leaves = self.leaves(leaves)
            else:
                raise InputError(
                    f"leaves must be Leaves (Leaves.open(path, rules)) or a .klv2 path, "
                    f"not {type(leaves).__name__}"
                )
        elif rank != "score":
            raise InputError(f"rank must be 'score' or 'equity', not {rank!r}")
        elif leaves is not None:
            raise InputError("leave values are used only with rank='equity'")
        if budget is not None and not (
            isinstance(budget, int | float) and not isinstance(budget, bool) and 0 < budget <= 1e6
        ):
            raise InputError(f"budget must be a number of seconds in (0, 1e6], not {budget!r}")
        budget_c = budget or 0.0
        try:
            if rank == "equity":
                steps, values = leaves.table(tiles)
                records, found, complete, equities = self._generator.generate(
                    board.cells,
                    counts,
                    mode_c,
                    limit_c,
                    steps,
                    values,
                    budget_c,
                    count_all,
                )
            else:
                # positional: keywords cost the C call about 0.4 µs of parsing
                records, found, complete = self._generator.generate(
                    board.cells, counts, mode_c, limit_c, None, None, budget_c, count_all
                )
                equities = None
        except TimeoutError:
            raise WorkLimitError(
                f"move generation for rack {rack!r} took longer than {budget:g} s"
            ) from None
        extra = ()
        if (
            include_exchanges
            and tiles
            and not (
                equities is not None
                and not complete
                and _plays_fill(limit_c, equities, leaves, tiles)
            )
        ):
            extra = exchanges(
                self.rules, tiles, leaves if rank == "equity" else None, limit, max_exchange
            )
        moves = MoveList(
            board,
            records,
            found if complete else None,
            extra,
            equities,
            found,
            self._describe,
        )
        if extra and len(moves) > limit_c >= 0:  # the generator keeps at most limit plays itself
            moves.top(limit_c)
        return moves

    def _rack(self, rack: str) -> tuple[tuple[int, ...], bytes]:
        """The rack's tiles and its count of each tile, for the generator: parsed once per
        rack text (racks repeat in analysis, annotation and simulation; a bounded cache)."""
        known = self._racks.get(rack) if isinstance(rack, str) else None
        if known is None:
            tiles = parse_rack(self.rules, rack)
            counts = bytearray(self.rules.size + 1)
            for t in tiles:
                counts[t] += 1
            known = (tiles, bytes(counts))
            if len(self._racks) >= 4096:
                self._racks.clear()
            self._racks[rack] = known
        return known

    def best_move(self, board: Board, rack: str, mode: str = "both") -> Move | None:
        """The highest-scoring play, or None when there is none."""
        moves = self.generate_moves(board, rack, mode=mode, limit=1)
        return moves[0] if len(moves) else None

    def solve_endgame(
        self,
        board: Board,
        rack: str,
        opponent_rack: str,
        plies: int | None = None,
        budget_s: float | None = None,
        table_mb: float | None = None,
        scoreless_turns: int = 0,
        max_nodes: int | None = None,
        table: _endgame.Table | None = None,
        threads: int = 1,
        peer: Peer | None = None,
    ) -> _endgame.Endgame:
        """The endgame with the bag empty, solved exactly: `rack` to move, the opponent holding
        `opponent_rack`. plies: the deepest line searched (None: to the end of the game).
        budget_s: seconds; past it, the best line of the deepest search completed, with `exact`
        False. table_mb: the transposition table's memory (None: endgame.DEFAULT_TABLE_MB).
        scoreless_turns: scoreless turns already played in a row. max_nodes: like budget_s, in
        positions searched (the same answer on every machine). table: an endgame Table kept
        across solves (one game's turns): positions an earlier solve proved cost nothing again.
        threads: searches at once on one table (a proven value and its line are the same for any
        number). peer: search with other processes' solves of this endgame on one table
        (engine/peers.py: workers forked from one process); the same answer."""
        return self.solve_endgame_part(
            board, rack, opponent_rack, None, plies=plies, budget_s=budget_s, table_mb=table_mb,
            scoreless=scoreless_turns, max_nodes=max_nodes, table=table, threads=threads,
            peer=peer,
        ).endgame  # fmt: skip

    def solve_endgame_part(
        self, board: Board, rack: str, opponent_rack: str, split: _endgame.Split, **search
    ) -> _endgame.Part:
        """solve_endgame on the root's plays `split` names (a hard endgame spread over
        workers: engine/endgame.py, Split); `search`: solve_endgame's keywords."""
        from . import endgame as _endgame  # loaded by the first endgame, not by every command

        self._check_board(board)
        tiles, _ = self._rack(rack)
        other, _ = self._rack(opponent_rack)
        if search.get("table_mb", 0) is None:
            search["table_mb"] = _endgame.DEFAULT_TABLE_MB
        if "scoreless_turns" in search:
            search["scoreless"] = search.pop("scoreless_turns")
        if search.get("peer") is not None:
            if self._identity is None:
                self._identity = identity(self.lexicon.buffer, self.rules)
            search["identity"] = self._identity
        return _endgame.solve_part(
            self._generator,
            self.rules,
            board,
            tiles,
            other,
            split=split or _endgame.Split(),
            **search,
        )

    def solve_preendgame(self, board: Board, rack: str, **options):
        """1 to 4 tiles in the bag: the top moves and the pass, each valued over every way
        the unseen tiles can lie; `options`: engine.preendgame.solve_preendgame's."""
        from .preendgame import solve_preendgame

        self._check_board(board)
        return solve_preendgame(self, board, rack, **options)

    def _check_board(self, board: Board) -> None:
        if not isinstance(board, Board):
            raise InputError(f"expected a Board, not {type(board).__name__}")
        if board.rules is not self.rules and (
            board.rules.rows,
            board.rules.cols,
            board.rules.alphabet,
        ) != (self.rules.rows, self.rules.cols, self.rules.alphabet):
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


def _plays_fill(limit: int, equities: bytes, leaves, tiles: tuple[int, ...]) -> bool:
    """Whether the top `limit` plays (ranked by equity) leave no room for an exchange or
    the pass: the limit-th play is worth at least the best of them (ties go to plays), so
    listing the exchanges, 59 µs a rack in Python, can be skipped. Their best is the
    best value in the rack's leave table (every key is one sub-rack put back; key 0, the
    whole rack kept, is the pass)."""
    if limit < 1 or len(equities) < 4 * limit:
        return False
    values = memoryview(leaves.table(tiles)[1]).cast("f")
    return EQUITY.unpack_from(equities, 4 * (limit - 1))[0] >= max(values)
