"""HTML reports of annotated games: one page per game (an SVG board for every turn with
the play made and the best play marked, and the table of alternatives) and an index.
Self-contained: inline CSS and SVG, no scripts, no external assets, so it opens offline."""

from __future__ import annotations

from html import escape

from anchor.engine import Board, Ruleset

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
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em} h2{font-size:1.1em;margin-top:1.6em;border-top:1px solid #ddd;padding-top:.8em}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
th{background:#f0f0f0} .num{text-align:right}
.turn{display:flex;gap:1.5em;flex-wrap:wrap;align-items:flex-start}
.made{background:#ffe39a} .bad{color:#b00020;font-weight:600} .good{color:#1b5e20}
.legend span{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 .3em 0 1em}
"""


def board_svg(rules: Ruleset, cgp: str, made: list, best: list) -> str:
    """The board before a turn, the tiles of the play made filled in amber and the best
    play's tiles outlined in green (both shown where they coincide)."""
    board = Board.from_cgp(rules, cgp)
    rows, cols = rules.rows, rules.cols
    pad = 18
    w, h = pad + cols * CELL + 2, pad + rows * CELL + 2
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="board">'
    ]
    for c in range(cols):
        out.append(
            f'<text x="{pad + c * CELL + CELL / 2}" y="12" font-size="10" '
            f'text-anchor="middle">{chr(65 + c)}</text>'
        )
    for r in range(rows):
        out.append(
            f'<text x="9" y="{pad + r * CELL + CELL / 2 + 4}" font-size="10" '
            f'text-anchor="middle">{r + 1}</text>'
        )
    made_at = {(r, c): ch for r, c, ch in made}
    best_at = {(r, c): ch for r, c, ch in best}
    for r in range(rows):
        for c in range(cols):
            x, y = pad + c * CELL, pad + r * CELL
            letter = board.letter_at(r, c)
            fill = PREMIUM_FILL[rules.premiums[r][c]]
            if letter:
                fill = "#e9c98f"
            if (r, c) in made_at:
                fill, letter = "#ffc928", made_at[(r, c)]
            out.append(
                f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
                f'stroke="#fff" stroke-width="1"/>'
            )
            if (r, c) in best_at:
                out.append(
                    f'<rect x="{x + 2}" y="{y + 2}" width="{CELL - 4}" height="{CELL - 4}" '
                    f'fill="none" stroke="#1b7f2a" stroke-width="2.5" stroke-dasharray="4 2"/>'
                )
                if letter is None:
                    letter = best_at[(r, c)]
                    out.append(_letter(x, y, letter, "#1b7f2a"))
                    continue
            if letter:
                out.append(_letter(x, y, letter, "#7a1f1f" if letter.islower() else "#222"))
    out.append("</svg>")
    return "".join(out)


def _letter(x: float, y: float, letter: str, colour: str) -> str:
    return (
        f'<text x="{x + CELL / 2}" y="{y + CELL / 2 + 5}" font-size="14" font-weight="600" '
        f'text-anchor="middle" fill="{colour}">{escape(letter)}</text>'
    )


def game_page(title: str, rules: Ruleset, annotation: dict) -> str:
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        "<p><a href='index.html'>All games</a></p>",
        _summary_table(annotation["summary"], annotation["players"]),
        "<p class='legend'>Board: <span style='background:#ffc928'></span>play made"
        "<span style='border:2px dashed #1b7f2a'></span>best play</p>",
    ]
    for turn in annotation["turns"]:
        parts.append(_turn(rules, turn))
    parts.append("</body></html>")
    return "\n".join(parts)


def _summary_table(summary: list[dict], players: list[dict]) -> str:
    rows = [
        "<table><tr><th>player</th><th>final</th><th>turns analysed</th><th>points given up"
        "</th><th>average given up</th><th>best plays found</th><th>bingos</th>"
        "<th>bingos missed</th><th>phonies</th><th>score slips in the record</th></tr>"
    ]
    for s, pl in zip(summary, players, strict=True):
        cells = [
            f"{s['final']}",
            f"{s['analysed']}/{s['turns']}",
            f"{s['given_up']}",
            f"{s['average_given_up']:.2f}",
            f"{s['best_plays']}",
            f"{s['bingos']}",
            f"{s['bingos_missed']}",
            f"{s['phonies']}",
            f"{s['score_mismatches']}",
        ]
        rows.append(
            f"<tr><td>{escape(pl['name'])}</td>"
            + "".join(f"<td class='num'>{c}</td>" for c in cells)
            + "</tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _turn(rules: Ruleset, t: dict) -> str:
    head = (
        f"<h2 id='turn-{t['index']}'>{escape(t['nick'])}: {escape(t['rack'] or '(rack unknown)')}"
    )
    if "played" not in t:
        detail = {
            "challenge_bonus": "challenge bonus",
            "end_rack": "tiles left at the end",
            "withdrawn": "play withdrawn after a challenge",
            "time_penalty": "time penalty",
        }.get(t["kind"], t["kind"])
        return f"{head} — {escape(detail)} {t['recorded_score']:+d}</h2>"
    head += f" — {escape(t['played'])} {t['score']}"
    if t.get("score_matches") is False:
        head += f" <span class='bad'>(recorded {t['recorded_score']})</span>"
    head += "</h2>"
    notes = []
    if t.get("invalid_words"):
        notes.append(
            f"<span class='bad'>not in the lexicon: {escape(', '.join(t['invalid_words']))}</span>"
        )
    if not t.get("analysed"):
        notes.append(escape(t.get("why", "not analysed")))
        return head + "<p>" + " · ".join(notes) + "</p>"
    rank = t["rank"]
    notes.append(
        f"rank {rank} of {t['total_plays']} plays" if rank else f"{t['total_plays']} legal plays"
    )
    notes.append(
        f"<span class='{'good' if t['given_up'] == 0 else 'bad'}'>"
        f"{t['given_up']} points given up</span>"
    )
    if "equity_given_up" in t:
        notes.append(f"equity {t['equity']:.1f}, {t['equity_given_up']:.1f} equity given up")
    if t["bingo_available"] and not t.get("bingo"):
        notes.append("<span class='bad'>bingo missed</span>")
    best = t["best"]
    svg = board_svg(rules, t["board"], t.get("placed", []), best[0][2] if best else [])
    table = ["<table><tr><th>#</th><th>play</th><th class='num'>score</th></tr>"]
    for i, (notation, score, _placed, bingo) in enumerate(best, 1):
        cls = " class='made'" if notation == t["played"] else ""
        table.append(
            f"<tr{cls}><td class='num'>{i}</td><td>{escape(notation)}"
            f"{' (bingo)' if bingo else ''}</td><td class='num'>{score}</td></tr>"
        )
    table.append("</table>")
    return (
        head
        + "<p>"
        + " · ".join(notes)
        + "</p><div class='turn'>"
        + svg
        + "<div>"
        + "".join(table)
        + "</div></div>"
    )


def index_page(entries: list[dict]) -> str:
    """entries: {"name", "page", "players", "summary"} or {"name", "error"}."""
    rows = [
        "<table><tr><th>game</th><th>players (final score, points given up, bingos missed)"
        "</th></tr>"
    ]
    for e in entries:
        if "error" in e:
            rows.append(
                f"<tr><td>{escape(e['name'])}</td><td class='bad'>not annotated: "
                f"{escape(e['error'])}</td></tr>"
            )
            continue
        people = "; ".join(
            f"{escape(p['name'])} ({s['final']}, {s['given_up']}, {s['bingos_missed']})"
            for p, s in zip(e["players"], e["summary"], strict=True)
        )
        rows.append(
            f"<tr><td><a href='{escape(e['page'])}'>{escape(e['name'])}</a></td>"
            f"<td>{people}</td></tr>"
        )
    rows.append("</table>")
    done = sum(1 for e in entries if "error" not in e)
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Anchor annotation"
        f"</title><style>{CSS}</style></head><body><h1>Annotated games</h1>"
        f"<p>{done} of {len(entries)} records annotated.</p>" + "".join(rows) + "</body></html>"
    )
