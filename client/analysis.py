"""Running a protocol request against the engine: the one implementation both the worker
and the client's embedded (no Redis) mode use, so their answers are identical."""

from __future__ import annotations

import time
from pathlib import Path

from engine import AnchorError, Board, InputError, Lexicon, Ruleset, Solver, parse_cgp
from engine.annotate import annotate_game
from engine.gcg import parse_gcg
from engine.leaves import Leaves
from engine.rules import builtin_names
from engine.selfplay import EquityPlayer, Greedy, InvariantError, play_game
from engine.training import LeaveModel

from . import protocol as p
from .lexica import DEFAULT_LEXICON, lexicon_path, search_dirs


class LexiconRegistry:
    """Solvers by (ruleset, lexicon name), each lexicon opened (mmapped) once.

    `paths` maps lexicon names to files; with `search=True` (embedded mode) other names
    are looked up like the CLI does and rulesets may be files. A worker passes only the
    lexica it was started with and serves built-in rulesets only.
    """

    def __init__(
        self,
        paths: dict[str, str] | None = None,
        search: bool = False,
        leave_paths: dict[str, str] | None = None,
    ):
        self.paths = dict(paths or {})
        self.leave_paths = dict(leave_paths or {})
        self.search = search
        self._rules: dict[str, Ruleset] = {}
        self._solvers: dict[tuple[str, str], Solver] = {}
        self._leaves: dict[tuple[str, str], Leaves] = {}

    def leaves(self, ruleset: str, lexicon: str | None, name: str | None) -> Leaves:
        """Leave values by name (default: the lexicon's name); files as NAME.klv2 when
        searching like the CLI."""
        rules = self.rules(ruleset)
        name = name or lexicon or DEFAULT_LEXICON.get(rules.name, rules.name)
        key = (ruleset, name)
        if key not in self._leaves:
            path = self.leave_paths.get(name)
            if path is None and self.search:
                candidate = Path(name)
                if candidate.suffix == ".klv2" and candidate.is_file():
                    path = str(candidate)
                else:
                    for folder in search_dirs():
                        if (folder / f"{name}.klv2").is_file():
                            path = str(folder / f"{name}.klv2")
                            break
            if path is None:
                if self.search:
                    looked = ", ".join(str(d) for d in search_dirs())
                    message = (
                        f"no leave values named {name!r} (looked for {name}.klv2 in "
                        f"{looked}); give a .klv2 file"
                    )
                else:
                    known = ", ".join(sorted(self.leave_paths)) or "none"
                    message = f"no leave values named {name!r} here; this service has: {known}"
                raise p.ProtocolError(p.UNKNOWN_LEAVES, message)
            try:
                self._leaves[key] = Leaves.open(path, rules)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_LEAVES, str(exc)) from None
        return self._leaves[key]

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
            try:
                self._solvers[key] = Solver(Lexicon.open(path, rules), rules)
            except AnchorError as exc:
                raise p.ProtocolError(
                    p.UNKNOWN_LEXICON,
                    f"lexicon {name!r} cannot serve the {rules.name} ruleset: {exc}",
                ) from None
        return self._solvers[key]

    def preload(self, pairs: list[tuple[str, str]]) -> list[Solver]:
        """Open (ruleset, lexicon) pairs now, before any job: a bad file fails start-up."""
        return [self.solver(ruleset, name) for ruleset, name in pairs]


def run_request(request: p.Request | p.SelfPlayRequest, registry: LexiconRegistry) -> dict:
    """A request -> a result map. Errors of a whole request raise ProtocolError; in a
    batch, a bad position gets its own error result and the others go on."""
    started = time.perf_counter()
    solver = registry.solver(request.ruleset, request.lexicon)
    if isinstance(request, p.SelfPlayRequest):
        leaves = None
        if request.model:
            try:
                leaves = LeaveModel(solver.rules, request.model)
            except ValueError as exc:
                raise p.ProtocolError(p.BAD_VALUE, str(exc)) from None
        elif "equity" in request.policies:
            leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
        return run_selfplay(request, solver, started, leaves)
    if isinstance(request, p.AnnotateRequest):
        try:
            leaves = None
            if request.leaves is not None:
                leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
            game = parse_gcg(request.gcg, source="game")
            annotation = annotate_game(game, solver, request.top, leaves)
        except InputError as exc:
            raise p.ProtocolError(p.BAD_GAME, str(exc)) from None
        return {
            "v": p.VERSION,
            "ok": True,
            "annotation": annotation,
            "timings": {"total_us": round((time.perf_counter() - started) * 1e6, 1)},
        }
    leaves = None
    if request.rank == "equity":
        leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    results = []
    for position in request.positions:
        try:
            results.append(analyze_position(solver, position, request.options, leaves))
        except p.ProtocolError as exc:
            if not request.batch:
                raise
            results.append({"ok": False, "error": {"code": exc.code, "message": exc.message}})
    timings = {"total_us": round((time.perf_counter() - started) * 1e6, 1)}
    if request.batch:
        return {"v": p.VERSION, "ok": True, "results": results, "timings": timings}
    result = results[0]
    result["timings"]["total_us"] = timings["total_us"]
    return {"v": p.VERSION, **result}


def analyze_position(
    solver: Solver, position: p.Position, options: p.Options, leaves: Leaves | None = None
) -> dict:
    rules = solver.rules
    try:
        if position.cgp is not None:
            if len(position.cgp.split()) >= 4:
                cgp = parse_cgp(rules, position.cgp)
                board, cgp_rack = cgp.board, cgp.racks[0]
            else:
                board, cgp_rack = Board.from_cgp(rules, position.cgp), None
        else:
            board, cgp_rack = Board.from_rows(rules, position.rows), None
    except InputError as exc:
        raise p.ProtocolError(p.BAD_POSITION, str(exc)) from None
    rack = position.rack if position.rack is not None else cgp_rack
    if rack is None:
        raise p.ProtocolError(
            p.MISSING_FIELD, "no rack: give 'rack', or a full CGP with the player's rack"
        )
    started = time.perf_counter()
    try:
        moves = solver.generate_moves(
            board,
            rack,
            mode=position.mode,
            limit=position.limit,
            include_exchanges=options.exchanges,
            rank="equity" if leaves is not None else "score",
            leaves=leaves,
        )
    except InputError as exc:
        raise p.ProtocolError(p.BAD_RACK, str(exc)) from None
    generated = time.perf_counter() - started
    entries = []
    for move in moves:
        breakdown = None
        if options.breakdown:
            breakdown = {"words": [], "bingo": 0}
            if move.kind == "play":
                score = solver.score_play(board, move.play())
                breakdown = {
                    "words": [[w.word, w.coordinate, w.score] for w in score.words],
                    "bingo": score.bingo,
                }
        entries.append(p.move_entry(move, breakdown))
    out = {
        "ok": True,
        "total": moves.total,
        "moves": entries,
        "timings": {"generate_us": round(generated * 1e6, 1)},
    }
    if leaves is not None:
        out["equities"] = [round(e, 3) for e in moves.equities()]
    return out


def run_selfplay(
    request: p.SelfPlayRequest, solver: Solver, started: float, leaves: Leaves | None = None
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
        policies = [EquityPlayer(leaves) if name == "equity" else Greedy() for name in seated]
        try:
            game = play_game(
                solver, seed, players=request.players, check=request.check, policies=policies
            )
        except InvariantError as exc:  # an engine bug: report it with the seed that shows it
            raise p.ProtocolError(p.INTERNAL, f"seed {request.seed + i}: {exc}") from None
        games.append(
            {
                "seed": game.seed,
                "policies": seated,
                "scores": game.scores,
                "turns": len(game.turns),
                "end": game.end,
                "plays": game.plays_generated,
                "move_us": [round(t * 1e6, 1) for t in game.move_times],
                "gcg": game.to_gcg(),
            }
        )
    return {
        "v": p.VERSION,
        "ok": True,
        "games": games,
        "timings": {"total_us": round((time.perf_counter() - started) * 1e6, 1)},
    }
