"""The game position: board, racks, scores, scoreless turns, and the bag they imply.

A Position is what every caller (worker, CLI, annotation, self-play, simulation, endgame,
pre-endgame) hands the engine. The bag and the unseen tiles are derived here from the
ruleset's distribution, and the rules that depend on them are decided here and nowhere
else: an exchange only while the bag holds the ruleset's minimum, an endgame only with an
empty bag, a pre-endgame only with the bag sizes it supports.

CGP (the interchange format of Macondo and MAGPIE) is read and written here, opcodes
included: `board racks scores zero-turns [opcode value;]...`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .board import Board
from .errors import InputError, PositionError, RackError
from .legality import check_position, check_rack, fits, unseen_counts
from .notation import format_rack, parse_rack
from .rules import Ruleset

MAX_SCORE = 1_000_000  # a game's score, either way: far past any real one, far from overflow
MAX_ZERO_TURNS = 99  # scoreless turns in a row (the protocol's `scoreless` range)
_NUMBER = re.compile(r"^-?[0-9]{1,9}$")  # ASCII digits only: int() takes any script's
# CGP opcodes that name the game and change nothing of the position.
CGP_INFO = frozenset({"gid", "cid", "tmr", "mcnz", "ti", "tn"})
# What `ld` (letter distribution) may say for each built-in ruleset.
_LD_NAMES: dict[str, tuple[str, ...]] = {
    "english": ("english",),
    "super-english": ("english_super", "super-english"),
    "russian": ("russian",),
    "erudit": ("erudit",),
}


@dataclass(frozen=True, slots=True)
class Position:
    """A game position, the player to move first. `racks[i]` is "" where a rack is not
    known (a CGP's `RACK/` leaves the opponent's unknown); racks are kept as written,
    Эрудит's Ё folded to Е."""

    board: Board
    racks: tuple[str, ...]
    scores: tuple[int, ...] = ()
    zero_turns: int = 0
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    # ------------------------------------------------------------ building
    @classmethod
    def from_cgp(cls, rules: Ruleset, text: str) -> Position:
        """A full CGP line: board, racks, scores, scoreless turns, then `opcode value;`s.
        Letters are checked; the tile supply is not (see `check`)."""
        if not isinstance(text, str) or not text.strip():
            raise InputError("CGP is empty")
        fields = text.split(None, 4)
        if len(fields) < 4:
            raise InputError(
                f"CGP {text[:60]!r} has {len(fields)} field(s); expected board, racks, scores "
                "and the count of scoreless turns"
            )
        board = Board.from_cgp(rules, fields[0])
        racks = tuple(rules.fold_letters(rack) for rack in fields[1].split("/"))
        for rack in racks:
            parse_rack(rules, rack)
        scores_text = fields[2].split("/")
        if not all(_NUMBER.match(t) for t in scores_text) or not _NUMBER.match(fields[3]):
            raise InputError(
                f"CGP scores {fields[2][:40]!r} and turns {fields[3][:20]!r} must be whole "
                "numbers (digits 0-9)"
            )
        scores = tuple(int(t) for t in scores_text)
        zeros = int(fields[3])
        if len(scores) != len(racks):
            raise InputError(f"CGP has {len(racks)} racks but {len(scores)} scores")
        if any(abs(score) > MAX_SCORE for score in scores):
            raise InputError(f"CGP scores {fields[2][:40]!r} are beyond ±{MAX_SCORE:,}")
        if not 0 <= zeros <= MAX_ZERO_TURNS:
            raise InputError(
                f"CGP's count of scoreless turns is {fields[3][:20]}; it must be "
                f"0..{MAX_ZERO_TURNS}"
            )
        options: dict[str, str] = {}
        if len(fields) == 5:
            for op in fields[4].split(";"):
                op = op.strip()
                if op:
                    key, _, value = op.partition(" ")
                    options[key] = value.strip()
        return cls(board, racks, scores, zeros, MappingProxyType(options))

    @classmethod
    def read(cls, rules: Ruleset, text: str, rack: str | None = None) -> Position:
        """A full CGP, or just its board field (the racks then unknown); `rack`, when given,
        as the mover's rack in place of the CGP's."""
        if isinstance(text, str) and len(text.split(None, 4)) >= 2:
            position = cls.from_cgp(rules, text)  # refuses 2 or 3 fields, naming them
        else:
            position = cls(Board.from_cgp(rules, text), ("", ""), (0, 0), 0)
        return position if rack is None else position.with_racks(rack)

    @classmethod
    def of(
        cls,
        board: Board,
        rack: str,
        opponent: str | None = None,
        scores: tuple[int, ...] = (),
        zero_turns: int = 0,
    ) -> Position:
        """A position from a board and the mover's rack (`opponent`: their rack, when known)."""
        if not isinstance(rack, str):
            raise RackError(f"a rack must be text like 'AEINRS?', not {type(rack).__name__}")
        rules = board.rules
        racks = (rules.fold_letters(rack), rules.fold_letters(opponent or ""))
        return cls(board, racks, scores or (0, 0), zero_turns)

    def with_racks(self, rack: str | None = None, opponent: str | None = None) -> Position:
        """This position with the mover's rack and/or the opponent's replaced (None: kept)."""
        racks = list(self.racks) + [""] * (2 - len(self.racks))
        if rack is not None:
            racks[0] = self.rules.fold_letters(rack)
        if opponent is not None:
            racks[1] = self.rules.fold_letters(opponent)
        scores = self.scores + (0,) * (len(racks) - len(self.scores))
        return Position(self.board, tuple(racks), scores, self.zero_turns, self.options)

    # ------------------------------------------------------------- reading
    @property
    def rules(self) -> Ruleset:
        return self.board.rules

    @property
    def rack(self) -> str:
        """The mover's rack ("" when not known)."""
        return self.racks[0] if self.racks else ""

    @property
    def opponent(self) -> str | None:
        """The next player's rack, or None when it is not known."""
        return self.racks[1] if len(self.racks) > 1 and self.racks[1] else None

    @property
    def lead(self) -> int:
        """The mover's score less the best other player's (0 without scores)."""
        return self.scores[0] - max(self.scores[1:], default=0) if self.scores else 0

    def tiles(self) -> tuple[int, ...]:
        """The mover's rack as tile numbers (blank 0); RackError when it is not a rack."""
        return parse_rack(self.rules, self.rack)

    def unseen(self, strict: bool = False) -> list[int]:
        """Tiles the mover cannot see, by tile number (blank 0): the set less the board and
        the mover's rack, i.e. the opponent's rack and the bag. strict: InputError when
        board and rack hold more of a tile than the set (else none of it is unseen)."""
        return unseen_counts(self.board, self.tiles(), strict=strict)

    def bag_size(self, unseen: list[int] | None = None) -> int:
        """Tiles in the bag. While it holds any, every rack is full, so it is the tiles off
        the board less a full rack for each player, however much of the racks was given (a
        rack written short, "AE" to see what AE can do, does not grow the bag)."""
        rules = self.rules
        off = sum(self.unseen() if unseen is None else unseen) + len(self.tiles())
        return max(0, off - max(2, len(self.racks)) * rules.rack_size)

    def can_exchange(self, bag: int | None = None) -> bool:
        """Whether the mover may exchange (the pass is always allowed)."""
        return self.rules.can_exchange(self.bag_size() if bag is None else bag)

    # ------------------------------------------------------------ checking
    def playable(self) -> Position:
        """This position, checked (`check`), when the player to move holds tiles to play
        (RackError otherwise): what every analysis, endgame and simulation asks first."""
        if not self.rack.strip():
            raise RackError("the rack is empty: give the player's tiles, e.g. 'AEINRS?'")
        return self.check()

    def check(self) -> Position:
        """This position, when one game could reach it: each rack a rack of the set
        (RackError), board and racks together within the set, the board's tiles one group
        through the centre (PositionError). Cheap when all is well (one pass in C)."""
        rules = self.rules
        tiles = self.tiles()
        if not fits(self.board, tiles):
            check_rack(rules, tiles)
            try:
                check_position(self.board, tiles)
            except InputError as exc:
                raise PositionError(str(exc)) from None
        opponent = self.opponent
        if opponent:
            other = parse_rack(rules, opponent)
            try:
                check_rack(rules, other)
            except RackError as exc:
                raise RackError(f"the opponent's rack: {exc}") from None
            try:
                unseen_counts(self.board, tiles + other, strict=True)
            except InputError as exc:
                raise PositionError(f"with the opponent's rack, {exc}") from None
        return self

    def endgame(self) -> Position:
        """This position, checked, when an endgame can be solved from it (the bag empty),
        with the opponent's rack filled in from the unseen tiles when it is not given.
        PositionError when tiles remain in the bag."""
        self.playable()
        unseen = self.unseen()
        bag = self.bag_size(unseen)
        if bag:
            raise PositionError(
                f"an endgame needs an empty bag; this position leaves {bag} tile(s) in it "
                f"({sum(unseen)} unseen by the player to move, at most "
                f"{self.rules.rack_size} of them on the opponent's rack): give both racks of "
                "an empty-bag position, or ask for a pre-endgame or an analysis"
            )
        # the bag empty, the opponent holds every tile the mover cannot see
        held = sum(unseen)
        if not held:
            raise PositionError("no tile is left for the opponent: the game is over")
        if held > self.rules.rack_size:
            raise RackError(
                f"with the bag empty the opponent would hold the {held} tiles the mover cannot "
                f"see, more than a rack's {self.rules.rack_size}: give the mover's whole rack"
            )
        tiles = [t for t, n in enumerate(unseen) for _ in range(n)]
        return self.with_racks(opponent=format_rack(self.rules, tiles))

    def preendgame(self, sizes: range) -> Position:
        """This position, checked, when a pre-endgame with `sizes` tiles in the bag can be
        solved from it; PositionError otherwise."""
        self.playable()
        unseen = self.unseen()
        bag = self.bag_size(unseen)
        if bag not in sizes:
            span = f"{sizes.start}" if len(sizes) == 1 else f"{sizes.start} to {sizes[-1]}"
            raise PositionError(
                f"a pre-endgame needs {span} tile(s) in the bag; this position leaves {bag} "
                f"({sum(unseen)} tiles unseen, {sum(unseen) - bag} of them on the opponent's "
                "rack)" + (": solve its endgame instead" if bag == 0 else "")
            )
        return self

    def lexicon_named(self, asked: str | None) -> str | None:
        """The lexicon the CGP's `lex` opcode names, checked against `asked` (the request's);
        PositionError for an opcode this ruleset does not play or the engine does not read
        (`ld`, `bb`, `var` must agree with the ruleset; the game's names are ignored)."""
        rules = self.rules
        for op, value in self.options.items():
            if op == "lex" or op in CGP_INFO:
                continue
            if op == "ld" and value.casefold() in (
                rules.name.casefold(),
                *_LD_NAMES.get(rules.name, ()),
            ):
                continue
            if op == "bb" and value == str(rules.bingo_bonus):
                continue
            if op == "var" and value.casefold() == "classic":
                continue
            if op in ("ld", "bb", "var"):
                raise PositionError(
                    f"the CGP asks for {op} {value!r}, which the {rules.name} ruleset does "
                    "not play; choose the ruleset that does, or drop the opcode"
                )
            raise PositionError(
                f"the CGP opcode {op!r} is not one this service reads (it reads lex, ld, bb, "
                f"var and ignores {', '.join(sorted(CGP_INFO))})"
            )
        named = self.options.get("lex") or None
        if named is None or asked is None:
            return asked if named is None else named
        if asked.casefold() != named.casefold():
            raise PositionError(
                f"the CGP names lexicon {named!r} but the request asks for {asked!r}; "
                "drop one of them"
            )
        return asked

    # ------------------------------------------------------------- writing
    def to_cgp(self) -> str:
        ops = "".join(f" {k} {v};" if v else f" {k};" for k, v in self.options.items())
        racks = "/".join(self.racks)
        scores = "/".join(str(s) for s in self.scores)
        return f"{self.board.to_cgp()} {racks} {scores} {self.zero_turns}{ops}"


def parse_cgp(rules: Ruleset, text: str) -> Position:
    """Position.from_cgp: a full CGP line."""
    return Position.from_cgp(rules, text)
