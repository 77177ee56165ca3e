"""Declared wire shapes: one dataclass a request or result kind, its fields carrying how
they travel (`Wire`), from which decoding, encoding and PROTOCOL.md's tables follow.

Also what every shape shares: the protocol version, the error codes a client switches on,
ProtocolError, and strict, bounded msgpack packing. Nothing here knows a request kind.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass
from dataclasses import fields as dataclass_fields
from typing import Any, ClassVar

import msgpack

VERSION = 1
MAX_PAYLOAD = 1 << 20  # 1 MiB: a batch of MAX_BATCH CGP positions is ~200 KB
MAX_STRING = 4096  # a CGP is ~100-250 characters

# Error codes: stable strings a client can switch on (PROTOCOL.md explains each).
PAYLOAD_TOO_LARGE = "payload_too_large"
MALFORMED = "malformed"
BAD_ENCODING = "bad_encoding"
NOT_A_MAP = "not_a_map"
UNSUPPORTED_VERSION = "unsupported_version"
UNKNOWN_FIELD = "unknown_field"
MISSING_FIELD = "missing_field"
WRONG_TYPE = "wrong_type"
BAD_VALUE = "bad_value"
BATCH_TOO_LARGE = "batch_too_large"
UNKNOWN_RULESET = "unknown_ruleset"
UNKNOWN_LEXICON = "unknown_lexicon"
UNKNOWN_LEAVES = "unknown_leaves"
BAD_POSITION = "bad_position"
BAD_RACK = "bad_rack"
INTERNAL = "internal"
BAD_GAME = "bad_game"
LIMIT_TOO_LARGE = "limit_too_large"
RESULT_TOO_LARGE = "result_too_large"
TIMEOUT = "timeout"
ERROR_CODES = (
    PAYLOAD_TOO_LARGE,
    MALFORMED,
    BAD_ENCODING,
    NOT_A_MAP,
    UNSUPPORTED_VERSION,
    UNKNOWN_FIELD,
    MISSING_FIELD,
    WRONG_TYPE,
    BAD_VALUE,
    BATCH_TOO_LARGE,
    UNKNOWN_RULESET,
    UNKNOWN_LEXICON,
    BAD_POSITION,
    BAD_RACK,
    INTERNAL,
    BAD_GAME,
    UNKNOWN_LEAVES,
    LIMIT_TOO_LARGE,
    RESULT_TOO_LARGE,
    TIMEOUT,
)


class ProtocolError(Exception):
    """A request or result that breaks the protocol; `code` is one of ERROR_CODES."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def to_result(self) -> dict:
        return error_result(self.code, self.message)


def error_result(code: str, message: str) -> dict:
    return {"v": VERSION, "ok": False, "error": {"code": code, "message": message}}


@dataclass(frozen=True, slots=True)
class Wire:
    """How one field travels. `types`: the msgpack types it may have (a bool only where
    listed; a Declared class: a map of that shape). `low`..`high` (inclusive; `high` None:
    no upper bound): a number's value, a string's or an array's length. `choices`: the
    strings it may be. `items`: an array's elements. The field's Python default is its
    default on the wire."""

    types: tuple[type, ...]
    low: float | None = None
    high: float | None = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    items: Wire | None = None
    code: str = BAD_VALUE  # the error code of a value out of range

    def decode(self, name: str, value: Any, where: str) -> Any:
        """A value read off the wire -> its Python value (arrays as tuples), or ProtocolError.
        Types are matched exactly (what msgpack makes): a bool is not a number here."""
        kind = type(value)
        if kind not in self.types:
            if self.types[0] not in _PLAIN and kind is dict:  # a declared map
                return self.types[0].from_map(value, f"{where}{name}: ")
            wanted = "a map" if self.types[0] not in _PLAIN else self.type_name()
            raise ProtocolError(
                WRONG_TYPE, f"{where}'{name}' must be {wanted}, not {kind_of(value)}"
            )
        if kind is float and not math.isfinite(value):  # NaN passes every range check
            raise ProtocolError(
                BAD_VALUE, f"{where}'{name}' must be a finite number, not {value!r}"
            )
        if self.low is not None:
            size = len(value) if kind is str or kind is list else value
            if size < self.low or (self.high is not None and size > self.high):
                unit = {str: " characters long", list: " long"}.get(kind, "")
                span = f"{plain(self.low)}.." + ("" if self.high is None else plain(self.high))
                if self.high is None:
                    span = f">= {plain(self.low)}"
                raise ProtocolError(
                    self.code, f"{where}'{name}' must be {span}{unit}, not {str(size)[:40]}"
                )
        if self.choices and value not in self.choices:
            raise ProtocolError(
                BAD_VALUE,
                f"{where}'{name}' must be one of {', '.join(self.choices)}, not {value[:40]!r}",
            )
        if kind is list:
            return tuple(self.items.decode(f"{name}[{i}]", v, where) for i, v in enumerate(value))
        return value

    def read(self, value: Any) -> Any:
        """A value from a trusted peer (a worker's result): nested maps become their
        declared type; nothing else is checked or copied."""
        shape = self.types[0]
        if isinstance(shape, type) and issubclass(shape, Declared) and isinstance(value, dict):
            return shape.read(value)
        if self.items is not None and isinstance(value, list):
            return tuple(self.items.read(v) for v in value)
        return value

    def type_name(self) -> str:
        if float in self.types:
            return "a number"
        if self.items is not None:
            inner = self.items.type_name().removeprefix("a ").removeprefix("an ")
            first, _, rest = inner.partition(" of ")  # arrays of arrays of whole numbers
            return f"an array of {first}s" + (f" of {rest}" if rest else "")
        return " or ".join(_TYPE_NAMES.get(t, "a map") for t in self.types)

    def span(self) -> str:
        """The table's range column."""
        parts = []
        if self.low is not None:
            unit = " chars" if str in self.types else " long" if list in self.types else ""
            top = "" if self.high is None else thousands(self.high)
            parts.append(f"{thousands(self.low)}..{top}{unit}")
        if self.choices:
            parts.append(", ".join(f"`{c}`" for c in self.choices))
        if self.items is not None and (inner := self.items.span()):
            parts.append(f"each {inner}")
        return "; ".join(parts)


def wire(
    types: type | tuple[type, ...],
    low: float | None = None,
    high: float | None = None,
    doc: str = "",
    *,
    choices: tuple[str, ...] = (),
    items: Wire | None = None,
    code: str = BAD_VALUE,
) -> dict:
    """A dataclass field's metadata declaring its Wire."""
    kinds = types if isinstance(types, tuple) else (types,)
    return {"wire": Wire(kinds, low, high, doc, choices, items, code)}


def item(
    types: type | tuple[type, ...],
    low=None,
    high=None,
    *,
    choices=(),
    code=BAD_VALUE,
    items: Wire | None = None,
) -> Wire:
    """An array element's Wire (an array of arrays: `items`, the inner elements')."""
    kinds = types if isinstance(types, tuple) else (types,)
    return Wire(kinds, low, high, choices=choices, items=items, code=code)


class Declared:
    """A mixin for a dataclass whose fields carry Wire metadata: a map of that shape, read
    and written field by field. Subclasses add checks across fields in `check`."""

    __slots__ = ()
    KIND: ClassVar[str] = ""
    _wire_cache: ClassVar[dict[type, tuple]] = {}
    _names_cache: ClassVar[dict[type, frozenset[str]]] = {}

    @classmethod
    def wire_fields(cls) -> tuple:
        """(name, Wire, default or MISSING) of every declared field, in order."""
        found = Declared._wire_cache.get(cls)
        if found is None:
            found = tuple(
                (f.name, f.metadata["wire"], _default(f))
                for f in dataclass_fields(cls)
                if "wire" in f.metadata
            )
            Declared._wire_cache[cls] = found
        return found

    @classmethod
    def field_names(cls) -> frozenset[str]:
        found = Declared._names_cache.get(cls)
        if found is None:
            found = Declared._names_cache[cls] = frozenset(n for n, _, _ in cls.wire_fields())
        return found

    @classmethod
    def from_map(cls, obj: dict, where: str = "", extra: frozenset[str] = frozenset()):
        """A map -> an instance, every field checked against its Wire; `extra`: other keys
        the caller reads itself."""
        unknown = obj.keys() - cls.field_names()
        if unknown and (unknown := unknown - extra):
            what = where.rstrip(": ") or (f"{cls.KIND} request" if cls.KIND else "the map")
            raise ProtocolError(
                UNKNOWN_FIELD, f"{what} has unknown field(s): {', '.join(sorted(unknown))}"
            )
        values = {}
        for name, spec, default in cls.wire_fields():
            value = obj.get(name)
            if value is None:
                if default is MISSING:
                    what = where.rstrip(": ") or f"a {cls.KIND} request"
                    raise ProtocolError(MISSING_FIELD, f"{what} needs '{name}' ({spec.doc})")
                continue
            values[name] = spec.decode(name, value, where)
        return cls(**values)

    @classmethod
    def read(cls, obj: dict):
        """A map from a trusted peer -> an instance: the declared fields it has, unchecked
        (fields it lacks take their defaults; unknown ones, from a newer peer, are left)."""
        return cls(
            **{
                name: spec.read(obj[name])
                for name, spec, _ in cls.wire_fields()
                if obj.get(name) is not None
            }
        )

    def to_map(self) -> dict:
        """Every field that differs from its default (arrays as lists, maps as maps)."""
        out: dict = {}
        for name, _, default in self.wire_fields():
            value = getattr(self, name)
            if default is MISSING or value != default:
                out[name] = _plain_value(value)
        return out

    @classmethod
    def table(cls) -> str:
        """PROTOCOL.md's table of this shape."""
        rows = ["| field | type | range | default | meaning |", "|---|---|---|---|---|"]
        for name, spec, default in cls.wire_fields():
            shown = (
                "required"
                if default is MISSING
                else "nil"
                if default is None
                else "[]"
                if default == ()
                else f"`{default}`"
                if isinstance(default, str)
                else "{}"
                if isinstance(default, Declared)
                else repr(default).lower()
                if isinstance(default, bool)
                else repr(default)
            )
            rows.append(f"| `{name}` | {spec.type_name()} | {spec.span()} | {shown} | {spec.doc} |")
        return "\n".join(rows)


def _default(f) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _plain_value(value: Any) -> Any:
    if isinstance(value, Declared):
        return value.to_map()
    if isinstance(value, tuple):
        return [_plain_value(v) for v in value]
    return value


_PLAIN = frozenset({str, int, float, bool, list, dict})
_TYPE_NAMES = {
    str: "a string",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    list: "an array",
    dict: "a map",
}


def kind_of(value: Any) -> str:
    """What a value read off the wire is, in the words of an error message."""
    return {
        dict: "a map",
        list: "an array",
        str: "a string",
        bytes: "binary data",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "nil",
    }.get(type(value), type(value).__name__)


def plain(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def thousands(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def check_version(obj: Any) -> None:
    """A request map with this version, or ProtocolError."""
    if not isinstance(obj, dict):
        raise ProtocolError(NOT_A_MAP, f"a request is a map, not {kind_of(obj)}")
    if "v" not in obj:
        raise ProtocolError(MISSING_FIELD, "field 'v' (the protocol version) is missing")
    version = obj["v"]
    if not isinstance(version, int) or isinstance(version, bool) or version != VERSION:
        raise ProtocolError(
            UNSUPPORTED_VERSION, f"protocol version {version!r} is not supported; use {VERSION}"
        )


def pack(obj: Any) -> bytes:
    """msgpack, refusing (TypeError) any value it cannot represent exactly."""
    return msgpack.packb(obj, use_bin_type=True, strict_types=False)


def unpack(payload: Any) -> Any:
    """Strict, bounded msgpack decoding of one object."""
    if not isinstance(payload, bytes | bytearray | memoryview):
        raise ProtocolError(WRONG_TYPE, f"a payload is binary data, not {kind_of(payload)}")
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(
            PAYLOAD_TOO_LARGE, f"payload is {len(payload)} bytes; the limit is {MAX_PAYLOAD}"
        )
    if not payload:
        raise ProtocolError(MALFORMED, "payload is empty")
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_str_len=MAX_PAYLOAD,
            max_bin_len=MAX_PAYLOAD,
            max_array_len=MAX_PAYLOAD,  # bounded by the payload; batch size is checked after
            max_map_len=64,
            max_ext_len=0,
        )
    except UnicodeDecodeError as exc:
        raise ProtocolError(
            BAD_ENCODING, f"a string is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    except msgpack.ExtraData:
        raise ProtocolError(MALFORMED, "payload holds more than one msgpack object") from None
    except msgpack.StackError:
        raise ProtocolError(MALFORMED, "payload is nested too deeply") from None
    except (ValueError, msgpack.FormatError, msgpack.UnpackException) as exc:
        text = str(exc) or type(exc).__name__
        if "map key" in text:
            raise ProtocolError(MALFORMED, f"map keys must be strings ({text})") from None
        raise ProtocolError(MALFORMED, f"payload is not valid msgpack ({text})") from None
