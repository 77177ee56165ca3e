"""PROTOCOL.md's field tables, made from the declarations so that the document cannot drift
from the code: `python -m anchor.client.protocol.doc` rewrites every table between
`<!-- table: NAME -->` and `<!-- /table -->`; `--check` only says whether one is stale."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .. import protocol as p
from .acl import PLACEHOLDERS, acl_file
from .wire import Declared

REQUESTS: dict[str, type[Declared]] = {
    "analyze": p.Request,
    "position": p.Position,
    "options": p.Options,
    "selfplay": p.SelfPlayRequest,
    "annotate": p.AnnotateRequest,
    "simulate": p.SimulateRequest,
    "endgame": p.EndgameRequest,
    "preendgame": p.PreendgameRequest,
    "infer": p.InferRequest,
}
RESULTS: dict[str, type[Declared]] = {
    "analyze-result": p.Analysis,
    "timings": p.Timings,
    "batch-result": p.Batch,
    "selfplay-result": p.SelfPlayResult,
    "game": p.Game,
    "annotate-result": p.AnnotateResult,
    "simulate-result": p.SimulateResult,
    "endgame-result": p.EndgameResult,
    "preendgame-result": p.PreendgameResult,
    "infer-result": p.InferResult,
    "error": p.Failure,
}
OTHERS = ("users",)  # the ACL users (acl.py), as deploy/users.acl holds them
_BLOCK = re.compile(r"(<!-- table: ([\w-]+) -->\n)(.*?)(<!-- /table -->)", re.S)


def table(name: str) -> str:
    if name == "users":
        return f"```\n{acl_file(PLACEHOLDERS)}```"
    if name in REQUESTS:
        return REQUESTS[name].table()
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for field, spec, _ in RESULTS[name].wire_fields():
        rows.append(f"| `{field}` | {spec.type_name()} | {spec.doc} |")
    return "\n".join(rows)


def render(text: str) -> str:
    """`text` with every marked table made anew; KeyError for a name nothing declares."""
    return _BLOCK.sub(lambda m: f"{m[1]}{table(m[2])}\n{m[4]}", text)


def marked(text: str) -> set[str]:
    return {m[2] for m in _BLOCK.finditer(text)}


def main(argv: list[str]) -> int:
    path = Path(argv[-1]) if argv and not argv[-1].startswith("-") else Path("PROTOCOL.md")
    text = path.read_text(encoding="utf-8")
    fresh = render(text)
    if "--check" in argv:
        if fresh != text:
            print(f"{path}: a field table differs from the declarations; run "
                  "python -m anchor.client.protocol.doc", file=sys.stderr)  # fmt: skip
            return 1
        return 0
    path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
