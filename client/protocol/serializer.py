"""msgpack for RQ's job data and results; never pickle.

RQ stores a job as (function name, instance, args, kwargs): msgpack turns the tuple into a
list, which RQ unpacks just the same. A worker's job returns its result already packed
(`Packed`, so that a TypeError fails the job inside it rather than RQ storing a placeholder
string); `dumps` passes such bytes through as they are.
"""

from __future__ import annotations

from typing import Any

import msgpack


class Packed(bytes):
    """A value already packed as msgpack: `dumps` stores these bytes as they are."""


class MsgpackSerializer:
    """RQ serializer protocol: dumps(obj) -> bytes, loads(bytes) -> obj."""

    @staticmethod
    def dumps(obj: Any) -> bytes:
        if isinstance(obj, Packed):
            return bytes(obj)
        return msgpack.packb(obj, use_bin_type=True)

    @staticmethod
    def loads(data: bytes) -> Any:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
