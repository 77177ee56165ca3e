"""HTML reports of annotated games: one page per game (an SVG board for every turn with
the play made and the best play marked, the table of alternatives with leaves and
equities, the running score and the unseen tiles) and an index. Rendered with Jinja2
templates (client/templates: autoescaped, readable as HTML); self-contained: inline CSS
and SVG, no scripts, no external assets, so a page opens offline."""

from __future__ import annotations

import functools
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
    """One game's page."""
    players = annotation["players"]
    running = [0] * len(players)
    turns = []
    for turn in annotation["turns"]:
        running[turn["player"]] = turn["recorded_total"]
        view = dict(turn)
        view["running"] = [(p["name"], total) for p, total in zip(players, running, strict=True)]
        if turn.get("analysed"):
            best = turn["best"]
            view["svg"] = Markup(
                board_svg(rules, turn["board"], turn.get("placed", []), best[0][2] if best else [])
            )
            view["rows"] = _rows(turn)
            by_equity = turn.get("rank_by") in ("equity", "endgame")
            view["shown_rank"] = turn.get("equity_rank") if by_equity else turn.get("rank")
        turns.append(view)
    used = sorted(
        {ch for row in rules.premiums for ch in row if ch in PREMIUM_LABEL}, key="dtqDTQ".index
    )
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
    )


def _rows(turn: dict) -> list[dict]:
    """The table of alternatives, best first, with the play made marked; when it is not
    among them, a gap and then the play made with its rank."""
    simulated = {s[0]: s[1] for s in turn.get("sim", ())}
    equities = turn.get("best_equities") or [None] * len(turn["best"])
    leaves = turn.get("best_leaves") or [None] * len(turn["best"])
    rows = []
    made_shown = False
    for i, ((notation, score, _placed, bingo), equity, leave) in enumerate(
        zip(turn["best"], equities, leaves, strict=False), 1
    ):
        made = notation == turn["played"]
        made_shown |= made
        rows.append(
            {"rank": i, "play": notation, "score": score, "bingo": bingo, "leave": leave,
             "equity": equity, "made": made, "sim": simulated.get(notation)}
        )  # fmt: skip
    if not made_shown:
        by_equity = turn.get("rank_by") in ("equity", "endgame")
        rank = turn.get("equity_rank") if by_equity else turn.get("rank")
        rows.append({"gap": True})
        rows.append(
            {"rank": rank, "play": turn["played"], "score": turn["score"],
             "bingo": bool(turn.get("bingo")), "leave": turn.get("leave"),
             "equity": turn.get("equity"), "made": True, "sim": simulated.get(turn["played"])}
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
