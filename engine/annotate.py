"""Annotation of recorded games: for every turn, what was played, what was best, what it
cost. Pure computation over a parsed GCG game; client/report.py renders the result."""

from __future__ import annotations

import struct
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from operator import neg

from .endgame import Table, endgame_value
from .errors import InputError, WorkLimitError
from .gcg import EXCHANGE, PASS, PLAY, WITHDRAWN, Game, leave_kept, replay
from .inference import Inference, infer
from .legality import check_rack, unseen_counts
from .notation import format_rack, parse_rack
from .position import Position
from .simulate import Candidate, Simulation
from .solver import Solver
from .winpct import model_for

ANALYSED = (PLAY, EXCHANGE, PASS)
# A game's empty-bag turns share one search budget, in positions (the same answer on every
# machine, so a fleet's annotation equals one process's): each solve may take half of what
# is left, so the first turn, the hardest, gets most, and the later ones, which its table
# mostly answers, still get some. The job's time stops it too; past either, the answer
# says "not proven".
ENDGAME_NODES = 8_000_000
ENDGAME_LEAST_NODES = 20_000  # each solve's at least: a shallow answer when the rest is spent
ENDGAME_TABLE_MB = 32
INFERRED_TOP = 5  # leaves and letters a turn's inference lists


Budget = Callable[[], "float | None"]  # seconds left for the next search (None: no limit)


PREENDGAME_CANDIDATES = 16  # moves a turn's pre-endgame values (the play made and the pass too)
PREENDGAME_SHOWN = 5
PREENDGAME_SECONDS = 20.0  # a turn's pre-endgame at most: past it, its last finished stage


def _float32(value: float) -> float:
    """`value` rounded to a C float, the precision of the generator's equities."""
    return struct.unpack("f", struct.pack("f", value))[0]


def annotate_game(
    game: Game,
    solver: Solver,
    top: int = 5,
    leaves=None,
    budget: Budget | None = None,
    sim: Simulation | None = None,
    lexicon: str | None = None,
    infer_racks: int = 0,
    preendgame: tuple | None = None,
) -> dict:
    """A msgpack/JSON-ready map: players, one entry per move line, per-player summary,
    and the lexicon's name (`lexicon`, else the record's #lexicon).

    A turn of a play, exchange or pass with a known rack gets the best `top` plays, the
    rank of the play made among all legal plays (1 = best; ties share a rank), points
    given up against the best, the recomputed score of the play made (flagged when the
    record says otherwise), and which of its words the lexicon does not know. With
    leave values, the best plays are ranked by equity and each turn also gets the
    equity of the play made and the equity given up. `budget`, when given, is asked
    before each search how many seconds it may take (it raises when none are left).
    With `sim` (and leaves), each play is also simulated against the top candidates:
    `sim` lists them by simulated value and `sim_rank` places the play made among them.
    With `infer_racks` (and leaves, two players), each play and exchange whose watcher's
    rack the record gives gets `inferred`: what its maker probably kept (engine.inference,
    reading no more than `infer_racks` racks), and the watcher's simulation on the next turn
    draws the maker's rack from it.
    """
    rules = solver.rules
    players = [{"nick": p.nick, "name": p.name} for p in game.players]
    endgames = _Endgames(solver)
    turns = []
    totals: dict[int, int] = {}  # each player's recorded total so far
    events = list(replay(game, rules))
    reads = infer_racks if leaves is not None and len(players) == 2 else 0
    inferences: dict[int, Inference] = {}  # by the turn whose simulation draws from it
    runs = scoreless_runs(events)
    for index, turn in enumerate(events):
        ev = turn.event
        others = [t for seat, t in totals.items() if seat != ev.player_index]
        lead = ev.total - ev.score - max(others, default=0)  # the mover's, before the move
        totals[ev.player_index] = ev.total
        entry: dict = {
            "index": index,
            "line": ev.line,
            "player": ev.player_index,
            "nick": ev.player,
            "kind": ev.kind,
            "rack": ev.rack,
            "recorded_score": ev.score,
            "recorded_total": ev.total,
            "board": turn.board.to_cgp(),
        }
        if ev.kind == PLAY:
            words = [w.word for w in turn.score.words]
            entry.update(
                played=turn.play.notation,
                placed=[list(p) for p in turn.play.placed],
                score=turn.score.total,
                score_matches=turn.score.total == ev.score,
                words=words,
                invalid_words=[w for w in words if not solver.lexicon.contains(w.upper())],
                bingo=bool(turn.score.bingo),
            )
        elif ev.kind == EXCHANGE:
            entry.update(played=f"-{ev.tiles}", score=0, score_matches=ev.score == 0)
        elif ev.kind == PASS:
            entry.update(played="-", score=0, score_matches=ev.score == 0)
        elif ev.tiles:
            entry["tiles"] = ev.tiles  # an end rack's tiles, an exchange's
        if ev.kind in ANALYSED:
            prior = inferences.pop(index, None)  # what the opponent kept with their move
            endgames.scoreless = runs[index]
            entry.update(
                _alternatives(solver, turn, entry, top, leaves, budget, sim, lead, endgames, prior)
            )
            if preendgame is not None and entry.get("analysed") and entry.get("legal"):
                advice = _preendgame(
                    solver, turn, entry, leaves, budget, lead, preendgame, runs[index]
                )
                if advice is not None:
                    entry["preendgame"] = advice
        if reads and ev.kind in (PLAY, EXCHANGE):
            reply = _reply(events, index)
            found, entry["inferred"] = _inferred(solver, events, index, reply, leaves, reads,
                                                 budget)  # fmt: skip
            if found is not None and not found.empty:
                inferences[reply] = found
        turns.append(entry)
    if len(players) == 2:
        _split_unseen(rules, turns)
    return {
        "players": players,
        "turns": turns,
        "summary": _summary(players, turns),
        "lexicon": lexicon or game.lexicon,
        "source": game.source,
    }


def scoreless_runs(events: list) -> list[int]:
    """For each replayed turn, the scoreless turns in a row before it (passes, exchanges,
    plays scoring nothing, a phony taken back): what the end rules count."""
    runs, count, before_play = [], 0, 0
    for turn in events:
        runs.append(count)
        kind = turn.event.kind
        if kind in (PASS, EXCHANGE):
            count += 1
        elif kind == PLAY:
            before_play, count = count, 0 if turn.event.score else count + 1
        elif kind == WITHDRAWN:  # the play before it scored nothing after all
            count = before_play + 1
    return runs


def _preendgame(
    solver: Solver, turn, entry: dict, leaves, budget, lead: int, stages, scoreless: int = 0
):
    """A turn with 1 to 4 tiles in the bag: its pre-endgame, the play made valued beside the
    candidates; None for any other turn. scoreless: the scoreless turns in a row before it."""
    from .preendgame import BAG_SIZES, solve_preendgame

    rules = solver.rules
    bag = len(entry["unseen"]) - rules.rack_size
    if bag not in BAG_SIZES:
        return None
    made = entry["played"]
    left = budget() if budget is not None else None  # None: no limit on the job
    seconds = PREENDGAME_SECONDS if left is None else min(left, PREENDGAME_SECONDS)
    try:
        found = solve_preendgame(
            solver, turn.board, turn.event.rack, candidates=PREENDGAME_CANDIDATES, lead=lead,
            leaves=leaves, stages=stages, also=(made,),
            budget_s=seconds, scoreless=scoreless,
        )  # fmt: skip
    except WorkLimitError as exc:
        if budget is not None:
            budget()  # the job's own time error, when its time is up
        return {"bag": bag, "why": str(exc)}
    rows = [
        [p.move.notation, round(p.wins, 4), round(p.ties, 4), round(p.mean, 2), p.stage,
         p.plies or 0, p.exact, p.cut]
        for p in found.plays
    ]  # fmt: skip
    played = next((i for i, p in enumerate(found.plays) if p.move.notation == made), None)
    return {
        "bag": bag,
        "best": rows[:PREENDGAME_SHOWN],
        "made": rows[played] if played is not None else None,
        "made_rank": None if played is None else played + 1,
        "exact": found.exact,
        "budget_hit": found.budget_hit,
        "seconds": round(found.seconds, 3),
    }


def _reply(events: list, index: int) -> int | None:
    """The turn that answers turn `index`: the other player's next move, when the record
    gives their rack and it comes on the board the move left (no challenge between)."""
    turn = events[index]
    after = turn.board.apply(turn.play.placed) if turn.event.kind == PLAY else turn.board
    for i in range(index + 1, len(events)):
        ev = events[i].event
        if ev.player_index == turn.event.player_index or ev.kind not in ANALYSED:
            return None  # another line of the mover's first (a challenge, a withdrawal)
        if not ev.rack or events[i].board is None or events[i].board.cells != after.cells:
            return None
        return i
    return None


def _inferred(solver: Solver, events: list, index: int, reply: int | None, leaves, racks: int,
              budget: Budget | None) -> tuple[Inference | None, dict]:  # fmt: skip
    """What the maker of turn `index` probably kept, read by the player of `reply` (their
    rack the one the record gives there): the Inference and the turn's `inferred` map
    (the likeliest leaves and letters, or `why` none was read)."""
    if reply is None:
        return None, {"why": "the record does not give the watcher's rack on the next turn"}
    turn, ev = events[index], events[index].event
    exchanged = 0
    if ev.kind == EXCHANGE:
        exchanged = int(ev.tiles) if ev.tiles.isdigit() else len(ev.tiles)
    try:
        found = infer(
            solver, turn.board, leaves, turn.play if ev.kind == PLAY else None,
            exchanged=exchanged, observer=events[reply].event.rack, max_racks=racks,
            budget_s=budget() if budget is not None else None, top=INFERRED_TOP,
        )  # fmt: skip
    except InputError as exc:
        return None, {"why": str(exc)}
    except WorkLimitError as exc:
        if budget is not None:
            budget()  # the job's own time error, when its time is up
        return None, {"why": str(exc)}
    letters = [
        [o.letter, round(o.chances[0], 4), round(o.random[0], 4)]
        for o in found.kept.letters[:INFERRED_TOP]
        if o.chances and o.chances[0] > 0
    ]
    return found, {
        "racks": found.explained.racks,
        "draws": found.explained.draws,
        "empty": found.empty,
        "known": found.known,
        "leaves": [[k.leave, round(k.chance, 4)] for k in found.leaves],
        "letters": letters,
    }


def _split_unseen(rules, turns: list[dict]) -> None:
    """Where the unseen tiles of each analysed turn are, when the record says: the
    opponent holds, until they move, the rack the record gives for their next turn; the
    rest is in the bag (`in_bag`, `opponent_holds`). Left out when that rack is not among
    the unseen tiles (a record that does not add up)."""
    for i, turn in enumerate(turns):
        if not turn.get("analysed") or "unseen" not in turn or "opponent_rack" in turn:
            continue
        reply = next(
            (u for u in turns[i + 1 :] if u["player"] != turn["player"] and u["kind"] in ANALYSED),
            None,
        )
        if reply is None or not reply["rack"]:
            continue
        unseen, held = Counter(turn["unseen"]), Counter(reply["rack"])
        if held - unseen:
            continue
        turn["opponent_holds"] = _ordered(rules, held)
        turn["in_bag"] = _ordered(rules, unseen - held)


def _ordered(rules, letters: Counter) -> str:
    """Letters (a blank is '?') in alphabet order, blanks last."""
    return "".join(ch * letters[ch] for ch in rules.alphabet) + "?" * letters["?"]


def _scoring_more(scores: list[int], made: int, sorted_: bool) -> int:
    """How many plays score more than `made` (scores best first when `sorted_`)."""
    if sorted_:
        return bisect_left(scores, -made, key=neg)
    return sum(s > made for s in scores)


def _alternatives(
    solver: Solver,
    turn,
    entry: dict,
    top: int,
    leaves=None,
    budget: Budget | None = None,
    sim: Simulation | None = None,
    lead: int = 0,
    endgames: _Endgames | None = None,
    inference: Inference | None = None,
) -> dict:
    rack = turn.event.rack
    if not rack:
        return {"analysed": False, "why": "the record gives no rack for this turn"}
    try:
        tiles = parse_rack(solver.rules, rack)
        check_rack(solver.rules, tiles)
    except InputError as exc:
        return {"analysed": False, "why": str(exc)}
    if turn.event.kind == PLAY:
        needed = Counter(
            0 if ch.islower() else solver.rules.letter_index[ch] for _, _, ch in turn.play.placed
        )
        if needed - Counter(tiles):
            return {
                "analysed": False,
                "why": f"the play uses tiles not on the recorded rack {rack}",
            }
    seconds = budget() if budget is not None else None
    if leaves is not None:
        moves = solver.generate_moves(
            turn.board, rack, rank="equity", leaves=leaves, budget=seconds
        )
    else:
        moves = solver.generate_moves(turn.board, rack, budget=seconds)
    scores = moves.scores()
    best = moves.fields(lists=True, first=top)
    best_score = (scores[0] if leaves is None else max(scores)) if scores else 0  # ranked
    made = entry["score"]
    if entry.get("kind") == EXCHANGE:
        why = _exchange_fault(turn, tiles, solver.rules)
        legal = why is None
    else:
        why = None
        legal = entry.get("kind") != PLAY or (
            not entry["invalid_words"] and _generated(moves, scores, turn.play.placed, made)
        )
    unseen = _unseen(turn.board, tiles)
    model = model_for(solver.rules)
    unplayed = len(unseen) + len(tiles)
    placed = len(turn.play.placed) if turn.event.kind == PLAY else 0
    extra: dict = {
        "rank_by": "score",
        "unseen": unseen,
        # the win model's chance for the mover (engine/winpct.py): before the move, and
        # after the play made, the opponent then on turn
        "win": round(model.on_turn(lead, unplayed), 3),
        "win_after": round(model.after(lead + entry["score"], unplayed - placed, False), 3),
    }
    kept = leave_kept(turn, solver.rules)
    if kept is not None:
        extra["leave"] = _letters(solver.rules, kept)
    if kept is not None and leaves is not None:
        made_equity = _float32(made + _float32(leaves.value(kept)))  # as the generator adds
        equities = moves.equities() or []
        best_equity = equities[0] if equities else made_equity
        extra.update(
            rank_by="equity",
            equity=round(made_equity, 3),
            equity_given_up=round(max(0.0, best_equity - made_equity), 3),
            best_equities=[round(e, 3) for e in equities[:top]],
            # one precision, one comparison: the plays worth strictly more, in float32 as
            # the generator ranks them (ties share a rank); none for a play not in the lexicon
            equity_rank=1 + bisect_left(equities, -made_equity, key=neg) if legal else None,
        )
    opponent = _opponent_rack(turn.board, tiles)
    if opponent is not None:
        endgames = endgames or _Endgames(solver)
        extra.update(_endgame(endgames, turn, entry, tiles, opponent, moves, top, legal, budget))
    elif sim is not None and leaves is not None and legal and entry["kind"] == PLAY:
        extra.update(_simulated(solver, turn, rack, leaves, moves, sim, budget, lead, inference))
    if opponent is not None:  # the static ranking of an empty bag: no leaves, going out counts
        best = extra.pop("endgame_best")
    if why is not None:
        extra["illegal"] = why
    return {
        **extra,
        "analysed": True,
        "total_plays": len(moves),
        "best": [
            [notation, score, placed, len(placed) == solver.rules.rack_size]
            for notation, score, *_, placed in best
        ],
        "best_leaves": [_letters(solver.rules, _rest(tiles, f[6], solver.rules)) for f in best],
        "rank": 1 + _scoring_more(scores, made, sorted_=leaves is None) if legal else None,
        "legal": legal,
        "given_up": max(0, best_score - made),
        "bingo_available": bool(best) and len(best[0][6]) == solver.rules.rack_size,
    }


def _simulated(
    solver: Solver, turn, rack: str, leaves, moves, sim: Simulation, budget, lead: int,
    inference: Inference | None = None,
) -> dict:  # fmt: skip
    """The top candidates and the play made, ranked by simulation (seeded by the turn):
    [notation, mean, stdev, iterations, dropped, chance of winning] each; `lead` is the
    mover's before the move; `inference`, what the opponent kept (drawn from when given:
    `sim_inferred` true)."""
    equities = moves.equities() or []
    chosen = [
        Candidate(m.notation, m.score, e, m)
        for m, e in zip(moves[: sim.candidates], equities, strict=False)
    ]
    played = turn.play.notation
    if played not in [c.notation for c in chosen]:
        made = next((i for i, m in enumerate(moves) if m.notation == played), None)
        if made is None:
            return {}
        chosen.append(Candidate(played, moves[made].score, equities[made], moves[made]))
    settings = replace(sim, seed=sim.seed * 1_000_003 + turn.event.line)
    stats = settings.run_candidates(
        solver, turn.board, rack, leaves, chosen, lead, budget, inference
    )
    return {
        "sim_inferred": inference is not None,
        "sim": [
            [
                s.notation,
                round(s.mean, 2),
                round(s.stdev, 2),
                s.iterations,
                s.pruned,
                round(s.win_rate, 3),
            ]
            for s in stats
        ],  # fmt: skip
        "sim_rank": 1 + [s.notation for s in stats].index(played),
    }


def _opponent_rack(board, tiles) -> tuple[int, ...] | None:
    """The opponent's rack when the bag is empty: every tile the mover cannot see, when
    they fit on one rack (None while the bag holds tiles, or when none are left)."""
    left = unseen_counts(board, list(tiles), strict=False)
    unseen = tuple(t for t, n in enumerate(left) for _ in range(max(n, 0)))
    return unseen if 0 < len(unseen) <= board.rules.rack_size else None


class _Endgames:
    """One game's exact solves: a table kept from turn to turn (each turn's position and the
    reply to the play made are in the earlier turns' searches) and the positions left of
    the game's budget."""

    def __init__(self, solver: Solver):
        self.solver = solver
        self.nodes_left = ENDGAME_NODES
        self.scoreless = 0  # the scoreless turns in a row before the turn being annotated
        self._table: Table | None = None

    def solve(self, board, mover, other, budget, scoreless: int = 0):
        rules = self.solver.rules
        if self._table is None:
            self._table = Table(ENDGAME_TABLE_MB)
        seconds = budget() if budget is not None else None
        solved = self.solver.solve_endgame(
            board,
            _letters(rules, mover),
            _letters(rules, other),
            budget_s=seconds,
            scoreless_turns=scoreless,
            max_nodes=max(ENDGAME_LEAST_NODES, self.nodes_left // 2),
            table=self._table,
        )
        self.nodes_left -= solved.nodes
        return solved


def _endgame(
    endgames: _Endgames, turn, entry: dict, tiles, opponent, moves, top: int, legal: bool, budget
) -> dict:
    """An empty-bag turn: the plays ranked statically by endgame_equity, and the position
    solved exactly (the value, the winning line, and the value the play made gives up)."""
    rules = endgames.solver.rules
    points = sum(rules.tile_values[t] for t in opponent)
    held = len(tiles)
    fields = moves.fields(lists=True)
    values = [endgame_value(rules, len(f[6]), f[1], held, points) for f in fields]
    order = sorted(range(len(fields)), key=lambda i: (-values[i], i))
    best = [fields[i] for i in order[:top]]

    def solve(board, mover, other, scoreless):
        return endgames.solve(board, mover, other, budget, scoreless)

    before = endgames.scoreless  # the scoreless turns in a row before this one
    last = rules.end.scoreless_turns - 1  # a scoreless turn after this many ends the game
    solved = solve(turn.board, tiles, opponent, before)
    made, exact = None, solved.exact
    if entry["kind"] == PLAY and legal:
        left = _rest(tiles, turn.play.placed, rules)
        if not left:
            made = entry["score"] + rules.end.out_bonus(points)
        elif not entry["score"] and before == last:
            made = _scoreless_end(rules, left, points)
        else:
            after = 0 if entry["score"] else before + 1
            reply = solve(turn.board.apply(turn.play.placed), opponent, left, after)
            made, exact = entry["score"] - reply.value, exact and reply.exact
    elif entry["kind"] == PASS and before == last:
        made = _scoreless_end(rules, tiles, points)
    elif entry["kind"] == PASS:
        reply = solve(turn.board, opponent, tiles, before + 1)
        made, exact = -reply.value, exact and reply.exact
    static_made = (
        endgame_value(rules, len(turn.play.placed), entry["score"], held, points)
        if entry["kind"] == PLAY
        else 0
    )
    return {
        "rank_by": "endgame",
        "opponent_rack": _letters(rules, opponent),
        "endgame_best": best,
        "best_equities": [values[i] for i in order[:top]],
        "equity": static_made,
        "equity_rank": 1 + sum(v > static_made for v in values) if legal else None,
        "equity_given_up": max(0, solved.value - made) if made is not None else None,
        "endgame": {
            "value": solved.value,
            "line": [m.notation for m in solved.moves],
            "scores": [m.score for m in solved.moves],
            "exact": exact,
            "depth": solved.depth,
            "nodes": solved.nodes,
            "made_value": made,
            "value_lost": solved.value - made if made is not None else None,
        },
    }


def _scoreless_end(rules, mine, their_points: int) -> int:
    """The spread a turn that ends the game by scoreless turns gains its player: each side
    loses its own tiles' value when the ruleset says so."""
    if not rules.end.scoreless_loses_own:
        return 0
    return their_points - sum(rules.tile_values[t] for t in mine)


def _generated(moves, scores: list[int], placed, score: int) -> bool:
    """Whether the play placing `placed` for `score` is one the generator found: a play
    is legal exactly when it is among every legal play (the oracle tests prove the list
    complete), and only the few plays of the same score need reading."""
    want = frozenset(tuple(p) for p in placed)
    i = -1
    while True:
        try:
            i = scores.index(score, i + 1)
        except ValueError:
            return False
        if frozenset(moves.placed(i)) == want:
            return True


def _rest(tiles, placed, rules) -> list[int]:
    """The rack's tiles left after placing `placed` (blanks are tile 0)."""
    left = list(tiles)
    for _r, _c, ch in placed:
        left.remove(0 if ch.islower() else rules.letter_index[ch])
    return left


def _letters(rules, tiles) -> str:
    """Tiles as rack text in alphabet order, blanks last as '?'."""
    return "".join(rules.alphabet[t - 1] for t in sorted(t for t in tiles if t)) + "?" * sum(
        1 for t in tiles if t == 0
    )


def _exchange_fault(turn, tiles: tuple[int, ...], rules) -> str | None:
    """Why the exchange recorded is not one the rules allow (the bag below the ruleset's
    minimum, more tiles than it holds, tiles not on the rack), or None."""
    bag = Position.of(turn.board, format_rack(rules, tiles)).bag_size()
    back = turn.event.tiles
    if back.isdigit():
        count = int(back)
    else:
        try:
            put = parse_rack(rules, back)
        except InputError as exc:
            return f"the tiles exchanged: {exc}"
        if Counter(put) - Counter(tiles):
            return f"-{back} puts back tiles not on the rack {format_rack(rules, tiles)}"
        count = len(put)
    most = rules.max_exchange(bag)
    if not 1 <= count <= most:
        return (
            f"an exchange of {count} with {bag} tile(s) in the bag: the {rules.name} rules "
            f"allow one only while the bag holds {rules.exchange_min_bag} or more, and of "
            "no more tiles than it holds"
        )
    return None


def _unseen(board, rack: list[int]) -> str:
    """The tiles the player to move cannot see (the bag and the other racks): the full set
    less the board and the rack, in alphabet order, blanks last."""
    left = unseen_counts(board, rack, strict=False)
    return "".join(ch * n for ch, n in zip(board.rules.alphabet, left[1:], strict=True)) + (
        "?" * left[0]
    )


def _summary(players: list[dict], turns: list[dict]) -> list[dict]:
    out = []
    for seat, player in enumerate(players):
        mine = [t for t in turns if t["player"] == seat]
        analysed = [t for t in mine if t.get("analysed")]
        given_up = sum(t["given_up"] for t in analysed)
        out.append(
            {
                "nick": player["nick"],
                "final": mine[-1]["recorded_total"] if mine else 0,
                "turns": len([t for t in mine if t["kind"] in ANALYSED]),
                "analysed": len(analysed),
                "given_up": given_up,
                "average_given_up": round(given_up / len(analysed), 2) if analysed else 0.0,
                "best_plays": sum(1 for t in analysed if t["given_up"] == 0),
                "bingos": sum(1 for t in mine if t.get("bingo")),
                "bingos_missed": sum(
                    1 for t in analysed if t["bingo_available"] and not t.get("bingo")
                ),
                "score_mismatches": sum(1 for t in mine if t.get("score_matches") is False),
                "equity_given_up": round(sum(t.get("equity_given_up") or 0.0 for t in analysed), 2),
                "phonies": sum(1 for t in mine if t.get("invalid_words")),
            }
        )
    return out
