"""GCG game records: parse the variants found in the wild and replay them into positions.

Handles Quackle, Macondo/Woogles and older files: `.` or letters for played-through
tiles, lowercase column letters, pragmas (`#player1`, `#lexicon`, `#character-encoding`,
`#note`, `#rack1`...), exchanges (`-ABC`, `-3`), passes (`-`), withdrawn phonies (`--`),
challenge bonuses, end-rack points and penalties, time penalties; UTF-8 or Latin-1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from .board import Board
from .errors import InputError
from .notation import Play, parse_coordinate, parse_play, parse_rack
from .rules import Ruleset
from .scoring import Score, score_play

PLAY = "play"
EXCHANGE = "exchange"
PASS = "pass"
WITHDRAWN = "withdrawn"  # a phony taken back after a challenge ('--')
CHALLENGE_BONUS = "challenge_bonus"
END_RACK = "end_rack"  # points for (or against) the tiles left on a rack at the end
TIME_PENALTY = "time_penalty"

# ASCII digits, at most 7 (a game's score stays far below; int() would take any script's
# digits and any length)
_SCORE = re.compile(r"^[+-][0-9]{1,7}$")
_TOTAL = re.compile(r"^-?[0-9]{1,7}$")
_COORD = re.compile(r"^(?:\d{1,2}[A-Za-z]|[A-Za-z]\d{1,2})$")


@dataclass(frozen=True, slots=True)
class Player:
    nick: str
    name: str


@dataclass(frozen=True, slots=True)
class Event:
    """One move line (`>nick: ...`)."""

    kind: str
    player: str
    rack: str
    score: int
    total: int
    line: int
    text: str
    coordinate: str = ""
    word: str = ""
    tiles: str = ""  # exchanged tiles, or the tiles of an end-rack line
    player_index: int = 0  # 0-based seat, resolved even when two players share a nick


@dataclass(frozen=True, slots=True)
class Game:
    """A record: its players, move lines, pragmas (the last value of each key) and notes.
    `placed` is every `#` line as read, in order, with the number of move lines before
    it: write_gcg puts each back where it stood (a note after the move it comments on).
    `encoding` is how the bytes were read; `guessed` when no line declared it."""

    players: tuple[Player, ...]
    events: tuple[Event, ...]
    pragmas: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    source: str = ""
    placed: tuple[tuple[str, str, int], ...] = ()  # (key, value, move lines before it)
    encoding: str = "utf-8"
    guessed: bool = False

    @property
    def lexicon(self) -> str | None:
        return self.pragmas.get("lexicon")


@dataclass(frozen=True, slots=True)
class Turn:
    """A move line replayed: the board before it, and for plays the parsed play and score."""

    event: Event
    board: Board
    play: Play | None = None
    score: Score | None = None

    @property
    def score_matches(self) -> bool:
        return self.score is None or self.score.total == self.event.score


def leave_kept(turn: Turn, rules: Ruleset) -> tuple[int, ...] | None:
    """The tiles (numbers, 0 = blank) a play, exchange or pass left on the rack, sorted;
    None when the record does not say (no rack, an exchange given as a count, or tiles
    that were not on the recorded rack)."""
    ev = turn.event
    if ev.kind not in (PLAY, EXCHANGE, PASS) or not ev.rack:
        return None
    try:
        rack = list(parse_rack(rules, ev.rack))
        if ev.kind == PLAY:
            used = [0 if ch.islower() else rules.letter_index[ch] for _, _, ch in turn.play.placed]
        elif ev.kind == EXCHANGE:
            used = list(parse_rack(rules, ev.tiles))
        else:
            used = []
        for tile in used:
            rack.remove(tile)
    except (InputError, ValueError):
        return None
    return tuple(sorted(rack))


def read_gcg(path: str | Path) -> Game:
    """Read a GCG file, honouring #character-encoding (UTF-8, falling back to Latin-1)."""
    text, encoding, guessed = decode_gcg_as(Path(path).read_bytes())
    return replace(parse_gcg(text, source=str(path)), encoding=encoding, guessed=guessed)


def decode_gcg(data: bytes) -> str:
    """GCG bytes as text; InputError for a binary file (a NUL byte), which no text
    encoding of a game record contains."""
    return decode_gcg_as(data)[0]


def decode_gcg_as(data: bytes) -> tuple[str, str, bool]:
    """(text, the encoding read with, whether it was a guess): the declared
    #character-encoding, else UTF-8, else Latin-1, which reads any bytes and so is a guess
    (a cp1251 record without its line reads as Latin-1 letters)."""
    if b"\x00" in data:
        raise InputError("a binary file, not a GCG game record (it holds NUL bytes)")
    head = data[:4096].decode("ascii", "replace")
    m = re.search(r"#character-encoding\s+(\S+)", head)
    declared = m.group(1).lower() if m else None
    for encoding in (declared or "utf-8", "utf-8", "latin-1"):
        try:
            text = data.decode(encoding).lstrip("\ufeff")
        except (LookupError, UnicodeDecodeError):
            continue
        return text, encoding, declared is None and encoding == "latin-1"
    return data.decode("latin-1"), "latin-1", True  # pragma: no cover - latin-1 reads any bytes


def parse_gcg(text: str, source: str = "<gcg>") -> Game:
    events: list[Event] = []
    placed: list[tuple[str, str, int]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, _, value = line[1:].partition(" ")
            placed.append((key, value.strip(), len(events)))
        elif line.startswith(">"):
            events.append(_parse_event(line, lineno, source))
        elif events or any(_PLAYER.fullmatch(key) for key, _, _ in placed):
            placed.append(("note", line, len(events)))  # free text continuing a note
    if not events:
        raise InputError(
            f"{source}: no moves, so not a GCG game record (moves are lines like "
            f"'>Name: RACK 8H WORD +score total')"
        )
    players, pragmas, notes = _remarks(placed)
    return Game(players, _assign_seats(players, events), pragmas, notes, source, tuple(placed))


_PLAYER = re.compile(r"player(\d+)")


def _remarks(placed) -> tuple[tuple[Player, ...], dict[str, str], tuple[str, ...]]:
    """The players (by number), pragmas (the last value of each) and notes that a
    record's `#` lines say."""
    players, pragmas, notes = {}, {}, []
    for key, value, _ in placed:
        m = _PLAYER.fullmatch(key)
        if m:
            nick, _, name = value.partition(" ")
            players[int(m.group(1))] = Player(nick, name.strip() or nick)
        elif key == "note":
            notes.append(value)
        else:
            pragmas[key] = value
    return tuple(players[k] for k in sorted(players)), pragmas, tuple(notes)


def _assign_seats(players: tuple[Player, ...], events: list[Event]) -> tuple[Event, ...]:
    """Give each event its player's seat. Nicks usually identify seats; when two players
    share a nick (Quackle writes 'NoName' for both), the running totals decide, and
    failing that the seat that did not move last."""
    seats: dict[str, list[int]] = {}
    for i, p in enumerate(players):
        seats.setdefault(p.nick, []).append(i)
    totals: dict[int, int] = {}
    out: list[Event] = []
    last = -1
    for ev in events:
        candidates = seats.get(ev.player)
        if candidates is None:  # a nick without a #player line: seat by first appearance
            candidates = seats[ev.player] = [len(players) + len(seats)]
        if len(candidates) == 1:
            seat = candidates[0]
        else:
            fits = [s for s in candidates if totals.get(s, 0) + ev.score == ev.total]
            if len(fits) == 1:
                seat = fits[0]
            else:
                others = [s for s in candidates if s != last]
                seat = others[0] if others else candidates[0]
        totals[seat] = ev.total
        last = seat
        out.append(replace(ev, player_index=seat))
    return tuple(out)


def _parse_event(line: str, lineno: int, source: str) -> Event:
    where = f"{source} line {lineno}"
    head, sep, rest = line[1:].partition(":")
    if not sep:
        raise InputError(f"{where}: move line without 'nick:': {line!r}")
    player = head.strip()
    tokens = rest.split()
    k = next(
        (
            i
            for i in range(len(tokens) - 1)
            if _SCORE.match(tokens[i]) and _TOTAL.match(tokens[i + 1])
        ),
        None,
    )
    if k is None:
        raise InputError(f"{where}: no '+score total' pair in {line!r}")
    score, total = int(tokens[k]), int(tokens[k + 1])
    body = tokens[:k]

    def event(kind: str, rack: str = "", **kw) -> Event:
        return Event(kind, player, rack, score, total, lineno, line, **kw)

    if not body:
        raise InputError(f"{where}: nothing between the nick and the score in {line!r}")
    last = body[-1]
    if last.startswith("(") and last.endswith(")"):
        inner = last[1:-1]
        rack = body[0] if len(body) > 1 else ""
        if inner.lower() == "challenge":
            return event(CHALLENGE_BONUS, rack)
        if inner.lower() == "time":
            return event(TIME_PENALTY, rack)
        return event(END_RACK, rack, tiles=inner)
    if len(body) >= 2 and _COORD.match(body[-2]):
        rack = body[0] if len(body) == 3 else ""
        return event(PLAY, rack, coordinate=body[-2], word=body[-1])
    if last == "--":
        return event(WITHDRAWN, body[0] if len(body) > 1 else "")
    if last == "-":
        return event(PASS, body[0] if len(body) > 1 else "")
    if last.startswith("-"):
        return event(EXCHANGE, body[0] if len(body) > 1 else "", tiles=last[1:])
    raise InputError(f"{where}: cannot read move {line!r}")


def write_gcg(game: Game) -> str:
    """The game as GCG text, one line per event. Pragmas, players and notes stand where
    the record read had them (`Game.placed`), a note after the move it comments on; a
    game whose pragmas, players or notes were changed since gets them all at the top
    (character encoding first). parse_gcg reads it back to the same game."""
    placed = game.placed if _placed_holds(game) else _at_top(game)
    if not any(key == "character-encoding" for key, _, _ in placed):
        placed = (("character-encoding", "UTF-8", 0), *placed)
    lines = []
    remarks = iter(placed)
    remark = next(remarks, None)
    for moves in range(len(game.events) + 1):
        while remark is not None and remark[2] <= moves:
            lines.append(f"#{remark[0]} {remark[1]}".rstrip())
            remark = next(remarks, None)
        if moves < len(game.events):
            lines.append(_event_line(game.events[moves]))
    return "\n".join(lines) + "\n"


def _placed_holds(game: Game) -> bool:
    """Whether `game.placed` still says what the game's players, pragmas and notes say."""
    said = (game.players, game.pragmas, game.notes)
    return bool(game.placed) and _remarks(game.placed) == said


def _at_top(game: Game) -> tuple[tuple[str, str, int], ...]:
    lines = [("character-encoding", "UTF-8", 0)] if "character-encoding" not in game.pragmas else []
    lines += [(key, value, 0) for key, value in game.pragmas.items()]
    lines += [(f"player{i}", f"{p.nick} {p.name}", 0) for i, p in enumerate(game.players, 1)]
    lines += [("note", note, 0) for note in game.notes]
    return tuple(lines)


def _event_line(ev: Event) -> str:
    body = {
        PLAY: f"{ev.rack} {ev.coordinate} {ev.word}",
        EXCHANGE: f"{ev.rack} -{ev.tiles}",
        PASS: f"{ev.rack} -",
        WITHDRAWN: f"{ev.rack} --",
        CHALLENGE_BONUS: f"{ev.rack} (challenge)",
        TIME_PENALTY: f"{ev.rack} (time)",
        END_RACK: f"{ev.rack} ({ev.tiles})",
    }[ev.kind].strip()
    return f">{ev.player}: {body} {ev.score:+d} {ev.total}"


def replay(game: Game, rules: Ruleset) -> Iterator[Turn]:
    """Each move line with the board before it; plays are parsed and scored.

    A withdrawn phony ('--') takes the tiles of that player's last play off the board.
    """
    board = Board.empty(rules)
    last_play: dict[int, Play] = {}
    for ev in game.events:
        if ev.kind == PLAY:
            try:
                parse_coordinate(ev.coordinate, rules)
                play = parse_play(board, f"{ev.coordinate} {ev.word}")
            except InputError as exc:
                raise InputError(f"{game.source} line {ev.line}: {exc}{_hint(game)}") from None
            score = score_play(board, play)
            yield Turn(ev, board, play, score)
            board = board.apply(play.placed)
            last_play[ev.player_index] = play
            continue
        yield Turn(ev, board)
        if ev.kind == WITHDRAWN:
            phony = last_play.pop(ev.player_index, None)
            if phony is None:
                raise InputError(
                    f"{game.source} line {ev.line}: {ev.player} withdraws a play they never made"
                )
            board = _remove(board, phony)


def _hint(game: Game) -> str:
    return encoding_hint(game.encoding) if game.guessed else ""


def encoding_hint(encoding: str) -> str:
    """What to do when a record naming no encoding was read as `encoding` (a guess) and
    its letters make no sense: said after the error."""
    return (
        f" (the file is not UTF-8 and names no encoding, so it was read as {encoding}; "
        "if it is in another, e.g. cp1251 for a Russian record, add "
        "'#character-encoding cp1251' as its first line)"
    )


def _remove(board: Board, play: Play) -> Board:
    cells = bytearray(board.cells)
    for r, c, _ in play.placed:
        cells[r * board.rules.cols + c] = 0
    return Board(board.rules, cells)
