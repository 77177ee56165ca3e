"""The engine's errors as protocol errors, in one place: each request kind names the code
its bad input gets (`bad_position`, `bad_game`...); a rack's faults are `bad_rack` in
every kind, as PROTOCOL.md says."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from anchor.client import protocol as p
from anchor.engine import InputError, RackError


@contextmanager
def engine_errors(code: str, rack: str = p.BAD_RACK) -> Iterator[None]:
    """Run engine calls; an InputError becomes ProtocolError `code` (a RackError `rack`:
    `bad_rack` but where the rack is part of something else, a game record), its message
    kept. ProtocolError and anything else pass through."""
    try:
        yield
    except RackError as exc:
        raise p.ProtocolError(rack, str(exc)) from None
    except InputError as exc:
        raise p.ProtocolError(code, str(exc)) from None
