"""Anchor's lexica: the pinned word-list recipes, fetching and building them, and finding
a lexicon by name (ANCHOR_LEXICON_DIR, the checkout's dictionaries/build, the per-user
data folder). build/ holds built files and is not packaged."""

from .lexica import lexicon_path, open_lexicon

__all__ = ["lexicon_path", "open_lexicon"]
