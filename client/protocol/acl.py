"""Who may do what in the service's Redis: the ACL users a deployment creates (PROTOCOL.md,
"Redis users"; deploy/users.acl is rendered from here and checked against it).

- **anchor-client** enqueues jobs and reads their results. It writes job hashes and pushes
  ids, but cannot read a lane, a registry or the list of queues (so it cannot learn other
  jobs' ids), cannot write a result, a registry, a worker's registration or a pool's
  shared values, cannot publish, scan or run scripts. Of a pooled simulation it may read
  the progress and set the stop mark, which only ends that simulation.
- **anchor-worker** runs jobs: every key under `rq:` and `anchor:`, no channels, none of
  the commands that reconfigure, flush or spy on the server.
- **anchor-admin** is the operator's (dashboards, `rq info`, repairs): everything.
- **default** is off: a connection that does not log in can do nothing.

Everything a client user can still write that a worker reads is read as hostile: job
hashes (worker.guard), ids pushed on a lane (worker.queues), the stop mark (its jobs
answer `stopped`, the client that set none says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class User:
    """One ACL user: its commands and key patterns (Redis 7 syntax: `%R~` read only,
    `%W~` write only, `~` both)."""

    name: str
    commands: tuple[str, ...]
    keys: tuple[str, ...]
    channels: str = "resetchannels"

    def line(self, password: str) -> str:
        """The user as one line of an ACL file, with `password` (clear text, or a
        placeholder a deployment replaces)."""
        return " ".join(
            ["user", self.name, "on", f">{password}", self.channels, *self.keys, *self.commands]
        )


CLIENT = User(
    "anchor-client",
    commands=(
        "-@all",
        # connecting (redis-py says HELLO and AUTH; RQ asks INFO for the version)
        "+hello", "+auth", "+ping", "+select", "+client|setname", "+info",
        # enqueueing: RQ writes the job's hash, adds the queue to rq:queues, pushes the id
        "+multi", "+exec", "+discard", "+hset", "+hget", "+hmget", "+hgetall", "+hexists",
        "+exists", "+expire", "+persist", "+rpush", "+lpush", "+sadd",
        # results, progress, the workers serving a queue
        "+xread", "+xrange", "+xrevrange", "+scard",
        # a simulation given up
        "+set",
    ),
    keys=(
        "~rq:job:*",
        "%W~rq:queue:*",
        "%W~rq:queues",
        "%R~rq:results:*",
        "%R~rq:workers:*",
        "%R~anchor:pool:*",
        "%W~anchor:pool:*:stop",
    ),
)  # fmt: skip

WORKER = User(
    "anchor-worker",
    commands=(
        "+@all",
        "-@dangerous",
        "-@pubsub",
        # what RQ asks of the server: its version, its own connection's address
        "+info",
        "+client|list",
        "+client|info",
    ),
    keys=("~rq:*", "~anchor:*"),
)

ADMIN = User("anchor-admin", commands=("+@all",), keys=("~*",), channels="allchannels")

USERS = (ADMIN, WORKER, CLIENT)


def acl_file(passwords: Mapping[str, str]) -> str:
    """An ACL file for `aclfile`: the default user off, each of USERS with its password
    from `passwords` (by user name)."""
    lines = ["user default off resetchannels -@all"]
    lines += [user.line(passwords[user.name]) for user in USERS]
    return "\n".join(lines) + "\n"


PLACEHOLDERS = {user.name: f"@{user.name.upper().replace('-', '_')}_PASSWORD@" for user in USERS}
