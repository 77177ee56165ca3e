"""Seeded shuffles done in the C core exactly as Python's random.Random(seed).shuffle does
them (engine/shuffle.c), so that a seed's game or playout draws the same tiles whichever
does the shuffling, without the ~30 us of Python a shuffle of a bag costs."""

from __future__ import annotations

import hashlib

from ._movegen import shuffled


def seed_key(seed: int | str) -> bytes:
    """A seed as CPython's random.Random seeds from it (version 2): a str as the big-endian
    int of its UTF-8 bytes followed by their SHA-512, an int as its absolute value; that
    int as little-endian 32-bit words, at least one (the key engine/shuffle.c takes)."""
    if isinstance(seed, str):
        raw = seed.encode()
        seed = int.from_bytes(raw + hashlib.sha512(raw).digest(), "big")
    n = abs(seed)
    return n.to_bytes(max(4, (n.bit_length() + 31) // 32 * 4), "little")


def shuffle_tiles(seed: int | str, tiles: bytes) -> bytes:
    """`tiles` in the order random.Random(seed).shuffle(list(tiles)) leaves them."""
    return shuffled(seed_key(seed), tiles)
