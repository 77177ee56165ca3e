"""The project's documents, reachable from an installed wheel: `anchor docs NAME` prints
one. A wheel carries them in anchor/client/docs/ (setup.py copies them there); a source
checkout reads them where they are written."""

from __future__ import annotations

from pathlib import Path

from anchor.engine import AnchorError

# name -> the file in the repository, and in a wheel's anchor/client/docs/
DOCS = {
    "readme": ("README.md", "what Anchor is, setting it up, the commands"),
    "design": ("DESIGN.md", "the layout, the data flow, the lexicon format, the public API"),
    "notes": ("DESIGN-NOTES.md", "the decisions made since the design, and why"),
    "protocol": ("PROTOCOL.md", "the jobs' wire format, the limits, Redis users, failure codes"),
    "lexica": ("dictionaries/README.md", "the pinned word lists: sources, licences, checks"),
    "benchmarks": ("BENCHMARKS.md", "speed against MAGPIE, per CPU, and how it was measured"),
}
PACKAGED = Path(__file__).resolve().parent / "docs"
SOURCE = Path(__file__).resolve().parents[1]


def doc_path(name: str) -> Path:
    """The file of a document by its name (`protocol`, or its file name `PROTOCOL.md`)."""
    key = name.lower().removesuffix(".md").replace("design-notes", "notes")
    if key not in DOCS:
        raise AnchorError(f"no document named {name!r}: one of {', '.join(DOCS)}")
    relative = DOCS[key][0]
    for path in (PACKAGED / relative, SOURCE / relative):
        if path.is_file():
            return path
    raise AnchorError(
        f"{relative} is not installed with this copy of anchor (looked in {PACKAGED})"
    )


def cmd_docs(args) -> int:
    """List the documents, print one, or with --path say where it is."""
    if args.name is None:
        width = max(len(n) for n in DOCS)
        for name, (relative, about) in DOCS.items():
            print(f"{name:<{width}}  {about} ({relative})")
        print("\n`anchor docs NAME` prints one; --path says where it is")
        return 0
    path = doc_path(args.name)
    print(path if args.path else path.read_text(encoding="utf-8"), end="\n" if args.path else "")
    return 0
