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
    """RQ serializer protocol: dumps(obj) -> bytes, loads(bytes) -> obj."""

    @staticmethod
    def dumps(obj: Any) -> bytes:
        return msgpack.packb(obj, use_bin_type=True)

    @staticmethod
    def loads(data: bytes) -> Any:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
