"""Who may do what in the service's Redis: the ACL users a deployment creates (PROTOCOL.md,
"Redis users"; deploy/users.acl is rendered from here and checked against it).

- **anchor-client** enqueues jobs and reads their results. Each command it has is tied to
  the keys it is for (Redis 7 selectors): it writes job hashes, pushes ids on the lanes of
  the deployment's queues and adds them to `rq:queues`, but cannot read a lane, a
  registry or the list of queues (so it cannot learn other jobs' ids), cannot SET, expire
  or delete a lane or `rq:queues`, cannot write a result, a registry, an intermediate
  list, a worker's registration or a pool's shared values, cannot publish, scan or run
  scripts. Of a pooled simulation it may read the progress and set the stop mark, which
  only ends that simulation.
- **anchor-worker** runs jobs: every key under `rq:` and `anchor:`, no channels, none of
  the commands that reconfigure, flush or spy on the server.
- **anchor-admin** is the operator's (dashboards, `rq info`, repairs): everything.
- **default** is off: a connection that does not log in can do nothing. It keeps every
  permission all the same: Redis 7.0 - 7.2 replay the append-only file's transactions
  (RQ's enqueue, every script) as the default user, and one without permissions dropped
  them all at a restart (redis/redis#14541).

Everything a client user can still write that a worker reads is read as hostile: job
hashes (worker.guard), ids pushed on a lane (worker.queues), the stop mark (its jobs
answer `stopped`, the client that set none says so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import LANES, lane_queue

DEFAULT_QUEUES = ("anchor",)  # the queues deploy/ serves (worker --queue)


@dataclass(frozen=True, slots=True)
class User:
    """One ACL user: its rules, root permissions then selectors `(...)`, in Redis 7
    syntax (`%R~` read only, `%W~` write only, `~` both)."""

    name: str
    rules: tuple[str, ...]

    def line(self, password: str) -> str:
        """The user as one line of an ACL file, with `password` (clear text, or a
        placeholder a deployment replaces)."""
        return " ".join(["user", self.name, "on", f">{password}", *self.rules])


def client_user(queues: Sequence[str] = DEFAULT_QUEUES) -> User:
    """The client's user for the deployment's `queues` (each with its lanes)."""
    lanes = [lane_queue(q, lane) for q in queues for lane in LANES]
    pushed = " ".join(f"%W~rq:queue:{name}" for name in lanes)
    counted = " ".join(f"%R~rq:workers:{name}" for name in lanes)
    return User(
        "anchor-client",
        (
            "resetchannels", "resetkeys", "-@all",
            # connecting (redis-py says HELLO and AUTH; RQ asks INFO for the version), and
            # the transaction RQ enqueues in
            "+hello", "+auth", "+ping", "+select", "+client|setname", "+info",
            "+multi", "+exec", "+discard",
            "(~rq:job:* +hset +hget +hmget +hgetall +hexists +exists)",
            f"({pushed} +rpush +lpush)",
            "(%W~rq:queues +sadd)",
            "(%R~rq:results:* +xread +xrange +xrevrange)",
            f"({counted} +scard)",
            "(%R~anchor:pool:* +xread +xrange +xrevrange)",
            "(%W~anchor:pool:*:stop +set)",
        ),
    )  # fmt: skip


WORKER = User(
    "anchor-worker",
    (
        "resetchannels", "resetkeys", "~rq:*", "~anchor:*",
        "+@all", "-@dangerous", "-@pubsub",
        # what RQ asks of the server: its version, its own connection's address
        "+info", "+client|list", "+client|info",
    ),
)  # fmt: skip

ADMIN = User("anchor-admin", ("allchannels", "~*", "+@all"))

CLIENT = client_user()
USERS = (ADMIN, WORKER, CLIENT)
DEFAULT = "user default off resetchannels ~* +@all"  # off; see the module's note


def acl_file(passwords: Mapping[str, str], queues: Sequence[str] = DEFAULT_QUEUES) -> str:
    """An ACL file for `aclfile`: the default user off, each of USERS with its password
    from `passwords` (by user name), the client's lanes those of `queues`."""
    users = (ADMIN, WORKER, client_user(queues))
    lines = [DEFAULT] + [user.line(passwords[user.name]) for user in users]
    return "\n".join(lines) + "\n"


PLACEHOLDERS = {user.name: f"@{user.name.upper().replace('-', '_')}_PASSWORD@" for user in USERS}
