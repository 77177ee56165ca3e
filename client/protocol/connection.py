"""How a client and a worker reach Redis: the URL, the password (from a file or the
environment, never a command line), and the error both raise when it goes wrong. Loads
neither the engine nor RQ."""

from __future__ import annotations

import os


class ServiceError(Exception):
    """The service did not answer: a timeout, Redis refusing the job, or a job that failed
    in the worker. `code` is one of protocol.FAILURE_CODES when the reason is known."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code


def redacted(url: str) -> str:
    """A Redis URL without its password, for messages and logs."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.split('@', 1)[1]}"


def redis_password(password_file: str | None = None, environ=os.environ) -> str | None:
    """The Redis password from `password_file`, else $REDIS_PASSWORD_FILE, else
    $REDIS_PASSWORD (so it need not appear in a URL, on a command line or in `ps`)."""
    path = password_file or environ.get("REDIS_PASSWORD_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read().strip() or None
        except OSError as exc:
            where = "" if password_file else " ($REDIS_PASSWORD_FILE)"
            raise ServiceError(
                f"cannot read the Redis password file {path}{where}: {exc.strerror}; make it "
                "readable by this user, or unset REDIS_PASSWORD_FILE to use $REDIS_PASSWORD"
            ) from None
    return environ.get("REDIS_PASSWORD") or None


def connect(url: str, password_file: str | None = None, environ=os.environ, **options):
    """A Redis client for `url`, with the password from `redis_password` when the URL
    carries none; ServiceError naming the URL (password hidden) when it is not a Redis
    URL. Connecting happens on first use. A rediss:// URL takes TLS options in its query
    (`?ssl_ca_certs=/path/ca.pem`), as redis-py reads them."""
    from redis import Redis

    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ServiceError(
            f"bad Redis URL {redacted(url)!r}: it must start with redis://, rediss:// or unix://"
        )
    if not _url_password(url) and "password" not in options:
        password = redis_password(password_file, environ)
        if password:
            options["password"] = password
    if url.startswith("unix://"):  # a socket file has no TCP keepalive
        options.pop("socket_keepalive", None)
        options.pop("socket_keepalive_options", None)
    try:
        return Redis.from_url(url, **options)
    except ValueError as exc:
        raise ServiceError(f"bad Redis URL {redacted(url)!r}: {exc}") from None


def _url_password(url: str) -> str | None:
    from urllib.parse import urlparse

    try:
        return urlparse(url).password
    except ValueError:
        return None
