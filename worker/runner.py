"""Running a protocol request against the engine: the one implementation both the worker
and the client's embedded (no Redis) mode use, so their answers are identical."""

from __future__ import annotations

import os
import time
from pathlib import Path

from anchor.client import protocol as p
from anchor.dictionaries.lexica import DEFAULT_LEXICON, lexicon_path, search_dirs
from anchor.engine import (
    AnchorError,
    Board,
    InputError,
    Lexicon,
    Ruleset,
    Solver,
    WorkLimitError,
    parse_cgp,
)
from anchor.engine.annotate import annotate_game
from anchor.engine.gcg import parse_gcg
from anchor.engine.leaves import Leaves
from anchor.engine.legality import check_position, check_rack, fits, unseen_counts
from anchor.engine.notation import parse_rack
from anchor.engine.rules import builtin_names
from anchor.engine.selfplay import EndgamePlayer, EquityPlayer, Greedy, InvariantError, play_game
from anchor.engine.simulate import SimPlayer, Simulation
from anchor.engine.training import LeaveModel


class LexiconRegistry:
    """Solvers by (ruleset, lexicon name), each lexicon opened (mmapped) once.

    `paths` maps lexicon names to files; with `search=True` (embedded mode) other names
    are looked up like the CLI does and rulesets may be files. A worker passes only the
    lexica it was started with and serves built-in rulesets only. `rulesets` names the
    ruleset each lexicon was built for: a request under a ruleset with another alphabet
    is refused (a file's sidecar does the same when it is opened by path).
    """

    def __init__(
        self,
        paths: dict[str, str] | None = None,
        search: bool = False,
        leave_paths: dict[str, str] | None = None,
        rulesets: dict[str, str] | None = None,
    ):
        self.paths = dict(paths or {})
        self.built_for = dict(rulesets or {})
        self.leave_paths = dict(leave_paths or {})
        self.search = search
        self._rules: dict[str, Ruleset] = {}
        self._solvers: dict[tuple[str, str], Solver] = {}
        self._leaves: dict[tuple[str, str], Leaves] = {}

    def leaves(self, ruleset: str, lexicon: str | None, name: str | None) -> Leaves:
        """Leave values by name (default: the lexicon's name); `NAME` and `NAME.klv2` are
        one name. Searching like the CLI (embedded mode), a path to a file works too; a
        worker serves only the names it was started with and never opens a path a
        request names."""
        rules = self.rules(ruleset)
        name = name or lexicon or DEFAULT_LEXICON.get(rules.name, rules.name)
        key = (ruleset, name)
        if key not in self._leaves:
            path = self._leaves_path(name)
            try:
                self._leaves[key] = Leaves.open(path, rules)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_LEAVES, str(exc)) from None
        return self._leaves[key]

    def _leaves_path(self, name: str) -> str:
        is_path = "/" in name or os.sep in name
        stem = name[: -len(".klv2")] if name.endswith(".klv2") else name
        if self.search:
            if is_path:
                if not Path(name).is_file():
                    raise p.ProtocolError(
                        p.UNKNOWN_LEAVES, f"leave values file {name} does not exist"
                    )
                return name
            if stem in self.leave_paths:
                return self.leave_paths[stem]
            for folder in [Path.cwd(), *search_dirs()]:
                if (folder / f"{stem}.klv2").is_file():
                    return str(folder / f"{stem}.klv2")
            looked = ", ".join(str(d) for d in search_dirs())
            raise p.ProtocolError(
                p.UNKNOWN_LEAVES,
                f"no leave values named {stem!r} (looked for {stem}.klv2 here and in "
                f"{looked}); give a .klv2 file",
            )
        if stem in self.leave_paths and not is_path:
            return self.leave_paths[stem]
        known = ", ".join(sorted(self.leave_paths)) or "none"
        if is_path:
            message = (
                f"this service serves leave values by name, not file paths ({name!r}); "
                f"it has: {known}"
            )
        else:
            message = f"no leave values named {stem!r} here; this service has: {known}"
        raise p.ProtocolError(p.UNKNOWN_LEAVES, message)

    def rules(self, name: str) -> Ruleset:
        if name not in self._rules:
            if name not in builtin_names() and not (self.search and Path(name).suffix == ".toml"):
                raise p.ProtocolError(
                    p.UNKNOWN_RULESET,
                    f"unknown ruleset {name!r}; this service plays {', '.join(builtin_names())}",
                )
            try:
                self._rules[name] = Ruleset.load(name)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_RULESET, str(exc)) from None
        return self._rules[name]

    def served(self, name: str) -> str | None:
        """The lexicon name this registry serves for `name`, matched case-insensitively
        (CGP's `lex NWL20;` finds a lexicon served as nwl20); None if it serves none."""
        if name in self.paths:
            return name
        folded = [n for n in self.paths if n.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else (name if self.search else None)

    def solver(self, ruleset: str, lexicon: str | None) -> Solver:
        rules = self.rules(ruleset)
        name = lexicon or DEFAULT_LEXICON.get(rules.name, rules.name)
        key = (ruleset, name)
        if key not in self._solvers:
            path = self.paths.get(name)
            if path is None and self.search:
                try:
                    path = str(lexicon_path(name))
                except AnchorError as exc:
                    raise p.ProtocolError(p.UNKNOWN_LEXICON, str(exc)) from None
            if path is None:
                known = ", ".join(sorted(self.paths)) or "none"
                raise p.ProtocolError(
                    p.UNKNOWN_LEXICON, f"no lexicon named {name!r} here; this service has: {known}"
                )
            built_for = self.built_for.get(name)
            if built_for and self.rules(built_for).alphabet != rules.alphabet:
                raise p.ProtocolError(
                    p.UNKNOWN_LEXICON,
                    f"lexicon {name!r} holds {built_for} words; it cannot serve the "
                    f"{rules.name} ruleset (another alphabet)",
                )
            try:
                self._solvers[key] = Solver(Lexicon.open(path, rules), rules)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_LEXICON, str(exc)) from None
        return self._solvers[key]

    def preload(self, pairs: list[tuple[str, str]]) -> list[Solver]:
        """Open (ruleset, lexicon) pairs now, before any job: a bad file fails start-up."""
        return [self.solver(ruleset, name) for ruleset, name in pairs]


class Deadline:
    """When a request must be done (time.monotonic()); None-safe helpers for the engine."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.at = None if seconds is None else time.monotonic() + seconds

    def budget(self) -> float | None:
        """Seconds left for the next engine call; ProtocolError `timeout` when none are."""
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.expired()
        return left

    def expired(self) -> p.ProtocolError:
        allowed = f"{self.seconds:g} s" if self.seconds is not None else "time"
        return p.ProtocolError(
            p.TIMEOUT,
            f"the request needed more than the {allowed} it was given; ask for less "
            "(a smaller batch, a limit, fewer games) or allow it more time",
        )


def run_request(
    request: p.Request | p.SelfPlayRequest | p.AnnotateRequest,
    registry: LexiconRegistry,
    limits: p.Limits | None = None,
    deadline: Deadline | None = None,
) -> dict:
    """A request -> a result map, within `limits` (default: none but the protocol's) and
    `deadline`. Errors of a whole request raise ProtocolError; in a batch, a bad position
    gets its own error result and the others go on."""
    limits = limits or p.Limits.unbounded()
    deadline = deadline or Deadline(limits.job_seconds)
    started = time.perf_counter()
    try:
        result = _run(request, registry, limits, deadline, started)
    except WorkLimitError:
        raise deadline.expired() from None
    return result


def _run(request, registry: LexiconRegistry, limits: p.Limits, deadline: Deadline, started):
    if isinstance(request, p.SelfPlayRequest):
        solver = registry.solver(request.ruleset, request.lexicon)
        leaves = None
        if request.model:
            try:
                leaves = LeaveModel(solver.rules, request.model)
            except ValueError as exc:
                raise p.ProtocolError(p.BAD_VALUE, str(exc)) from None
        elif {"equity", "sim", "endgame"} & set(request.policies):
            leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
        return run_selfplay(request, solver, started, leaves, deadline)
    if isinstance(request, p.SimulateRequest):
        return run_simulate(request, registry, started, deadline)
    if isinstance(request, p.EndgameRequest):
        return run_endgame(request, registry, limits, started, deadline)
    if isinstance(request, p.PreendgameRequest):
        return run_preendgame(request, registry, started, deadline)
    if isinstance(request, p.AnnotateRequest):
        solver = registry.solver(request.ruleset, request.lexicon)
        try:
            leaves = None
            if request.leaves is not None:
                leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
            game = parse_gcg(request.gcg, source="game")
            sim = None
            if request.sim_iterations:
                sim = Simulation(
                    candidates=request.sim_candidates,
                    plies=request.sim_plies,
                    iterations=request.sim_iterations,
                    seed=request.seed,
                    round_size=max(1, min(100, request.sim_iterations // 4)),
                    rank=request.sim_rank_by,
                )
            annotation = annotate_game(game, solver, request.top, leaves, deadline.budget, sim)
        except InputError as exc:
            raise p.ProtocolError(p.BAD_GAME, str(exc)) from None
        return p.annotate_result(annotation, (time.perf_counter() - started) * 1e6)
    registry.solver(request.ruleset, request.lexicon)  # an unknown name fails the whole request
    leaves = None
    if request.rank == "equity":
        leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    results = []
    size = 0
    for position in request.positions:
        try:
            result = analyze_position(
                registry, request, position, leaves, limits.moves, deadline.budget()
            )
        except p.ProtocolError as exc:
            if not request.batch or exc.code == p.TIMEOUT:
                raise
            result = p.position_error(exc.code, exc.message)
        results.append(result)
        if limits.result_bytes is not None:
            size += _packed_bound(result)
            if size > limits.result_bytes:  # the cheap bound says maybe: pack to know
                size = len(p.pack(results))
                if size > limits.result_bytes:
                    raise p.ProtocolError(
                        p.RESULT_TOO_LARGE,
                        f"the result would be over this server's cap of "
                        f"{limits.result_bytes:,} bytes; ask for fewer moves ('limit') or "
                        "fewer positions",
                    )
    return p.analysis_result(results, request.batch, (time.perf_counter() - started) * 1e6)


def _packed_bound(result: dict) -> int:
    """At least the msgpack size of one position's result, without packing it: the
    result-size cap is checked as positions finish, and packing each twice would cost a
    batch as much as ranking its moves. Strings count 4 bytes a character (UTF-8)."""
    if "moves" not in result:
        return len(p.pack(result))  # an error: small
    size = 160 + 9 * len(result.get("equities", ()))
    for entry in result["moves"]:
        size += 32 + 4 * (len(entry[0]) + len(entry[5])) + 16 * len(entry[6])
        if len(entry) > 7:
            size += len(p.pack(entry[7]))
    return size


# CGP opcodes (`name value;`) read here: the rest name the game and change nothing.
_CGP_INFO = {"gid", "cid", "tmr", "mcnz", "ti", "tn"}


def _position_board(
    registry: LexiconRegistry, request: p.Request, position: p.Position
) -> tuple[Solver, Board, str | None]:
    """The position's solver (a CGP's `lex` may choose it), board and CGP rack."""
    rules = registry.rules(request.ruleset)
    lexicon = request.lexicon
    try:
        if position.cgp is not None and len(position.cgp.split()) >= 4:
            cgp = parse_cgp(rules, position.cgp)
            board, cgp_rack = cgp.board, cgp.racks[0]
            lexicon = _cgp_lexicon(registry, rules, request.lexicon, cgp.options)
        elif position.cgp is not None:
            board, cgp_rack = Board.from_cgp(rules, position.cgp), None
        else:
            board, cgp_rack = Board.from_rows(rules, position.rows), None
    except InputError as exc:
        raise p.ProtocolError(p.BAD_POSITION, str(exc)) from None
    return registry.solver(request.ruleset, lexicon), board, cgp_rack


def _cgp_lexicon(registry, rules: Ruleset, asked: str | None, options) -> str | None:
    """The lexicon a CGP's opcodes call for, checked against the request and ruleset."""
    for op, value in options.items():
        if op == "lex" or op in _CGP_INFO:
            continue
        if op == "ld" and value.casefold() in (rules.name.casefold(), *_LD_ALIASES[rules.name]):
            continue
        if op == "bb" and value == str(rules.bingo_bonus):
            continue
        if op == "var" and value.casefold() == "classic":
            continue
        if op in ("ld", "bb", "var"):
            raise InputError(
                f"the CGP asks for {op} {value!r}, which the {rules.name} ruleset does not "
                "play; choose the ruleset that does, or drop the opcode"
            )
        raise InputError(
            f"the CGP opcode {op!r} is not one this service reads (it reads lex, ld, bb, var "
            f"and ignores {', '.join(sorted(_CGP_INFO))})"
        )
    named = options.get("lex")
    if not named:
        return asked
    if asked is not None:
        if asked.casefold() != named.casefold():
            raise InputError(
                f"the CGP names lexicon {named!r} but the request asks for {asked!r}; "
                "drop one of them"
            )
        return asked
    served = registry.served(named)
    if served is None:
        known = ", ".join(sorted(registry.paths)) or "none"
        raise p.ProtocolError(
            p.UNKNOWN_LEXICON, f"the CGP names lexicon {named!r}; this service has: {known}"
        )
    return served


_LD_ALIASES: dict[str, tuple[str, ...]] = {
    "english": ("english",),
    "super-english": ("english_super", "super-english"),
    "russian": ("russian",),
    "erudit": ("erudit",),
}


def analyze_position(
    registry: LexiconRegistry,
    request: p.Request,
    position: p.Position,
    leaves: Leaves | None = None,
    max_moves: int | None = None,
    budget: float | None = None,
) -> dict:
    """One position of a request: checked (a rack and board one bag could hold, tiles
    connected), then every play ranked, cut to the position's limit or `max_moves`."""
    solver, board, cgp_rack = _position_board(registry, request, position)
    rules = solver.rules
    rack = position.rack if position.rack is not None else cgp_rack
    if rack is None:
        raise p.ProtocolError(
            p.MISSING_FIELD, "no rack: give 'rack', or a full CGP with the player's rack"
        )
    try:
        tiles = parse_rack(rules, rack)
    except InputError as exc:
        raise p.ProtocolError(p.BAD_RACK, str(exc)) from None
    if not fits(board, tiles):
        try:
            check_rack(rules, tiles)
        except InputError as exc:
            raise p.ProtocolError(p.BAD_RACK, str(exc)) from None
        try:
            check_position(board, tiles)
        except InputError as exc:
            raise p.ProtocolError(p.BAD_POSITION, str(exc)) from None
    limit = position.limit if position.limit is not None else max_moves
    capped = position.limit is None and limit is not None
    options = request.options
    if leaves is not None:
        others = unseen_counts(board, tiles, strict=False)
        if sum(others) <= rules.rack_size:  # the bag is empty: no leave values
            points = sum(n * rules.tile_values[t] for t, n in enumerate(others))
            return _empty_bag_position(
                solver, board, rack, position, options, limit, points, budget
            )
    started = time.perf_counter()
    try:
        moves = solver.generate_moves(
            board,
            rack,
            mode=position.mode,
            limit=limit,
            count_all=capped,  # all plays were asked for: count them, send the cap's worth
            include_exchanges=options.exchanges,
            rank="equity" if leaves is not None else "score",
            leaves=leaves,
            budget=budget,
        )
    except InputError as exc:
        raise p.ProtocolError(p.BAD_RACK, str(exc)) from None
    generated = time.perf_counter() - started
    truncated = capped and moves.total is not None and moves.total > limit
    if options.breakdown:
        entries = [_with_breakdown(solver, board, move) for move in moves]
    else:  # straight from the packed records, no Move objects
        entries = moves.fields(lists=True)
    return p.position_result(
        entries,
        generated * 1e6,
        total=moves.total,
        truncated=truncated,
        equities=moves.equities() if leaves is not None else None,
    )


def _with_breakdown(solver, board, move) -> list:
    """A move's result entry with its words and bingo bonus (options.breakdown)."""
    breakdown = {"words": [], "bingo": 0}
    if move.kind == "play":
        score = solver.score_play(board, move.play())
        breakdown = {
            "words": [[w.word, w.coordinate, w.score] for w in score.words],
            "bingo": score.bingo,
        }
    return p.move_entry(move, breakdown)


def _empty_bag_position(
    solver, board, rack: str, position, options, limit, points: int, budget
) -> dict:
    """analyze_position by equity once the bag is empty: every play ranked by its score plus
    the going-out adjustment (engine/endgame.py, endgame_value), reported as its equity;
    the pass (the one exchange left) with `options.exchanges`."""
    from anchor.engine.endgame import endgame_value
    from anchor.engine.moves import PASS, Move

    started = time.perf_counter()
    try:
        moves = solver.generate_moves(board, rack, mode=position.mode, budget=budget)
    except InputError as exc:
        raise p.ProtocolError(p.BAD_RACK, str(exc)) from None
    held = len(parse_rack(solver.rules, rack))
    scores = moves.scores()
    values = [
        endgame_value(solver.rules, len(moves.placed(i)), s, held, points)
        for i, s in enumerate(scores)
    ]
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))
    if options.exchanges:
        order.append(-1)  # the pass: worth 0, after the plays worth as much
        order.sort(key=lambda i: (-(values[i] if i >= 0 else 0), i < 0, i))
    total = len(order)
    if limit is not None:
        order = order[:limit]
    generated = time.perf_counter() - started
    passed = Move(0, -1, -1, "", "", (), PASS)
    if options.breakdown:
        entries = [_with_breakdown(solver, board, moves[i] if i >= 0 else passed) for i in order]
    else:
        fields = moves.fields(lists=True)
        entries = [fields[i] if i >= 0 else [*passed.fields()[:6], []] for i in order]
    return p.position_result(
        entries,
        generated * 1e6,
        total=total,
        truncated=False,
        equities=[float(values[i]) if i >= 0 else 0.0 for i in order],
    )


def _policy(name: str, leaves, request: p.SelfPlayRequest, seed: int, budget=None):
    if name == "equity":
        return EquityPlayer(leaves)
    if name == "endgame":
        return EndgamePlayer(EquityPlayer(leaves), budget=budget)
    if name == "sim":
        settings = Simulation(
            candidates=request.sim_candidates,
            plies=request.sim_plies,
            iterations=request.sim_iterations,
            seed=seed,
            round_size=max(1, min(100, request.sim_iterations // 5)),
            confidence=0.95,
            rank=request.sim_rank_by,
        )
        return SimPlayer(leaves, settings, budget)
    return Greedy()


def run_selfplay(
    request: p.SelfPlayRequest,
    solver: Solver,
    started: float,
    leaves: Leaves | None = None,
    deadline: Deadline | None = None,
) -> dict:
    """Whole games with every invariant checked (when asked); one record per game."""
    games = []
    names = list(request.policies or ("score",))
    if len(names) == 1:
        names *= request.players
    for i in range(request.games):
        seed = request.seed + i
        seated = (
            names[seed % len(names) :] + names[: seed % len(names)] if request.alternate else names
        )
        budget = deadline.budget if deadline else None
        policies = [_policy(name, leaves, request, seed, budget) for name in seated]
        try:
            game = play_game(
                solver,
                seed,
                players=request.players,
                check=request.check,
                policies=policies,
                budget=deadline.budget if deadline else None,
            )
        except InvariantError as exc:  # an engine bug: report it with the seed that shows it
            raise p.ProtocolError(p.INTERNAL, f"seed {request.seed + i}: {exc}") from None
        games.append(
            p.selfplay_game(
                seed=game.seed,
                policies=seated,
                scores=game.scores,
                turns=len(game.turns),
                end=game.end,
                plays=game.plays_generated,
                move_seconds=game.move_times,
                gcg=game.to_gcg(request.lexicon or DEFAULT_LEXICON.get(request.ruleset)),
            )
        )
    return p.selfplay_result(games, (time.perf_counter() - started) * 1e6)


def run_endgame(
    request: p.EndgameRequest,
    registry: LexiconRegistry,
    limits: p.Limits,
    started: float,
    deadline: Deadline,
) -> dict:
    """An endgame (or, with a split, one part of one), within the server's time and table
    caps: past the time, the deepest search completed answers with `exact` false."""
    from anchor.engine import endgame

    solver = registry.solver(request.ruleset, request.lexicon)
    rules = solver.rules
    table_mb = request.table_mb or endgame.DEFAULT_TABLE_MB
    if limits.endgame_table_mb is not None:
        table_mb = min(table_mb, limits.endgame_table_mb)
    seconds = deadline.budget()
    if request.seconds is not None:
        seconds = request.seconds if seconds is None else min(seconds, request.seconds)
    if seconds is not None:
        seconds = max(0.001, seconds - 0.05)  # leave time to write the answer
    try:
        position = parse_cgp(rules, request.cgp)
        racks = list(position.racks) + ["", ""]
        rack = request.rack if request.rack is not None else racks[0]
        other = request.opponent if request.opponent is not None else racks[1]
        split = endgame.Split(
            request.first, request.last, request.parts, request.part, request.floor
        )
        part = solver.solve_endgame_part(
            position.board, rack or "", other or "", request.plies, seconds, table_mb,
            request.scoreless, split,
        )  # fmt: skip
    except InputError as exc:
        raise p.ProtocolError(p.BAD_POSITION, str(exc)) from None
    found = part.endgame
    moves = [[m.notation, m.score] for m in found.moves]
    elapsed = (time.perf_counter() - started) * 1e6
    return p.endgame_result(
        found.value, moves, found.depth, found.exact, found.nodes, found.seconds,
        part.root, part.below_floor, part.no_plays, elapsed,
    )  # fmt: skip


def run_preendgame(
    request: p.PreendgameRequest, registry: LexiconRegistry, started: float, deadline: Deadline
) -> dict:
    """A pre-endgame (one tile in the bag), within the job's time."""
    solver = registry.solver(request.ruleset, request.lexicon)
    seconds = deadline.budget()
    if request.seconds is not None:
        seconds = request.seconds if seconds is None else min(seconds, request.seconds)
    try:
        position = parse_cgp(solver.rules, request.cgp)
        rack = request.rack if request.rack is not None else position.racks[0]
        lead = position.scores[0] - max(position.scores[1:], default=0) if position.scores else 0
        found = solver.solve_preendgame(
            position.board, rack or "", request.candidates, lead, seconds
        )
    except InputError as exc:
        raise p.ProtocolError(p.BAD_POSITION, str(exc)) from None
    plays = [
        [pl.move.notation, pl.move.score, round(pl.mean, 3), round(pl.win_rate, 4),
         [[d.tile, d.count, d.value] for d in pl.draws]]
        for pl in found.plays
    ]  # fmt: skip
    elapsed = (time.perf_counter() - started) * 1e6
    return p.preendgame_result(
        plays, found.unseen, found.exact, found.nodes, found.seconds, elapsed
    )


def run_simulate(
    request: p.SimulateRequest, registry: LexiconRegistry, started: float, deadline: Deadline
) -> dict:
    """One share of a simulation: every candidate's value for each of its iterations."""
    from anchor.engine import simulate

    solver = registry.solver(request.ruleset, request.lexicon)
    leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    try:
        position = parse_cgp(solver.rules, request.cgp)
        rack = request.rack if request.rack is not None else position.racks[0]
        tiles = parse_rack(solver.rules, rack or "")
        check_rack(solver.rules, tiles)
        check_position(position.board, tiles)
        chosen = simulate.candidates(solver, position.board, rack, leaves, request.candidates)
        only = request.only or tuple(range(len(chosen)))
        if any(c >= len(chosen) for c in only):
            raise p.ProtocolError(
                p.BAD_VALUE, f"'only' names candidate {max(only)}; there are {len(chosen)}"
            )
        unplayed: list[list[int]] = []
        values = simulate.iterate(
            solver, position.board, rack, leaves, [chosen[c] for c in only], request.plies,
            request.seed, range(request.first, request.first + request.iterations),
            budget=deadline.budget, unplayed=unplayed,
        )  # fmt: skip
    except InputError as exc:
        raise p.ProtocolError(p.BAD_POSITION, str(exc)) from None
    table = [[c.notation, c.score, round(c.equity, 3)] for c in chosen]
    elapsed = (time.perf_counter() - started) * 1e6
    return p.simulate_result(table, only, values, elapsed, unplayed)
