"""Writes that land in one round trip, and only while a condition read in Redis holds.

A worker's claim of a job and its storing of the outcome were each a WATCH, a read or two
and a MULTI/EXEC: four round trips (0.2 – 0.3 ms each on a 2-core machine) every job. Here
RQ's own bookkeeping is recorded into a plain pipeline (nothing is sent), and one Lua
script checks the condition and runs the recorded commands: atomic like the transaction,
with no retry when something else touched a watched key meanwhile.

Like MULTI/EXEC, the script runs every command and reports the first error after the
last (but for best-effort counters: `run_script`). Like it too, a full Redis (maxmemory)
writes nothing, provided the first command recorded is one a full Redis refuses (SET,
HSET, XADD: the claim's mark, the job's outcome): it runs with redis.call, so the refusal
aborts the script before any write, and once one write has happened Redis lets the rest
of the script through (scripts without flags, which is also what lets this run on Redis
6.2).
"""

from __future__ import annotations

import hashlib
from functools import cache

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import NoScriptError

_RUN = """
local function run(from)
  local i, failed, skipped = from, nil, false
  while i <= #ARGV do
    local n = tonumber(ARGV[i])
    local best = n < 0
    if best then n = -n end
    if i == from and not best then
      redis.call(unpack(ARGV, i + 1, i + n))
    else
      local r = redis.pcall(unpack(ARGV, i + 1, i + n))
      if type(r) == 'table' and r.err then
        if best then skipped = true elseif not failed then failed = r.err end
      end
    end
    i = i + n + 1
  end
  if failed then return redis.error_reply(failed) end
  if skipped then return 3 end
  return 1
end
"""

ALREADY_ANSWERED = 2  # CLAIM's answer for an id whose job is answered or running elsewhere
COUNTERS_REFUSED = 3  # ran, but a best-effort counter could not be added to (and was not)
BEST_EFFORT = (b"HINCRBY", b"HINCRBYFLOAT", "HINCRBY", "HINCRBYFLOAT")

# KEYS: a lane's intermediate list, the job's hash. ARGV: the job id, then the commands.
# 0: the id was put back (not there); 2: the job has its final result already, or another
# worker is running it (its id was pushed again, by anyone who can write to Redis; a retry
# or a requeue sets the status back to queued first): the id is dropped, the job not run.
CLAIM = (
    _RUN
    + """
if not redis.call('LPOS', KEYS[1], ARGV[1]) then return 0 end
local status = redis.call('HGET', KEYS[2], 'status')
if status == 'finished' or status == 'failed' or status == 'started' then
  redis.call('LREM', KEYS[1], 1, ARGV[1])
  return 2
end
return run(2)
"""
)

# KEYS: the job's hash. ARGV: the worker's name, the execution's start (the job's
# `started_at` as the claim wrote it), RQ's "started" status, then the commands. Whose
# execution it is is read off the job itself, not off its started-registry entry: anyone
# who can write to Redis can delete that entry, and a peer that takes the job over always
# rewrites the job (status queued or failed, or its own name and start).
STORE = (
    _RUN
    + """
local job = redis.call('HMGET', KEYS[1], 'status', 'worker_name', 'started_at')
if job[1] ~= ARGV[3] or job[2] ~= ARGV[1] or job[3] ~= ARGV[2] then return 0 end
return run(4)
"""
)

# A heartbeat while a job runs. KEYS: the job's hash, its started registry, the worker's
# hash, the worker's executions set, the execution's hash, the job's executions registry.
# ARGV: the worker's name, the execution's start, the registry member, the execution id,
# the job's TTL and the worker's (seconds), the time now (seconds since the epoch) and
# as RQ writes it in a job, RQ's "started" status.
#
# The first command is an EXPIRE, which a full Redis does not refuse, on the worker's own
# hash: once a script has written, Redis lets the rest through. A heartbeat only rewrites
# fields and scores that exist (a few bytes, no key), and a full Redis that refused it
# would let the job's registry entry run out, for a peer to requeue or fail a job that is
# running (issue 46). The registry entry is written back when it is gone while the job
# is still this execution's (a stranger deleted it); a job taken over gets none.
BEAT = """
local alive = redis.call('EXPIRE', KEYS[3], ARGV[6])
redis.call('EXPIRE', KEYS[4], ARGV[6])
if alive == 1 then redis.call('HSET', KEYS[3], 'last_heartbeat', ARGV[8]) end
local job = redis.call('HMGET', KEYS[1], 'status', 'worker_name', 'started_at')
if job[1] ~= ARGV[9] or job[2] ~= ARGV[1] or job[3] ~= ARGV[2] then return 0 end
local now = tonumber(ARGV[7])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[3])
redis.call('ZADD', KEYS[6], 'XX', now + tonumber(ARGV[5]) + 60, ARGV[4])
if redis.call('EXPIRE', KEYS[5], ARGV[5]) == 1 then
  redis.call('HSET', KEYS[5], 'last_heartbeat', ARGV[7])
end
redis.call('HSET', KEYS[1], 'last_heartbeat', ARGV[8])
return 1
"""


def recorder(connection: Redis) -> Pipeline:
    """A pipeline to record commands into; `run_if` sends them, never its execute()."""
    return connection.pipeline(transaction=False)


def run_if(connection: Redis, script: str, keys: list, args: list, recorded: Pipeline) -> bool:
    """Run `script` (CLAIM or STORE) with the commands `recorded` holds: True when its
    condition held and they ran, False when nothing was written. Redis's errors are
    raised as redis-py raises them (a full Redis: OutOfMemoryError)."""
    return run_script(connection, script, keys, args, recorded) == 1


def run_script(
    connection: Redis,
    script: str,
    keys: list,
    args: list,
    recorded: Pipeline | None = None,
    counters: str | None = None,
) -> int:
    """run_if's script answer itself (CLAIM: 1 claimed, 0 put back, 2 answered already;
    BEAT, which runs no recorded commands: 1 when the job is still this execution's).
    Recorded HINCRBY/HINCRBYFLOAT on the hash `counters` are best effort: one Redis cannot
    do (the field is no number, or would overflow) is skipped and the answer is
    COUNTERS_REFUSED instead of 1, the rest written; RQ's worker counters are
    bookkeeping, and a stranger's value in one failed every result's store."""
    argv = list(args)  # redis-py encodes them as it would the commands themselves
    if recorded is not None:
        for command, _options in recorded.command_stack:
            best = counters is not None and command[0] in BEST_EFFORT and command[1] == counters
            argv.append(-len(command) if best else len(command))
            argv.extend(command)
        recorded.reset()
    return int(call_script(connection, script, keys, argv))


def call_script(connection: Redis, script: str, keys: list, args: list):
    """The script's reply, sent by its SHA (the text only the first time on a Redis)."""
    try:
        return connection.evalsha(_sha(script), len(keys), *keys, *args)
    except NoScriptError:  # first use on this Redis, or it restarted: send the text
        return connection.eval(script, len(keys), *keys, *args)


@cache
def _sha(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()
