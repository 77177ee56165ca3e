/*
 * anchor.engine._movegen: Monte Carlo playouts (playout.h).
 */
#include "core.h"
#include "playout.h"

/* The most tiles one exchange may put back with `bag` tiles in the bag: none below the
 * ruleset's minimum, never more than the bag holds or a rack (engine/rules.py's
 * max_exchange). */
static inline int exchange_most(const Rules *r, size_t bag) {
    if (bag < (size_t)r->exchange_min_bag) return 0;
    return bag < (size_t)r->rack_size ? (int)bag : r->rack_size;
}

static int rack_points(const Rules *r, const uint8_t *rack) {
    int sum = 0;
    for (int t = 1; t <= r->alphabet; t++) sum += rack[t] * r->values[t];
    return sum;
}

/* The value of keeping these tiles (0 for none, or for a full rack: KLV2 lists leaves of
 * fewer tiles than a rack holds). */
static double kept_value(const Playout *p, const uint8_t *rack) {
    uint8_t leave[MAX_RACK];
    int len = 0;
    for (int t = 0; t <= p->g->rules.alphabet; t++)
        for (int c = 0; c < rack[t] && len < MAX_RACK; c++) leave[len++] = (uint8_t)t;
    if (len == 0 || len >= p->g->rules.rack_size) return 0.0;
    return (double)klv_value(p->klv, leave, len);
}

/* A sub-rack's tiles in the order Python's exchange list sorts them: letters ascending,
 * blanks (numbered past the letters here) last. Returns how many. */
static int exchange_tiles(const Rules *r, const uint8_t *counts, uint8_t out[MAX_RACK]) {
    int n = 0;
    for (int t = 1; t <= r->alphabet; t++)
        for (int c = 0; c < counts[t] && n < MAX_RACK; c++) out[n++] = (uint8_t)t;
    for (int c = 0; c < counts[0] && n < MAX_RACK; c++) out[n++] = (uint8_t)(r->alphabet + 1);
    return n;
}

/* Whether sub-rack a comes before sub-rack b (the same size) in that enumeration. */
static int exchange_before(const Rules *r, const uint8_t *a, const uint8_t *b) {
    uint8_t x[MAX_RACK], y[MAX_RACK];
    int n = exchange_tiles(r, a, x);
    exchange_tiles(r, b, y);
    for (int i = 0; i < n; i++)
        if (x[i] != y[i]) return x[i] < y[i];
    return 0;
}

/* The best exchange or the pass for `rack`, by leave value (engine/moves.py's
 * _best_exchange): the pass only when keeping everything is worth strictly more; among
 * equal exchanges the fewest tiles, then the first in enumeration order. */
static void best_exchange(const Playout *p, const uint8_t *rack, const uint16_t *steps, const float *table,
                          size_t keys, int most, Turn *out, float *value) {
    const Rules *r = &p->g->rules;
    uint8_t tile[MAX_RACK], used[MAX_RACK] = {0};
    int distinct = rack_distinct(r, rack, tile);
    float best = -INFINITY;
    int best_size = 0;
    uint8_t best_back[MAX_LETTERS + 1] = {0};
    while (next_subrack(used, tile, distinct, rack)) { /* every non-empty sub-multiset */
        int size;
        size_t key = subrack_key(used, tile, distinct, steps, &size);
        if (size > most) continue; /* more than the bag holds */
        float v = key < keys ? table[key] : 0.0f;
        uint8_t back[MAX_LETTERS + 1] = {0};
        for (int e = 0; e < distinct; e++) back[tile[e]] = used[e];
        if (v > best || (v == best && (size < best_size ||
                                       (size == best_size && exchange_before(r, back, best_back))))) {
            best = v;
            best_size = size;
            memcpy(best_back, back, sizeof back);
        }
    }
    float passed = keys ? table[0] : 0.0f;
    memset(out, 0, sizeof *out);
    if (passed > best) {
        out->kind = TURN_PASS;
        *value = passed;
    } else {
        out->kind = TURN_EXCHANGE;
        memcpy(out->back, best_back, sizeof best_back);
        *value = best;
    }
}

/* Whether the passes hold what preparing p->board whole gives (playouts(check=True)). */
static int board_as_prepared(Playout *p) {
    const Rules *r = &p->g->rules;
    const uint64_t all = every_letter(r);
    for (int dir = 0; dir < 2; dir++) {
        const Search *a = &p->passes[dir];
        Search *b = p->scratch;
        attach(b, p->g);
        prepare_pass(b, r, p->board, dir, all);
        if (!pass_equal(&a->pass, &b->pass)) return 0;
    }
    return 1;
}

/* A play's record as a playout turn: the tiles it lays and where. */
static void record_turn(const Rules *r, const MoveRecord *m, Turn *turn) {
    turn->kind = TURN_PLAY;
    turn->score = m->score;
    turn->count = 0;
    int step = m->dir ? r->cols : 1, at = m->row * r->cols + m->col;
    for (int i = 0; i < m->len && turn->count < MAX_RACK; i++)
        if (m->tiles[i]) {
            turn->square[turn->count] = (uint16_t)(at + i * step);
            turn->cell[turn->count++] = m->tiles[i];
        }
}

/* The empty bag's values as a leave table (engine/endgame.py's EndValues), for `rack`:
 * nothing for tiles kept, the going-out adjustment `bonus` for keeping none, moved half a
 * point towards zero. Values are whole points, so a play going out then ranks just below
 * one that does not and is worth the same, which scores more (just above when the
 * adjustment is negative): ranked by equity, plays come in static_choice's order of
 * value, then score, then generation. Returns the number of keys. */
static size_t end_values(const Rules *r, const uint8_t *rack, int32_t bonus, uint16_t steps[MAX_LETTERS + 1],
                         float *table) {
    size_t radix = 1;
    memset(steps, 0, (MAX_LETTERS + 1) * sizeof *steps);
    for (int t = 0; t <= r->alphabet; t++) {
        if (!rack[t]) continue;
        steps[t] = (uint16_t)radix;
        radix *= (size_t)rack[t] + 1;
    }
    memset(table, 0, radix * sizeof *table);
    table[radix - 1] = (float)bonus + (bonus > 0 ? -0.5f : bonus < 0 ? 0.5f : 0.0f);
    return radix;
}

/* With the bag empty: the play of the best score plus the going-out adjustment (ties: the
 * higher score, then generation order, as engine/endgame.py's static_choice reads a list
 * ranked by score), or the pass. Found best-first, ranked by equity on end_values: the
 * whole ranking cost as much as a search with leaves (11% of a self-played game). */
static int empty_bag_turn(Playout *p, int side, Turn *turn, MoveRecord *chosen) {
    const Rules *r = &p->g->rules;
    const uint8_t *rack = p->rack[side];
    uint16_t steps[MAX_LETTERS + 1];
    const int32_t bonus = p->out_factor * rack_points(r, p->rack[1 - side]);
    float *table = p->table + ((size_t)side << r->rack_size);
    size_t keys = end_values(r, rack, bonus, steps, table);
    p->table_valid[side] = 0;
    LeaveTable values = {steps, table, keys, NULL, NULL};
    MoveBuf *buf = &p->buf;
    buf->count = buf->total = buf->seq = 0;
    buf->pruned = buf->has_floor = 0;
    SearchArgs args = p->args;
    args.leaves = &values;
    int failed = search_moves(p->g, p->board, rack, p->held[side], &args, p->passes, buf);
    if (failed) return failed;
    long best = -1;
    for (size_t i = 0; i < buf->count; i++)
        if (best < 0 || buf->equity[i] > buf->equity[best] ||
            (buf->equity[i] == buf->equity[best] && buf->order[i] < buf->order[best]))
            best = (long)i;
    memset(turn, 0, sizeof *turn);
    turn->kind = TURN_PASS;
    if (best >= 0) record_turn(r, &buf->items[best], turn);
    if (best >= 0 && chosen) *chosen = buf->items[best];
    return 0;
}

/* The rows of pass `now` that differ from those of `was` in anything a search reads: a
 * bit for each. */
static uint32_t changed_lines(const Pass *now, const Pass *was) {
    uint32_t out = 0;
    for (int row = 0, at = 0; row < now->rows; row++, at += now->cols) {
        const size_t n = (size_t)now->cols;
        if (now->anchors[row] != was->anchors[row] || memcmp(now->cells + at, was->cells + at, n) ||
            memcmp(now->cross + at, was->cross + at, n * sizeof *now->cross) ||
            memcmp(now->cross_score + at, was->cross_score + at, n * sizeof *now->cross_score) ||
            memcmp(now->anchor + at, was->anchor + at, n))
            out |= (uint32_t)1 << row;
    }
    return out;
}

/* The opponent's best BASE_PLAYS plays on the position itself, from `rack`, into p->base,
 * ranked in p->base_rank. 1, or -1 when they cannot be had (FAIL_ codes are the caller's
 * to raise: the search it stands for will meet them again). */
static int base_replies(Playout *p, const uint8_t *rack, int held) {
    Search *s = p->passes + 5; /* two of their own: the position's passes are only read */
    for (int dir = 0; dir < 2; dir++) {
        attach(&s[dir], p->g);
        pass_copy(&s[dir].pass, &p->start[dir].pass);
    }
    MoveBuf *b = &p->base;
    b->count = b->total = b->seq = 0;
    b->pruned = b->has_floor = 0;
    SearchArgs args = p->args;
    args.limit = BASE_PLAYS;
    args.lines = NULL;
    if (search_moves(p->g, p->position, rack, held, &args, s, b)) return -1;
    for (size_t i = 0; i < b->count; i++) p->base_rank[i] = i;
    for (size_t i = 1; i < b->count; i++) /* a few plays: insertion, best first */
        for (size_t j = i; j > 0; j--) {
            size_t x = p->base_rank[j], y = p->base_rank[j - 1];
            if (b->equity[x] < b->equity[y] || (b->equity[x] == b->equity[y] && b->order[x] > b->order[y])) break;
            p->base_rank[j] = y;
            p->base_rank[j - 1] = x;
        }
    p->base_complete = b->count < (size_t)BASE_PLAYS;
    memcpy(p->base_rack, rack, sizeof p->base_rack);
    return 1;
}

/* The opponent's first reply on a candidate's board, into buf (p->args.leaves set): the
 * plays on the lines the candidate left as they were are the position's own, so the best
 * of them is the first such among p->base, and only the changed lines are searched, to
 * beat it. The same play as searching the whole board: tie-breaking by generation order
 * compares anchors first, and lines keep their anchors. Searches the whole board when the
 * base cannot tell (every base play on a changed line, more plays than it holds). */
static int reply_search(Playout *p, int side, MoveBuf *buf) {
    const uint8_t *rack = p->rack[side];
    if (p->base_state == 0) p->base_state = base_replies(p, rack, p->held[side]);
    uint32_t lines[2] = {0, 0};
    const MoveRecord *seed = NULL;
    size_t at = 0;
    int whole = p->base_state < 0 || memcmp(p->base_rack, rack, sizeof p->base_rack) != 0 ||
                p->passes[0].pass.empty_board != p->start[0].pass.empty_board;
    for (int dir = 0; dir < 2 && !whole; dir++) lines[dir] = changed_lines(&p->passes[dir].pass, &p->start[dir].pass);
    for (size_t i = 0; i < p->base.count && !whole && !seed; i++) {
        at = p->base_rank[i];
        const MoveRecord *m = &p->base.items[at];
        if (!(lines[m->dir] >> (m->dir ? m->col : m->row) & 1)) seed = m;
    }
    if (whole || (!seed && !p->base_complete))
        return search_moves(p->g, p->board, rack, p->held[side], &p->args, p->passes, buf);
    if (seed) movebuf_seed(buf, seed, p->base.equity[at], p->base.order[at]);
    if (!lines[0] && !lines[1]) return 0;
    SearchArgs args = p->args;
    args.lines = lines;
    return search_moves(p->g, p->board, rack, p->held[side], &args, p->passes, buf);
}

/* The side's best move by equity: the top play, or the best exchange (or pass) when it is
 * worth more and the bag holds a rack; the pass when nothing else is possible. Returns 0,
 * or FAIL_MEMORY / FAIL_TIME from the search. */
static int best_turn(Playout *p, int side, Turn *turn, MoveRecord *chosen) {
    const Rules *r = &p->g->rules;
    const uint8_t *rack = p->rack[side];
    if (p->head == p->tail) return empty_bag_turn(p, side, turn, chosen);
    float *table = p->table + ((size_t)side << r->rack_size);
    if (!p->table_valid[side] || memcmp(p->table_rack[side], rack, sizeof p->table_rack[side]) != 0) {
        p->table_keys[side] = leave_fill(p->klv, rack, p->table_steps[side], table, p->table_best[side],
                                         p->table_best_blank[side]);
        memcpy(p->table_rack[side], rack, sizeof p->table_rack[side]);
        p->table_valid[side] = 1;
    }
    const uint16_t *steps = p->table_steps[side];
    const size_t keys = p->table_keys[side];
    LeaveTable leaves = {steps, table, keys, p->table_best[side], p->table_best_blank[side]};
    MoveBuf *buf = &p->buf;
    buf->count = buf->total = buf->seq = 0;
    buf->pruned = buf->has_floor = 0;
    p->args.leaves = &leaves;
    int failed = p->replying && p->share_replies ? reply_search(p, side, buf)
                                                 : search_moves(p->g, p->board, rack, p->held[side], &p->args, p->passes, buf);
    if (failed) return failed;
    p->generated += buf->total;
    long best = -1;
    for (size_t i = 0; i < buf->count; i++)
        if (best < 0 || buf->equity[i] > buf->equity[best] ||
            (buf->equity[i] == buf->equity[best] && buf->order[i] < buf->order[best]))
            best = (long)i;
    memset(turn, 0, sizeof *turn);
    turn->kind = TURN_PASS;
    const int most = exchange_most(r, p->tail - p->head);
    if (most && p->held[side]) {
        /* an exchange is worth the best leave of the tiles it keeps, the pass that of the
         * whole rack: the search's bounds hold the best leave for each number of tiles
         * given up, so the exchanges are looked at only when one could beat the play */
        float ceiling = keys ? table[0] : 0.0f;
        for (int k = 1; k <= most; k++) ceiling = max_bound(ceiling, p->table_best[side][k]);
        float value = -INFINITY;
        if (best < 0 || buf->equity[best] < ceiling) best_exchange(p, rack, steps, table, keys, most, turn, &value);
        if (best >= 0 && buf->equity[best] < value) best = -1; /* a play wins a tie */
    }
    if (best >= 0) record_turn(r, &buf->items[best], turn);
    if (best >= 0 && chosen) *chosen = buf->items[best];
    return 0;
}

/* Make `turn` for `side`, keep what is left, refill from the bag; with `searched_after`, lay
 * its tiles on the passes too, for the search on the board it leaves. Returns 1 when the
 * side went out with the bag empty (the game is over). */
static int make_turn(Playout *p, int side, const Turn *turn, int searched_after, double *spread) {
    const Rules *r = &p->g->rules;
    uint8_t *rack = p->rack[side];
    if (turn->kind == TURN_PLAY) {
        for (int i = 0; i < turn->count; i++) {
            p->board[turn->square[i]] = turn->cell[i];
            rack[(turn->cell[i] & BLANK_FLAG) ? 0 : turn->cell[i]]--;
        }
        p->held[side] -= turn->count;
        for (int dir = 0; dir < 2 && searched_after; dir++)
            place_tiles(&p->passes[dir], r, turn->square, turn->cell, turn->count);
    } else if (turn->kind == TURN_EXCHANGE) {
        for (int t = 0; t <= r->alphabet; t++) {
            rack[t] -= turn->back[t];
            p->held[side] -= turn->back[t];
        }
    }
    memcpy(p->kept[side], rack, sizeof p->kept[side]);
    p->has_kept[side] = 1;
    *spread += side == 0 ? turn->score : -turn->score;
    while (p->held[side] < r->rack_size && p->head < p->tail) {
        rack[p->bag[p->head++]]++;
        p->held[side]++;
    }
    if (turn->kind == TURN_EXCHANGE) /* back in the bag, in rack order: letters, then blanks */
        for (int k = 1; k <= r->alphabet + 1; k++) {
            int t = k == r->alphabet + 1 ? 0 : k;
            for (int c = 0; c < turn->back[t]; c++) p->bag[p->tail++] = (uint8_t)t;
        }
    return p->held[side] == 0 && p->head == p->tail;
}

/* One playout of `candidate` from the position in p (board, our rack in rack[0]), the
 * opponent's rack and the bag coming from `order` (n tiles). The bag must have room for
 * n + MAX_RACK * plies tiles. Returns 0, the value in *value and in *unplayed the tiles
 * not on the board when it stops (bag and racks; 0 when a side went out and the game is
 * over), or a FAIL_ code. */
int playout(Playout *p, const uint8_t *board, const uint8_t *mine, const Turn *candidate,
                   const uint8_t *order, size_t n, int plies, double *value, long *unplayed) {
    const Rules *r = &p->g->rules;
    memcpy(p->board, board, (size_t)(r->rows * r->cols));
    p->position = board;
    for (int dir = 0; dir < 2; dir++) pass_copy(&p->passes[dir].pass, &p->start[dir].pass);
    memcpy(p->rack[0], mine, sizeof p->rack[0]);
    memset(p->rack[1], 0, sizeof p->rack[1]);
    p->held[0] = p->held[1] = 0;
    for (int t = 0; t <= r->alphabet; t++) p->held[0] += mine[t];
    size_t deal = n < (size_t)r->rack_size ? n : (size_t)r->rack_size;
    for (size_t i = 0; i < deal; i++) p->rack[1][order[i]]++;
    p->held[1] = (int)deal;
    memcpy(p->bag, order + deal, n - deal);
    p->head = 0;
    p->tail = n - deal;
    p->has_kept[0] = p->has_kept[1] = 0;
    double spread = 0.0;
    int side = 0;
    for (int ply = 0; ply <= plies; ply++) {
        Turn turn;
        if (ply) {
            /* searches look at the clock every CLOCK_EVERY steps; small ones never do */
            if (p->args.has_deadline && time_is_up(&p->args.deadline)) return FAIL_TIME;
            p->replying = ply == 1;
            int failed = best_turn(p, side, &turn, NULL);
            if (failed) return failed;
        }
        int over = make_turn(p, side, ply ? &turn : candidate, ply < plies, &spread);
        if (p->scratch && ply < plies && !board_as_prepared(p)) return FAIL_CHECK;
        if (over) {
            int other = p->out_factor * rack_points(r, p->rack[1 - side]);
            *value = spread + (side == 0 ? other : -other);
            *unplayed = 0;
            return 0;
        }
        side = 1 - side;
    }
    /* leave values count only while tiles are still to be drawn */
    const int drawing = p->head < p->tail;
    double ours = p->has_kept[0] && drawing ? kept_value(p, p->kept[0]) : 0.0;
    double theirs = p->has_kept[1] && drawing ? kept_value(p, p->kept[1]) : 0.0;
    *value = spread + ours - theirs;
    *unplayed = (long)(p->tail - p->head) + p->held[0] + p->held[1];
    return 0;
}

/* The highest-scoring play (engine/selfplay.py's Greedy: no leave values, the empty bag
 * no different); without one, the whole rack exchanged while the bag holds a rack, else
 * the pass. */
static int score_turn(Playout *p, int side, Turn *turn, MoveRecord *chosen) {
    const Rules *r = &p->g->rules;
    MoveBuf *buf = &p->buf;
    buf->count = buf->total = buf->seq = 0;
    buf->pruned = buf->has_floor = 0;
    SearchArgs args = p->args;
    args.leaves = NULL;
    int failed = search_moves(p->g, p->board, p->rack[side], p->held[side], &args, p->passes, buf);
    if (failed) return failed;
    p->generated += buf->total;
    memset(turn, 0, sizeof *turn);
    if (buf->count) {
        record_turn(r, &buf->items[0], turn);
        *chosen = buf->items[0];
    } else if (p->held[side] && exchange_most(r, p->tail - p->head) >= p->held[side]) {
        turn->kind = TURN_EXCHANGE;
        memcpy(turn->back, p->rack[side], sizeof turn->back);
    } else {
        turn->kind = TURN_PASS;
    }
    return 0;
}

/* A whole two-player game from the empty board, both sides playing as a playout's do
 * (engine/selfplay.py's EquityPlayer; the empty bag by score plus the going-out
 * adjustment), or `by_score` as Greedy does (score_turn): the racks dealt from `order` (n tiles, the first player's first), then
 * each move's tiles drawn from its head, exchanged tiles put back at its tail. It ends
 * when a side goes out with the bag empty or after `scoreless` scoreless turns in a row.
 * The passes must hold the empty board (prepare_pass). Every move goes to `moves` (room
 * for `room`); *count says how many, *out whether the last went out. Returns 0 or a
 * FAIL_ code (FAIL_MEMORY when `room` is too small). */
int selfplay_game(Playout *p, const uint8_t *order, size_t n, int scoreless, int by_score, GameMove *moves,
                  size_t room, size_t *count, int *out) {
    const Rules *r = &p->g->rules;
    memset(p->board, 0, (size_t)(r->rows * r->cols));
    memset(p->rack, 0, sizeof p->rack);
    p->held[0] = p->held[1] = 0;
    p->head = 0;
    p->tail = 0;
    for (size_t i = 0; i < n; i++) {
        int side = i < (size_t)r->rack_size ? 0 : i < 2 * (size_t)r->rack_size ? 1 : -1;
        if (side >= 0) {
            p->rack[side][order[i]]++;
            p->held[side]++;
        } else {
            p->bag[p->tail++] = order[i];
        }
    }
    p->has_kept[0] = p->has_kept[1] = 0;
    *count = 0;
    *out = 0;
    double spread = 0.0;
    for (int side = 0, zeros = 0;; side = 1 - side) {
        if (*count == room) return FAIL_MEMORY;
        if (p->args.has_deadline && time_is_up(&p->args.deadline)) return FAIL_TIME;
        GameMove *m = &moves[(*count)++];
        memset(m, 0, sizeof *m);
        memcpy(m->rack, p->rack[side], sizeof m->rack);
        struct timespec started, done;
        clock_gettime(CLOCK_MONOTONIC, &started);
        const uint64_t before = p->generated;
        int failed = by_score ? score_turn(p, side, &m->turn, &m->record) : best_turn(p, side, &m->turn, &m->record);
        if (failed) return failed;
        clock_gettime(CLOCK_MONOTONIC, &done);
        m->seconds = (double)(done.tv_sec - started.tv_sec) + (double)(done.tv_nsec - started.tv_nsec) * 1e-9;
        m->generated = p->generated - before;
        if (make_turn(p, side, &m->turn, 1, &spread)) {
            *out = 1;
            return 0;
        }
        zeros = m->turn.score == 0 ? zeros + 1 : 0;
        if (zeros >= scoreless) return 0;
    }
}

/* Free what a Playout was given (its passes, table, bag and move buffers). */
void playout_release(Playout *p) {
    free(p->passes);
    free(p->table);
    free(p->bag);
    movebuf_free(&p->buf);
    movebuf_free(&p->base);
}
