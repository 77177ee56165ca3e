"""What a lexicon file is for: a small JSON sidecar beside the KWG (`NAME.kwg.json`).

KWG is the interchange format of wolges, MAGPIE and Macondo, so Anchor adds nothing to
the file itself. `Lexicon.save` writes the sidecar; `Lexicon.open` reads it when present
and refuses a ruleset whose alphabet is not the one the words were built for (Russian
words under English rules would otherwise give plays that are not words). A bare KWG
from elsewhere has no sidecar and opens with whatever ruleset the caller names.

    {"format": 1, "ruleset": "english", "alphabet": "ABC...Z", "words": 172820,
     "sha256": "<of the .kwg bytes>", "source": "...", "licence": "..."}
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import LexiconError
from .files import read_regular, write_atomically

FORMAT = 1
MAX_SIDECAR = 1 << 16


def sidecar_path(kwg: str | os.PathLike) -> Path:
    path = Path(kwg)
    return path.with_name(path.name + ".json")


@dataclass(frozen=True, slots=True)
class LexiconInfo:
    """The ruleset a KWG was built for, its word count and checksum, and where the words
    came from."""

    ruleset: str
    alphabet: str
    words: int
    sha256: str
    source: str = ""
    licence: str = ""

    def write(self, kwg: str | os.PathLike) -> Path:
        """Write the sidecar of `kwg` atomically."""
        path = sidecar_path(kwg)
        data = {"format": FORMAT, **asdict(self)}
        write_atomically(path, (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode())
        return path

    @classmethod
    def read(cls, kwg: str | os.PathLike) -> LexiconInfo | None:
        """The sidecar of `kwg`, None when it has none; LexiconError when it is unreadable."""
        path = sidecar_path(kwg)
        if not path.exists():
            return None
        raw = read_regular(path, "lexicon sidecar", LexiconError)
        if len(raw) > MAX_SIDECAR:
            raise LexiconError(f"lexicon sidecar {path} is larger than {MAX_SIDECAR} bytes")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise LexiconError(f"lexicon sidecar {path} is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise LexiconError(
                f"lexicon sidecar {path} is not format {FORMAT}; rebuild the lexicon "
                f"or delete the sidecar and pass the ruleset explicitly"
            )
        fields = {"ruleset": str, "alphabet": str, "words": int, "sha256": str}
        for name, kind in fields.items():
            if not isinstance(data.get(name), kind) or isinstance(data.get(name), bool):
                raise LexiconError(
                    f"lexicon sidecar {path}: {name!r} missing or not {kind.__name__}"
                )
        return cls(
            ruleset=data["ruleset"],
            alphabet=data["alphabet"],
            words=data["words"],
            sha256=data["sha256"],
            source=str(data.get("source", "")),
            licence=str(data.get("licence", "")),
        )

    def check_alphabet(self, kwg: str | os.PathLike, ruleset: str, alphabet: str) -> None:
        """LexiconError unless the words were built for `alphabet`."""
        if alphabet != self.alphabet and ruleset == self.ruleset:
            raise LexiconError(
                f"{sidecar_path(kwg)}: names the {ruleset} ruleset, whose alphabet is "
                f"{short_alphabet(alphabet)}, but gives the alphabet "
                f"{short_alphabet(self.alphabet)}: the sidecar was edited or damaged "
                "(`anchor lexicon install` writes a pinned lexicon's again)"
            )
        if alphabet != self.alphabet:
            theirs, ours = short_alphabet(self.alphabet), short_alphabet(alphabet)
            raise LexiconError(
                f"{os.fspath(kwg)} holds {self.ruleset} words (alphabet {theirs}); "
                f"it cannot be used with the {ruleset} ruleset (alphabet {ours}): "
                f"use a lexicon built for {ruleset}, or --ruleset {self.ruleset}"
            )


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 of `data` (a KWG's bytes)."""
    import hashlib  # here, not at the top: OpenSSL's load is a tenth of a CLI start

    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    import hashlib  # here, not at the top: OpenSSL's load is a tenth of a CLI start

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def short_alphabet(alphabet: str) -> str:
    """An alphabet as messages show it: whole when short, else its ends and its size."""
    return (
        alphabet
        if len(alphabet) <= 8
        else f"{alphabet[:3]}…{alphabet[-2:]}, {len(alphabet)} letters"
    )
