"""KWG graphs reshaped at random: node lists as a builder would never lay them out (lists
shared anywhere, letters and word ends moved), for tests of what is read off any graph
that passes the check. Plain module: tests/sanitized_run.py imports it too."""

from __future__ import annotations

import random

from anchor.engine.lexicon import ACCEPTS, ARC_MASK

TILE_SHIFT = 24


def reshape(nodes: list[int], rng: random.Random, letters: int = 26) -> list[int]:
    """A copy of `nodes` (KWG words) with one to three nodes past the two roots changed:
    a new letter, the word end flag flipped, or the arc pointed at another list start (or
    none). Many results still pass the check; the rest are refused."""
    starts = sorted({n & ARC_MASK for n in nodes if n & ARC_MASK})
    mutated = list(nodes)
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(2, len(mutated))
        kind = rng.randrange(3)
        if kind == 0:
            mutated[i] = (mutated[i] & ((1 << TILE_SHIFT) - 1)) | (
                rng.randrange(1, letters + 1) << TILE_SHIFT
            )
        elif kind == 1:
            mutated[i] ^= ACCEPTS
        else:
            mutated[i] = (mutated[i] & ~ARC_MASK) | rng.choice([0, *starts])
    return mutated
