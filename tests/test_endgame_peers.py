"""Endgame peers (engine/peers.py, endgame_peers.c): solves of one endgame in processes
forked from one that made the region, on one table. Real endgames (Macondo's test
positions), real forked processes: every peer answers what one process alone answers,
a later solve is answered from the slot's table, slots go to other endgames only when
nobody searches them, and what is not a region is refused."""

from __future__ import annotations

import os
import pickle

import pytest

from anchor.engine import InputError, Solver, _movegen
from anchor.engine.endgame import Split, table_bits
from anchor.engine.peers import Peer, Peers, identity
from anchor.engine.position import parse_cgp

from .test_endgame import QUICK, real_endgames


@pytest.fixture(scope="module")
def twl06_solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06)


def in_children(count: int, work) -> list:
    """work(i) run in `count` processes forked from this one at once; their answers."""
    pipes, pids = [], []
    for i in range(count):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            os.close(read)
            status = 0
            try:
                answer = pickle.dumps(("ok", work(i)))
            except BaseException as exc:  # noqa: BLE001 - carried back to the test
                answer, status = pickle.dumps(("error", repr(exc))), 1
            with os.fdopen(write, "wb") as out:
                out.write(answer)
            os._exit(status)
        os.close(write)
        pipes.append(read)
        pids.append(pid)
    answers = []
    for read, pid in zip(pipes, pids, strict=True):
        with os.fdopen(read, "rb") as got:
            kind, value = pickle.loads(got.read())
        os.waitpid(pid, 0)
        assert kind == "ok", value
        answers.append(value)
    return answers


def summary(found) -> tuple:
    return found.value, [m.notation for m in found.moves], found.exact


def solving(solver: Solver, peers: Peers, args: tuple, **options):
    """work(i) for in_children: the endgame solved as peer i; its summary and nodes."""

    def work(i: int) -> tuple:
        found = solver.solve_endgame(*args, peer=peers.peer(i), **options)
        return summary(found), found.nodes

    return work


def test_peers_answer_what_one_process_answers(twl06_solver):
    """Two and three processes on one slot each answer the value and line one process finds
    alone; a process that comes later is answered from the slot (the proof is there: only
    the canonical line is walked, a few per cent of the positions)."""
    solver, rules = twl06_solver, twl06_solver.rules
    positions = real_endgames()
    for name in ("line31", "line459", "line26", "line201"):
        pos = parse_cgp(rules, positions[name])
        args = (pos.board, pos.racks[0], pos.racks[1])
        alone = solver.solve_endgame(*args)
        assert alone.exact, name
        for count in (2, 3):
            peers = Peers(3, table_bits(16))  # a fresh region: nothing proven yet
            found = in_children(count, solving(solver, peers, args))
            assert [f[0] for f in found] == [summary(alone)] * count, (name, count)
        (later, nodes), *_ = in_children(1, solving(solver, peers, args))
        assert later == summary(alone), name
        if alone.nodes > 5000:
            assert nodes < alone.nodes / 4, (name, nodes, alone.nodes)


def test_peers_with_threads_a_split_and_a_scoreless_start(twl06_solver):
    """Peers of two threads each; a split (which searches alone on the slot's table, its
    root value being its plays' only); the same position after a pass (another key)."""
    solver, rules = twl06_solver, twl06_solver.rules
    positions = real_endgames()
    peers = Peers(2, table_bits(16))
    for name in QUICK[:4]:
        pos = parse_cgp(rules, positions[name])
        args = (pos.board, pos.racks[0], pos.racks[1])
        for scoreless in (0, 1):
            alone = solver.solve_endgame(*args, scoreless_turns=scoreless)
            work = solving(solver, peers, args, threads=2, scoreless_turns=scoreless)
            found = in_children(2, work)
            assert [f[0] for f in found] == [summary(alone)] * 2, (name, scoreless)
        lead = solver.solve_endgame_part(*args, Split(0, 1), peer=peers.peer(0))
        plain = solver.solve_endgame_part(*args, Split(0, 1))
        assert (lead.endgame.value, lead.root) == (plain.endgame.value, plain.root), name


def test_a_split_with_no_plays_a_depth_limit_and_rules_of_their_own(twl06_solver, english):
    """A split job whose share holds no play answers `no_plays` (it freed a pointer it never
    set, and aborted the process); a depth-limited solve searches alone, answering its own
    depth's guess even when the slot holds a proof; rules differing only in how the game
    ends are another endgame's slot."""
    from dataclasses import replace

    solver, rules = twl06_solver, twl06_solver.rules
    pos = parse_cgp(rules, real_endgames()["line31"])
    args = (pos.board, pos.racks[0], pos.racks[1])
    peers = Peers(1, table_bits(16))
    for peer in (None, peers.peer(0)):
        for split in (Split(10**6), Split(1, None, 1024, 1023)):
            assert solver.solve_endgame_part(*args, split, peer=peer).no_plays
    proven = in_children(1, solving(solver, peers, args))[0][0]
    assert proven[2]
    for plies in (1, 3):
        alone = summary(solver.solve_endgame(*args, plies=plies))
        assert not alone[2]
        assert in_children(1, solving(solver, peers, args, plies=plies))[0][0] == alone, plies
    box = replace(english, end=replace(english.end, going_out=0, scoreless_loses_own=False))
    assert identity(b"words", box) != identity(b"words", english)


def test_one_solve_at_a_time_on_a_peer_and_a_taker_killed_midway():
    """A second solve of one process while the first holds a slot searches alone (their
    release would free the slot under the first); a process killed while taking a slot
    leaves its mark there, which forget() clears."""
    peers = Peers(1, 10)
    peer = peers.peer(0)
    with peer.slot(7) as first, peer.slot(7) as second:
        assert first is not None and second is None
    region = peers._region
    owner = memoryview(region)[2 << 20 : (2 << 20) + 8].cast("Q")  # slot 0's owner word
    owner[0] = (1 << 64) - 1 - 3  # process 3's mark: killed taking the slot
    assert _movegen.peers_claim(region, 9, 1) == -1
    peers.forget(3)
    assert _movegen.peers_claim(region, 9, 1) == 0
    owner.release()


def test_slots_are_claimed_joined_released_and_reused():
    peers = Peers(2, 10)
    region = peers._region
    assert _movegen.peers_claim(region, 11, 0) == 0
    assert _movegen.peers_claim(region, 22, 1) == 1
    assert _movegen.peers_claim(region, 33, 2) == -1  # every slot searched: solve alone
    assert _movegen.peers_claim(region, 11, 3) == 0  # the same endgame: joined
    _movegen.peers_release(region, 0, 0)
    assert _movegen.peers_claim(region, 33, 2) == -1  # process 3 still searches slot 0
    _movegen.peers_release(region, 0, 3)
    assert _movegen.peers_claim(region, 33, 2) == 0  # nobody in slot 0: emptied for 33
    assert _movegen.peers_claim(region, 11, 4) == -1  # 11 was let go with it
    peers.forget(1)  # process 1 killed while it held slot 1
    assert _movegen.peers_claim(region, 44, 5) == 1
    _movegen.peers_release(region, 1, 5)
    _movegen.peers_release(region, 0, 2)
    # the least recently claimed of the free slots goes first; a released slot is kept
    assert _movegen.peers_claim(region, 44, 6) == 1
    _movegen.peers_release(region, 1, 6)
    assert _movegen.peers_claim(region, 55, 7) == 0
    for key in (0, (1 << 64) - 1, (1 << 64) - 64):  # the free and resetting marks
        assert _movegen.peers_claim(region, key, 8) == -1
    assert _movegen.peers_claim(region, 66, 64) == -1  # no such process


def test_keys_name_the_lexicon_rules_position_and_region(twl06_solver, english):
    peers, other = Peers(1, 10), Peers(1, 10)
    mine = identity(twl06_solver.lexicon.buffer, english)
    cells, racks = b"\x00" * 225, (b"\x01\x02", b"\x03")
    key = peers.key(mine, cells, racks, False)
    assert key == peers.key(mine, cells, racks, False)
    assert 0 < key < (1 << 64) - 1
    assert key != peers.key(mine, cells, racks, True)
    assert key != peers.key(mine, cells, (racks[1], racks[0]), False)
    assert key != peers.key(mine, b"\x00" * 224 + b"\x01", racks, False)
    assert key != other.key(mine, cells, racks, False)  # another region's secret
    assert key != peers.key(identity(b"another word list", english), cells, racks, False)


def test_what_is_not_a_region_is_refused(twl06_solver):
    with pytest.raises(ValueError, match="not a region"):
        _movegen.peers_claim(bytearray(1 << 16), 5, 0)
    with pytest.raises(BufferError):
        _movegen.peers_claim(b"read only", 5, 0)
    with pytest.raises(ValueError, match="slots"):
        _movegen.peers_bytes(0, 10)
    with pytest.raises(ValueError, match="region of"):
        _movegen.peers_init(bytearray(100), 1, 10)
    with pytest.raises(InputError, match="slots"):
        Peers(0, 10)
    with pytest.raises(InputError, match="process"):
        Peers(1, 10).peer(64)
    with pytest.raises(InputError, match="table bits"):
        Peers(1, 64)
    with pytest.raises(InputError, match="Peers region"):
        Peer("a region", 0)
    with pytest.raises(InputError, match="process"):
        Peers(1, 10).forget(64)
    pos = parse_cgp(twl06_solver.rules, real_endgames()["line92"])
    with pytest.raises(InputError, match="Peer"):
        twl06_solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], peer="me")
    board = pos.board
    region = bytearray(_movegen.peers_bytes(1, 10))
    _movegen.peers_init(region, 1, 10)
    generator = twl06_solver._generator
    rules = twl06_solver.rules
    racks = []
    for text in pos.racks:
        counts = bytearray(rules.size + 1)
        for tile in twl06_solver._rack(text)[0]:
            counts[tile] += 1
        racks.append(bytes(counts))
    with pytest.raises(ValueError, match="slot one of its"):
        generator.endgame(board.cells, *racks, 4, 0.0, 10, 0, 2, 0, 1, peers=region, slot=1)
    assert generator.endgame(board.cells, *racks, 4, 0.0, 10, 0, 2, 0, 1, peers=region, slot=0)
    region[0] ^= 1  # the magic
    with pytest.raises(ValueError, match="peers must be"):
        generator.endgame(board.cells, *racks, 4, 0.0, 10, 0, 2, 0, 1, peers=region, slot=0)
