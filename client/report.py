"""HTML reports of annotated games: one page per game and an index. A game's page is
what a player reviewing it expects (Woogles' and Quackle's analysers): the move list,
marked where a better play was there; one board that follows the selected move (the play
made filled in, the best play or the alternative clicked outlined); and for that move the
alternatives with leaves, equities, simulated spread ± its standard error and win %, the
chance of winning, the running score and where the unseen tiles are. Jinja2 templates
(client/templates, autoescaped); self-contained: inline CSS, SVG and a small script
(templates/board.js), no external assets, so a page opens offline."""

from __future__ import annotations

import functools
import math
from html import escape

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from anchor.engine import Board, Ruleset
from anchor.engine.board import cell_letter

CELL = 26
PREMIUM_FILL = {
    ".": "#f4f1ea",
    "d": "#bcd9f2",
    "t": "#5b9bd5",
    "q": "#2f5f9e",
    "D": "#f6c1bb",
    "T": "#e0604f",
    "Q": "#a8322a",
}
PREMIUM_LABEL = {"d": "DL", "t": "TL", "q": "QL", "D": "DW", "T": "TW", "Q": "QW"}
PREMIUM_NAME = {
    "DL": "double letter",
    "TL": "triple letter",
    "QL": "quadruple letter",
    "DW": "double word",
    "TW": "triple word",
    "QW": "quadruple word",
}
KINDS = {
    "challenge_bonus": "challenge bonus",
    "end_rack": "tiles left at the end",
    "withdrawn": "play withdrawn after a challenge",
    "time_penalty": "time penalty",
}
_ENV = Environment(
    loader=PackageLoader("anchor.client", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


PAD = 18  # room for the row and column labels


@functools.cache
def _frame(rules: Ruleset) -> tuple[str, tuple[str, ...]]:
    """What every board of a ruleset draws the same: the opening with the row and column
    labels, and each square as it looks empty (premium colour and label), by cell."""
    rows, cols = rules.rows, rules.cols
    w, h = PAD + cols * CELL + 2, PAD + rows * CELL + 2
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="board">'
    ]
    for c in range(cols):
        out.append(
            f'<text x="{PAD + c * CELL + CELL / 2}" y="12" font-size="10" '
            f'text-anchor="middle">{chr(65 + c)}</text>'
        )
    for r in range(rows):
        out.append(
            f'<text x="9" y="{PAD + r * CELL + CELL / 2 + 4}" font-size="10" '
            f'text-anchor="middle">{r + 1}</text>'
        )
    empty = tuple(_square_svg(rules, idx, 0, None, None) for idx in range(rows * cols))
    return "".join(out), empty


def _square(x: int, y: int, fill: str) -> str:
    return (
        f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
        f'stroke="#fff" stroke-width="1"/>'
    )


def board_svg(rules: Ruleset, cgp: str, made: list, best: list) -> str:
    """The board before a turn, the tiles of the play made filled in amber and the best
    play's tiles outlined in green (both shown where they coincide)."""
    board = Board.from_cgp(rules, cgp)
    opening, empty = _frame(rules)
    out = [opening]
    made_at = {(r, c): ch for r, c, ch in made}
    best_at = {(r, c): ch for r, c, ch in best}
    cells, cols = board.cells, rules.cols
    for idx, cell in enumerate(cells):
        at = divmod(idx, cols)
        if at in made_at or at in best_at:
            out.append(_square_svg(rules, idx, cell, made_at.get(at), best_at.get(at)))
        elif cell:
            out.append(_square_svg(rules, idx, cell, None, None))
        else:
            out.append(empty[idx])
    out.append("</svg>")
    return "".join(out)


@functools.lru_cache(maxsize=1 << 14)
def _square_svg(rules: Ruleset, idx: int, cell: int, made: str | None, best: str | None) -> str:
    """One square: its premium, or the tile on it (`cell`), or the tile the play made puts
    there; outlined when the best play puts a tile there. The same few hundred squares
    recur on every board of a game, hence the cache."""
    r, c = divmod(idx, rules.cols)
    x, y = PAD + c * CELL, PAD + r * CELL
    letter = cell_letter(rules, cell) if cell else None
    fill = PREMIUM_FILL[rules.premiums[r][c]]
    if letter:
        fill = "#e9c98f"
    if made is not None:
        fill, letter = "#ffc928", made
    out = [_square(x, y, fill)]
    label = PREMIUM_LABEL.get(rules.premiums[r][c])
    if label and not letter and best is None:
        out.append(
            f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 3}" font-size="8" '
            f'text-anchor="middle" fill="#333" opacity="0.75">{label}</text>'
        )
    if best is not None:
        out.append(
            f'<rect x="{x + 2}" y="{y + 2}" width="{CELL - 4}" height="{CELL - 4}" '
            f'fill="none" stroke="#1b7f2a" stroke-width="2.5" stroke-dasharray="4 2"/>'
        )
        if letter is None:
            out.append(_letter(x, y, best, "#1b7f2a"))
            return "".join(out)
    if letter:
        out.append(_letter(x, y, letter, "#7a1f1f" if letter.islower() else "#222"))
        if not letter.islower() and rules.values.get(letter):
            out.append(
                f'<text x="{x + CELL - 3}" y="{y + CELL - 3}" font-size="7" '
                f'text-anchor="end" fill="#444">{rules.values[letter]}</text>'
            )
    return "".join(out)


def _letter(x: float, y: float, letter: str, colour: str) -> str:
    return (
        f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 5}" font-size="14" font-weight="600" '
        f'text-anchor="middle" fill="{colour}">{escape(letter)}</text>'
    )


def game_page(title: str, rules: Ruleset, annotation: dict) -> str:
    """One game's page: the summary, one board that follows the move selected in the move
    list (drawn by the page's script from each turn's board; the first is drawn here too,
    so the page shows a board without scripts), and each turn's details."""
    players = annotation["players"]
    running = [0] * len(players)
    turns, boards, made, alts, captions = [], {}, {}, {}, {}
    for turn in annotation["turns"]:
        running[turn["player"]] = turn["recorded_total"]
        view = dict(turn)
        index = turn["index"]
        view["running"] = [(p["name"], total) for p, total in zip(players, running, strict=True)]
        view["label"], view["quality"] = _move_label(turn)
        boards[index] = _rows_text(Board.from_cgp(rules, turn["board"]))
        made[index] = turn.get("placed", [])
        captions[index] = f"Turn {index + 1}, the board before it: {turn['nick']} {view['label']}"
        if turn.get("analysed"):
            view["rows"] = _rows(turn)
            alts[index] = [row["placed"] for row in view["rows"] if not row.get("gap")]
            by_equity = turn.get("rank_by") in ("equity", "endgame")
            view["shown_rank"] = turn.get("equity_rank") if by_equity else turn.get("rank")
        turns.append(view)
    analysed = [t["index"] for t in turns if t.get("analysed")]
    first = analysed[0] if analysed else (turns[0]["index"] if turns else 0)
    used = sorted(
        {ch for row in rules.premiums for ch in row if ch in PREMIUM_LABEL}, key="dtqDTQ".index
    )
    data = {
        "rows": rules.rows,
        "cols": rules.cols,
        "premiums": list(rules.premiums),
        "fills": PREMIUM_FILL,
        "labels": PREMIUM_LABEL,
        "values": dict(rules.values),
        "boards": boards,
        "made": made,
        "alts": alts,
        "captions": captions,
        "first": first,
    }
    first_svg = ""
    if turns:
        shown = next(t for t in annotation["turns"] if t["index"] == first)
        outline = alts[first][0] if alts.get(first) else []
        svg = board_svg(rules, shown["board"], shown.get("placed", []), outline)
        first_svg = Markup(svg.replace("<svg ", '<svg id="board" ', 1))
    return _ENV.get_template("game.html").render(
        title=title,
        rules=rules,
        lexicon=annotation.get("lexicon"),
        summary=list(zip(annotation["summary"], players, strict=True)),
        ranked_by_equity=any(t.get("rank_by") == "equity" for t in annotation["turns"]),
        simulated=any("sim" in t for t in annotation["turns"]),
        premium_legend=[(PREMIUM_LABEL[ch], PREMIUM_FILL[ch]) for ch in used],
        premium_names=PREMIUM_NAME,
        kinds=KINDS,
        turns=turns,
        data=data,
        first=first,
        first_svg=first_svg,
        captions=captions,
    )


def _rows_text(board: Board) -> str:
    """The board as rows of letters ('.' empty, a blank lowercase), joined by '/'."""
    rules, cells, cols = board.rules, board.cells, board.rules.cols
    return "/".join(
        "".join(
            cell_letter(rules, cell) if cell else "." for cell in cells[r * cols : (r + 1) * cols]
        )
        for r in range(rules.rows)
    )


def _move_label(turn: dict) -> tuple[str, str]:
    """The move list's text of a turn and its mark: `best` (nothing better was there),
    `miss` (something was), `phony` (words not in the lexicon) or '' (not judged)."""
    if turn["kind"] == "end_rack":
        return f"({turn.get('tiles', '')}) {turn['recorded_score']:+d}", ""
    played = turn.get("played")
    if played:
        label = f"{played} {turn.get('score', turn['recorded_score'])}"
    else:
        label = f"{KINDS.get(turn['kind'], turn['kind'])} {turn['recorded_score']:+d}"
    if turn.get("invalid_words"):
        return label, "phony"
    if not turn.get("analysed"):
        return label, ""
    endgame = turn.get("endgame")
    if endgame is not None and endgame.get("value_lost") is not None:
        lost = endgame["value_lost"]
    elif turn.get("equity_given_up") is not None:
        lost = turn["equity_given_up"]
    else:
        lost = turn["given_up"]
    return label, "best" if lost == 0 else "miss"


def _rows(turn: dict) -> list[dict]:
    """The table of alternatives, best first, with the play made marked; when it is not
    among them, a gap and then the play made with its rank."""
    sims = turn.get("sim", ())
    simulated = {
        s[0]: {"mean": s[1], "se": s[2] / math.sqrt(s[3]) if s[3] else 0.0, "win": s[5]}
        for s in sims
    }
    sim_best = sims[0][0] if sims else None
    equities = turn.get("best_equities") or [None] * len(turn["best"])
    leaves = turn.get("best_leaves") or [None] * len(turn["best"])
    rows = []
    made_shown = False
    for i, ((notation, score, placed, bingo), equity, leave) in enumerate(
        zip(turn["best"], equities, leaves, strict=False), 1
    ):
        made = notation == turn["played"]
        made_shown |= made
        rows.append(
            {"rank": i, "play": notation, "score": score, "bingo": bingo, "leave": leave,
             "equity": equity, "made": made, "sim": simulated.get(notation),
             "sim_best": notation == sim_best, "placed": placed, "alt": len(rows)}
        )  # fmt: skip
    if not made_shown:
        by_equity = turn.get("rank_by") in ("equity", "endgame")
        rank = turn.get("equity_rank") if by_equity else turn.get("rank")
        rows.append({"gap": True})
        rows.append(
            {"rank": rank, "play": turn["played"], "score": turn["score"],
             "bingo": bool(turn.get("bingo")), "leave": turn.get("leave"),
             "equity": turn.get("equity"), "made": True, "sim": simulated.get(turn["played"]),
             "sim_best": turn["played"] == sim_best, "placed": turn.get("placed", []),
             "alt": len(rows) - 1}
        )  # fmt: skip
    return rows


def index_page(entries: list[dict]) -> str:
    """entries: {"name", "page", "players", "summary"} or {"name", "error"}."""
    view = [
        e if "error" in e else {**e, "people": list(zip(e["players"], e["summary"], strict=True))}
        for e in entries
    ]
    return _ENV.get_template("index.html").render(
        title="Anchor annotation",
        entries=view,
        done=sum(1 for e in entries if "error" not in e),
    )
