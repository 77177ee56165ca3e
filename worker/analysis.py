"""Analysis requests (kinds "analyze" and "batch") run against the engine: each position
checked, its plays generated and ranked, cut to what the request and the server allow."""

from __future__ import annotations

from anchor.client import protocol as p
from anchor.engine import Board, Position, Solver
from anchor.engine.analysis import AnalysisOptions, analyze
from anchor.engine.leaves import Leaves

from .errors import engine_errors
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


def engine_position(
    registry: LexiconRegistry,
    request,
    cgp: str | None = None,
    rows: tuple[str, ...] | None = None,
    rack: str | None = None,
    opponent: str | None = None,
) -> tuple[Solver, Position]:
    """A request's position (a CGP, full or its board field, or board rows) as the engine's
    Position, and the solver it calls for: a CGP's opcodes checked, its `lex` choosing the
    lexicon when the request names none. `rack`/`opponent` replace the CGP's racks; a `rack`
    given alone leaves the opponent's unknown (the CGP's belonged with the CGP's rack)."""
    rules = registry.rules(request.ruleset)
    lexicon = request.lexicon
    if rack is not None and opponent is None:
        opponent = ""
    with engine_errors(p.BAD_POSITION):
        if cgp is not None:
            found = Position.read(rules, cgp).with_racks(rack, opponent)
            named = found.lexicon_named(request.lexicon)
            if request.lexicon is None and named is not None:
                lexicon = _served(registry, named)
        else:
            found = Position.of(Board.from_rows(rules, rows), rack or "", opponent)
    return registry.solver(request.ruleset, lexicon), found


def _served(registry: LexiconRegistry, named: str | None) -> str | None:
    """The lexicon a CGP names, as this service serves it (unknown_lexicon when it doesn't)."""
    if named is None or named in registry.paths:
        return named
    served = registry.served(named)
    if served is None:
        known = ", ".join(sorted(registry.paths)) or "none"
        raise p.ProtocolError(
            p.UNKNOWN_LEXICON, f"the CGP names lexicon {named!r}; this service has: {known}"
        )
    return served


def analyze_position(
    registry: LexiconRegistry,
    request: p.Request,
    position: p.Position,
    leaves: Leaves | None = None,
    max_moves: int | None = None,
    budget: float | None = None,
) -> p.Analysis:
    """One position of a request: one engine call (engine/analysis.py analyze), which
    checks it and ranks its plays as the bag decides, cut to the position's limit or
    `max_moves`."""
    solver, found = engine_position(registry, request, position.cgp, position.rows, position.rack)
    if not found.rack and position.rack is None:
        raise p.ProtocolError(
            p.MISSING_FIELD, "no rack: give 'rack', or a full CGP with the player's rack"
        )
    limit = position.limit if position.limit is not None else max_moves
    capped = position.limit is None and limit is not None
    options = AnalysisOptions(
        mode=position.mode,
        limit=limit,
        count_all=capped,  # all plays were asked for: count them, send the cap's worth
        exchanges=request.options.exchanges,
        breakdown=request.options.breakdown,
        leaves=leaves,
        budget=budget,
    )
    with engine_errors(p.BAD_POSITION):
        ranked = analyze(solver, found, options)
    truncated = capped and ranked.total is not None and ranked.total > limit
    return p.Analysis(
        ranked.rows,
        total=ranked.total,
        truncated=truncated or None,
        equities=_rounded(ranked.equities) if ranked.equities is not None else None,
        timings=p.Timings(generate_us=round(ranked.seconds * 1e6, 1)),
    )


def _rounded(equities: list[float]) -> list[float]:
    return [round(e, 3) for e in equities]
