"""The board: a grid of cell bytes (0 empty, 1..N a tile, | 0x80 a blank standing for it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .errors import InputError
from .rules import Ruleset

BLANK_FLAG = 0x80
EMPTY = 0
ACROSS = "across"
DOWN = "down"
_RENDER_PREMIUM = {".": ".", "d": "'", "t": '"', "q": "^", "D": "-", "T": "=", "Q": "~"}


def cell_letter(rules: Ruleset, cell: int) -> str:
    """Text of a non-empty cell: the letter, lowercase when a blank stands for it."""
    letter = rules.alphabet[(cell & 0x7F) - 1]
    return letter.lower() if cell & BLANK_FLAG else letter


def cell_text(rules: Ruleset) -> tuple[str, ...]:
    """Text of every cell byte for this alphabet: '.' empty, the letter for a tile,
    lowercase for a blank ('' for bytes no board holds). Also a str.translate table for
    cell bytes read as Latin-1 characters."""
    table = _CELL_TEXT.get(rules.alphabet)
    if table is None:
        table = tuple(
            "." if b == EMPTY else cell_letter(rules, b) if 1 <= (b & 0x7F) <= rules.size else ""
            for b in range(256)
        )
        _CELL_TEXT[rules.alphabet] = table
    return table


_CELL_TEXT: dict[tuple[str, ...], tuple[str, ...]] = {}
_DOTS = ["." * n for n in range(32)]
_COUNTS = [str(n) for n in range(32)]


def letter_cell(rules: Ruleset, ch: str) -> int:
    """Cell byte of a letter as written on a board: uppercase a tile, lowercase a blank."""
    tile = rules.tile_of(ch) if len(ch) == 1 else None  # Ё written for Е is Е
    if tile is None:
        raise KeyError(ch)
    return tile | BLANK_FLAG if ch != ch.upper() else tile


class Board:
    """An immutable position: which tile stands on every square."""

    __slots__ = ("rules", "_cells")

    def __init__(self, rules: Ruleset, cells: bytes | bytearray | None = None):
        self.rules = rules
        n = rules.rows * rules.cols
        if cells is None:
            cells = bytes(n)
        if len(cells) != n:
            raise InputError(f"board has {len(cells)} cells; the {rules.name} board has {n}")
        cells = bytes(cells)
        if cells.translate(None, _valid_cells(rules.size)):
            for i, cell in enumerate(cells):
                if cell not in _valid_cells(rules.size):
                    r, c = divmod(i, rules.cols)
                    raise InputError(f"board cell {r + 1},{c + 1} holds invalid byte {cell:#x}")
        self._cells = cells

    # ------------------------------------------------------------ construction
    @classmethod
    def empty(cls, rules: Ruleset) -> Board:
        return cls(rules)

    @classmethod
    def from_rows(cls, rules: Ruleset, rows: Iterable[str] | str) -> Board:
        """Rows of text: '.' (or space) empty, uppercase a tile, lowercase a blank."""
        if isinstance(rows, str):
            rows = [line for line in rows.splitlines() if line.strip()]
        rows = list(rows)
        if len(rows) != rules.rows:
            raise InputError(f"board has {len(rows)} rows; the {rules.name} board has {rules.rows}")
        cells = bytearray()
        for r, line in enumerate(rows, 1):
            if not isinstance(line, str):
                raise InputError(f"board row {r} is {type(line).__name__}, not text")
            if len(line) != rules.cols:
                raise InputError(
                    f"board row {r} has {len(line)} squares; the {rules.name} board has "
                    f"{rules.cols}: {line!r}"
                )
            for c, ch in enumerate(line):
                if ch in ". ":
                    cells.append(EMPTY)
                    continue
                try:
                    cells.append(letter_cell(rules, ch))
                except KeyError:
                    raise InputError(
                        f"board row {r} column {c + 1}: {ch!r} is not a letter of the "
                        f"{rules.name} alphabet"
                    ) from None
        return cls(rules, cells)

    @classmethod
    def from_cgp(cls, rules: Ruleset, cgp: str) -> Board:
        """A full CGP string or just its board field ('15/15/.../7WORD4/...')."""
        if not isinstance(cgp, str) or not cgp.strip():
            raise InputError("CGP is empty")
        lines = cgp.split(None, 1)[0].split("/")
        if len(lines) != rules.rows:
            raise InputError(
                f"CGP board has {len(lines)} rows; the {rules.name} board has {rules.rows}"
            )
        rows = _cgp_rows(rules)
        parts = list(map(rows.get, lines))
        if None in parts:
            if len(rows) > _CGP_ROWS_KEPT:
                rows.clear()
            for r, line in enumerate(lines, 1):
                if parts[r - 1] is None:
                    row = _parse_cgp_row(rules, line, r)
                    if len(row) != rules.cols:
                        raise InputError(
                            f"CGP board row {r} ({line!r}) has {len(row)} squares; the "
                            f"{rules.name} board has {rules.cols}"
                        )
                    parts[r - 1] = rows[line] = bytes(row)
        board = object.__new__(cls)  # rows are checked as they are parsed
        board.rules = rules
        board._cells = b"".join(parts)
        return board

    # ----------------------------------------------------------------- reading
    @property
    def cells(self) -> bytes:
        """Row-major cell bytes (the layout the move generator reads)."""
        return self._cells

    def cell(self, row: int, col: int) -> int:
        return self._cells[row * self.rules.cols + col]

    def letter_at(self, row: int, col: int) -> str | None:
        cell = self._cells[row * self.rules.cols + col]
        return cell_letter(self.rules, cell) if cell else None

    def in_bounds(self, row: int, col: int) -> bool:
        return 0 <= row < self.rules.rows and 0 <= col < self.rules.cols

    def is_empty(self) -> bool:
        return not any(self._cells)

    def tile_count(self) -> int:
        return sum(1 for c in self._cells if c)

    def tiles(self) -> Counter[str]:
        """Tiles on the board by letter; blanks count under '?'."""
        out: Counter[str] = Counter()
        alphabet = self.rules.alphabet
        for cell, n in Counter(self._cells).items():
            if cell:
                out["?" if cell & BLANK_FLAG else alphabet[cell - 1]] += n
        return out

    # ------------------------------------------------------------- conversions
    def to_rows(self) -> tuple[str, ...]:
        cols, table = self.rules.cols, cell_text(self.rules)
        cells = self._cells
        return tuple(
            cells[r * cols : (r + 1) * cols].decode("latin-1").translate(table)
            for r in range(self.rules.rows)
        )

    def to_cgp(self) -> str:
        """The board field of a CGP string."""
        text = "/".join(self.to_rows())
        # every run of empty squares as its length: longest first, so each run is whole
        for n in range(self.rules.cols, 0, -1):
            text = text.replace(_DOTS[n], _COUNTS[n])
        return text

    def transpose(self) -> Board:
        """The board mirrored across its main diagonal: down plays become across plays."""
        rows, cols = self.rules.rows, self.rules.cols
        cells = bytes(self._cells[r * cols + c] for c in range(cols) for r in range(rows))
        return Board(self.rules.transposed(), cells)

    def apply(self, placed: Iterable[tuple[int, int, str]]) -> Board:
        """A new board with tiles (row, col, letter; lowercase = blank) added."""
        cells = bytearray(self._cells)
        for row, col, letter in getattr(placed, "placed", placed):
            if not self.in_bounds(row, col):
                raise InputError(f"square {row + 1},{col + 1} is off the board")
            i = row * self.rules.cols + col
            if cells[i]:
                raise InputError(f"square {square_label(row, col)} is already occupied")
            try:
                cells[i] = letter_cell(self.rules, letter)
            except KeyError:
                raise InputError(
                    f"{letter!r} is not a letter of the {self.rules.name} alphabet"
                ) from None
        return Board(self.rules, cells)

    def render(self) -> str:
        """A text picture with coordinates; empty premium squares show their kind."""
        cols = self.rules.cols
        header = "    " + " ".join(chr(ord("A") + c) for c in range(cols))
        lines = [header]
        for r, row in enumerate(self.to_rows()):
            squares = [
                ch if ch != "." else _RENDER_PREMIUM[self.rules.premiums[r][c]]
                for c, ch in enumerate(row)
            ]
            lines.append(f"{r + 1:>3} " + " ".join(squares))
        lines.append("    = triple word  - double word  \" triple letter  ' double letter")
        return "\n".join(lines)

    # ----------------------------------------------------------------- dunders
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self._cells == other._cells and self.rules == other.rules

    def __hash__(self) -> int:
        return hash(self._cells)

    def __repr__(self) -> str:
        return f"Board({self.rules.name!r}, {self.to_cgp()!r})"

    def __str__(self) -> str:
        return self.render()


_VALID: dict[int, bytes] = {}


def _valid_cells(size: int) -> bytes:
    """The byte values a board of an alphabet of `size` letters may hold."""
    valid = _VALID.get(size)
    if valid is None:
        valid = bytes([EMPTY, *range(1, size + 1), *(t | BLANK_FLAG for t in range(1, size + 1))])
        _VALID[size] = valid
    return valid


def square_label(row: int, col: int, direction: str = ACROSS) -> str:
    """GCG coordinate: '8D' for an across play, 'D8' for a down play (0-based input)."""
    letter = chr(ord("A") + col)
    return f"{row + 1}{letter}" if direction == ACROSS else f"{letter}{row + 1}"


# Parsed CGP rows by ruleset: rows repeat across the positions of a game and between games
# (empty rows above all), so a batch parses each distinct row once. Bounded: cleared when full.
# Keyed by the Ruleset object (kept beside its rows, so its id stays its own): an equal
# ruleset loaded again gets rows of its own rather than a comparison at every lookup.
_CGP_ROWS: dict[int, tuple[Ruleset, dict[str, bytes]]] = {}
_CGP_ROWS_KEPT = 50_000


def _cgp_rows(rules: Ruleset) -> dict[str, bytes]:
    kept = _CGP_ROWS.get(id(rules))
    if kept is None or kept[0] is not rules:
        if len(_CGP_ROWS) > 64:
            _CGP_ROWS.clear()
        kept = _CGP_ROWS[id(rules)] = (rules, {})
    return kept[1]


_DIGITS = frozenset("0123456789")


def _parse_cgp_row(rules: Ruleset, line: str, r: int) -> bytearray:
    row = bytearray()
    i = 0
    while i < len(line):
        ch = line[i]
        if ch in _DIGITS:  # ASCII only: str.isdigit() also takes '²', which int() refuses
            j = i
            while j < len(line) and line[j] in _DIGITS:
                j += 1
            run = int(line[i:j])
            if run == 0 or run > rules.cols:
                raise InputError(f"CGP board row {r} ({line!r}): bad run of {run} empty squares")
            row += bytes(run)
            i = j
            continue
        if ch == "[":
            raise InputError(
                f"CGP board row {r} ({line!r}): multi-character tiles [..] are not supported"
            )
        try:
            row.append(letter_cell(rules, ch))
        except KeyError:
            raise InputError(
                f"CGP board row {r} ({line!r}): {ch!r} is not a letter of the {rules.name} alphabet"
            ) from None
        i += 1
        if len(row) > rules.cols:
            break
    return row
