"""Structured logs: one JSON object a line (time, level, logger, message, extra fields)."""

from __future__ import annotations

import json
import logging
import time

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
MAX_FIELD = 2000  # characters of a logged message or field; a client writes some of them


KEEP_TAIL = 500  # of a cut field, the characters kept from its end (RQ ends a line with the id)


def _cut(value):
    """The head and the tail of a long string: RQ's lines put the job's id after its
    description, and a traceback's last line says what went wrong."""
    if isinstance(value, str) and len(value) > MAX_FIELD:
        head, left = MAX_FIELD - KEEP_TAIL, len(value) - MAX_FIELD
        return f"{value[:head]}... ({left:,} more characters) ...{value[-KEEP_TAIL:]}"
    return value


class Truncate(logging.Filter):
    """Every message and string field cut to MAX_FIELD characters: a job's description, its
    error or a stray id are written by whoever enqueued it (issue 46: a 20 MiB description
    was logged whole at every start), and a log line is an operator's, not theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if len(message) > MAX_FIELD:
            record.msg, record.args = _cut(message), None
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and not key.startswith("_") and isinstance(value, str):
                setattr(record, key, _cut(value))
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = _cut(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False, default=str)


def configure(fmt: str = "json", level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    handler.addFilter(Truncate())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.captureWarnings(True)  # the engine's warnings (a stale lexicon file) as log lines
