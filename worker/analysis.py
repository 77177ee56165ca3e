"""Analysis requests (kinds "analyze" and "batch") run against the engine: each position
checked, its plays generated and ranked, cut to what the request and the server allow."""

from __future__ import annotations

import time

from anchor.client import protocol as p
from anchor.engine import Board, InputError, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.legality import check_position, check_rack, fits, unseen_counts
from anchor.engine.notation import parse_rack

from .registry import LexiconRegistry


def run_analysis(
    request: p.Request, registry: LexiconRegistry, limits: p.Limits, budget
) -> p.Analysis | p.Batch:
    """Every position of the request; in a batch a bad position fails alone. `budget()`:
    seconds left (raises `timeout` when none are)."""
    registry.solver(request.ruleset, request.lexicon)  # an unknown name fails the whole request
    leaves = None
    if request.rank == "equity":
        leaves = registry.leaves(request.ruleset, request.lexicon, request.leaves)
    results: list[p.Analysis | p.Failure] = []
    size = 0
    for position in request.positions:
        try:
            result = analyze_position(registry, request, position, leaves, limits.moves, budget())
        except p.ProtocolError as exc:
            if not request.batch or exc.code == p.TIMEOUT:
                raise
            result = p.Failure(exc.code, exc.message)
        results.append(result)
        if limits.result_bytes is not None:
            size += _packed_bound(result)
            if size > limits.result_bytes:  # the cheap bound says maybe: pack to know
                size = len(p.pack([r.to_entry() for r in results]))
                if size > limits.result_bytes:
                    raise p.ProtocolError(
                        p.RESULT_TOO_LARGE,
                        f"the result would be over this server's cap of "
                        f"{limits.result_bytes:,} bytes; ask for fewer moves ('limit') or "
                        "fewer positions",
                    )
    return p.Batch(tuple(results)) if request.batch else results[0]


def _packed_bound(result: p.Analysis | p.Failure) -> int:
    """At least the msgpack size of one position's result, without packing it: the
    result-size cap is checked as positions finish, and packing each twice would cost a
    batch as much as ranking its moves. Strings count 4 bytes a character (UTF-8)."""
    if isinstance(result, p.Failure):
        return len(p.pack(result.to_entry()))  # small
    size = 160 + 9 * len(result.equities or ())
    for entry in result.moves:
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
) -> p.Analysis:
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
    return p.Analysis(
        entries,
        total=moves.total,
        truncated=truncated or None,
        equities=_rounded(moves.equities()) if leaves is not None else None,
        timings=p.Timings(generate_us=round(generated * 1e6, 1)),
    )


def _rounded(equities: list[float]) -> list[float]:
    return [round(e, 3) for e in equities]


def _with_breakdown(solver, board, move) -> list:
    """A move's result entry with its words and bingo bonus (options.breakdown)."""
    breakdown = {"words": [], "bingo": 0}
    if move.kind == "play":
        score = solver.score_play(board, move.play())
        breakdown = {
            "words": [[w.word, w.coordinate, w.score] for w in score.words],
            "bingo": score.bingo,
        }
    return [*move.entry(), breakdown]


def _empty_bag_position(
    solver, board, rack: str, position, options, limit, points: int, budget
) -> p.Analysis:
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
        entries = [fields[i] if i >= 0 else passed.entry() for i in order]
    return p.Analysis(
        entries,
        total=total,
        equities=_rounded([float(values[i]) if i >= 0 else 0.0 for i in order]),
        timings=p.Timings(generate_us=round(generated * 1e6, 1)),
    )
