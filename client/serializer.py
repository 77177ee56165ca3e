"""msgpack for RQ's job data and results; never pickle.

RQ stores a job as (function name, instance, args, kwargs): msgpack turns the tuple into a
list, which RQ unpacks just the same. A value msgpack cannot represent raises TypeError
here; RQ would then store a placeholder string as the result, so worker.jobs packs every
result itself first and fails the job loudly instead.
"""

from __future__ import annotations

from typing import Any

import msgpack


class MsgpackSerializer:
    """RQ serializer protocol: dumps(obj) -> bytes, loads(bytes) -> obj.

    `pack_result` packs a job's result inside the job, where a TypeError fails the job
    loudly, and keeps the bytes: RQ's own dumps of that same object then returns them
    instead of packing a second time (one slot; jobs run one at a time in a worker)."""

    _packed: tuple[Any, bytes] | None = None

    @classmethod
    def pack_result(cls, obj: Any) -> bytes:
        data = msgpack.packb(obj, use_bin_type=True)
        cls._packed = (obj, data)
        return data

    @classmethod
    def dumps(cls, obj: Any) -> bytes:
        packed = cls._packed
        if packed is not None and packed[0] is obj:
            return packed[1]
        return msgpack.packb(obj, use_bin_type=True)

    @staticmethod
    def loads(data: bytes) -> Any:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
