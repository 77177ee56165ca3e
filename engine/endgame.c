/*
 * anchor.engine._movegen: the exact endgame solver (endgame.h).
 *
 * One Endgame holds the game as it stands at the node being searched: the board, both
 * racks, the two passes of the generator prepared for that board, and the position's
 * key. A play is made by laying its tiles (place_tiles works out only the squares they
 * touch) and unmade by putting back the passes saved at the node; a pass only hands the
 * turn over. Each ply of the recursion owns its plays, their order and its line.
 */
#include "endgame.h"
#include "endgame_peers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

enum { BOUND_EXACT, BOUND_LOWER, BOUND_UPPER };

#define VALUE_INF (1 << 30)
#define STOPPED (-1) /* e->failed: another thread proved the value or spent the budget */
#define FP_PASS 1u /* the pass's fingerprint; a play's has bit 1 set */

/* A play's place in the order its node tries them: the higher key first. */
typedef struct {
    int64_t key;
    uint32_t index; /* into the ply's plays; their count: the pass */
} Ordered;

/* One ply of the recursion. */
typedef struct {
    MoveBuf buf;    /* the side to move's plays (allocated when the ply is first reached) */
    int has_buf;
    Ordered *order; /* buf.count + 1 entries */
    uint32_t *later; /* plays put off while another thread searches them: as many */
    size_t order_cap;
    Pass saved[2];  /* the passes at this node, kept before a child lays its play on them */
    int has_saved;  /* saved holds this node's passes (a node's children may never need them) */
    int laid;       /* this node laid its parent's play on the passes: the parent puts them back */
    MoveRecord line[ENDGAME_MAX_PLIES]; /* the best line found from here */
    int line_len;
} Ply;

/* What the threads of one solve share. */
typedef struct {
    atomic_int stop;            /* a thread proved the value, or the time or nodes ran out */
    atomic_int proven_by;       /* the helper whose iteration was exact first (0: none yet) */
    atomic_uint_fast64_t nodes; /* every thread's, counted ENDGAME_CLOCK_EVERY + 1 at a time */
    int threads;
    /* The positions some thread is searching now (deep enough to be worth it), by key: a
     * thread puts off such a play until its other plays are searched, by which time the
     * table often holds its value (ABDADA's idea, without the table's own counters). */
    _Atomic uint64_t *busy; /* NULL: nobody to share with (one thread, no peers) */
    uint64_t busy_mask;
    PeerSlot *peer; /* searches of other processes on this table: a value one proves ends ours */
} Shared;

#define BUSY_BITS PEER_BUSY_BITS /* 16,384 keys, 128 KiB */
#define BUSY_DEPTH 3  /* plays searched at least this deep are marked and put off */
/* The first iteration runs on the first thread alone: the shortest endgames are proven
 * there, and starting helpers costs writing every page of the table (7 ms for 64 MiB; such
 * a proof takes 1 ms). From the third iteration on, the records' endgames on two threads
 * took 13.7-14.0 s instead of 12.6-13.4 (bench/endgame_nodes.py). */
#define HELPERS_FROM_DEPTH 3

typedef struct {
    const Core *g;
    const Rules *r;
    const EndRules *end;
    Shared *shared;
    Search passes[2];
    SearchArgs args;
    uint8_t board[MAX_CELLS];
    uint8_t rack[2][MAX_LETTERS + 1];
    int held[2];   /* tiles on each rack */
    int points[2]; /* their value */
    int side;      /* to move: 0 is the side to move at the root */
    /* The position's key is the board's, the rack to move's and the waiting rack's: a
     * function of the position alone, so a table kept across solves (one game's turns,
     * a pre-endgame's draws) answers for positions another solve searched. */
    uint64_t board_key;
    uint64_t rack_keys[2][2]; /* [side][ROLE_MOVE or ROLE_WAIT]: side's rack in each role */
    /* The play just made, on the board and the key but not yet on the passes: a node the
     * table or the depth settles never generates, so it never needs them (laid_play). */
    const uint16_t *pending_square;
    const uint8_t *pending_cell;
    int pending;
    TableEntry *table; /* shared by the threads */
    uint64_t mask;
    Ply *plies_buf;
    uint64_t nodes;
    uint64_t max_nodes; /* 0: no cap */
    uint64_t horizons; /* values resting on a depth cut-off, this iteration */
    int failed;
    int root_best;        /* the root's best play so far (generation index) */
    int32_t *root_rank;   /* the root's plays (by generation index): their canonical numbers */
    uint8_t *root_allowed; /* ... and whether the split searches them */
    size_t root_plays;     /* plays at the root, the pass included */
    int helper;            /* a helper thread: it borrows the root's tables from the first */
    /* a helper's search, and its exact iteration's value and depth */
    int32_t alpha, value;
    int depth;
    int passed, plies;
    pthread_t thread;
} Endgame;

/* A table entry read: 1 when it holds `key` (depth searched, bound kind, value and move
 * then filled in). The whole key is checked against check ^ data, so words of two writes
 * read together are a miss unless their data words are equal. */
static inline int table_read(const TableEntry *t, uint64_t key, int *searched, int *kind, int32_t *value,
                             uint32_t *move) {
    const uint64_t data = __atomic_load_n(&t->data, __ATOMIC_RELAXED);
    if (!data || (__atomic_load_n(&t->check, __ATOMIC_RELAXED) ^ data) != key) return 0;
    *value = (int32_t)(uint32_t)data;
    *move = (uint32_t)(data >> 32 & 0xFFFF);
    *searched = (int)(data >> 56);
    *kind = (int)(data >> 48 & 0xFF);
    return 1;
}

/* `searched` >= 1, so a written entry's data is never 0 (an empty entry's). */
static inline void table_write(TableEntry *t, uint64_t key, int searched, int kind, int32_t value, uint32_t move) {
    const uint64_t data = (uint64_t)(uint32_t)value | (uint64_t)(move & 0xFFFF) << 32 | (uint64_t)kind << 48 |
                          (uint64_t)searched << 56;
    __atomic_store_n(&t->check, key ^ data, __ATOMIC_RELAXED);
    __atomic_store_n(&t->data, data, __ATOMIC_RELAXED);
}

/* splitmix64's finaliser: the keys' random numbers, made on the spot. */
static inline uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

enum { ROLE_MOVE, ROLE_WAIT };
#define KEY_PASSED 0xBB67AE8584CAA73Bull

static inline uint64_t square_key(int square, uint8_t cell) {
    return mix64(0x100000000ull | (uint64_t)square << 8 | cell);
}

/* The key of `count` tiles `tile` on the rack in `role` (none: 0). */
static inline uint64_t rack_key(int role, unsigned tile, int count) {
    return count ? mix64(0x200000000ull | (uint64_t)role << 24 | (uint64_t)tile << 16 | (uint64_t)count) : 0;
}

/* Side `side`'s rack changing from `was` tiles `tile` to `now`, in both roles' keys. */
static inline void rack_changed(Endgame *e, int side, unsigned tile, int was, int now) {
    for (int role = 0; role < 2; role++)
        e->rack_keys[side][role] ^= rack_key(role, tile, was) ^ rack_key(role, tile, now);
}

static inline uint64_t position_key(const Endgame *e, int passed) {
    return e->board_key ^ e->rack_keys[e->side][ROLE_MOVE] ^ e->rack_keys[e->side ^ 1][ROLE_WAIT] ^
           (passed ? KEY_PASSED : 0);
}

/* A play's squares and tiles (the tiles it lays, not those it goes through). */
static int play_tiles(const Rules *r, const MoveRecord *m, uint16_t square[MAX_RACK], uint8_t cell[MAX_RACK]) {
    int n = 0, step = m->dir ? r->cols : 1, at = m->row * r->cols + m->col;
    for (int i = 0; i < m->len && n < MAX_RACK; i++)
        if (m->tiles[i]) {
            square[n] = (uint16_t)(at + i * step);
            cell[n++] = m->tiles[i];
        }
    return n;
}

static uint32_t fingerprint(const Rules *r, const MoveRecord *m) {
    uint16_t square[MAX_RACK];
    uint8_t cell[MAX_RACK];
    int n = play_tiles(r, m, square, cell);
    uint64_t h = 0;
    for (int i = 0; i < n; i++) h = mix64(h ^ ((uint64_t)square[i] << 8 | cell[i]));
    return (uint32_t)(h >> 48) | 2u; /* 16 bits: the table keeps it beside depth and kind */
}

/* Lay a play of the side to move on the board, the rack and the key (not the passes). */
static void lay_play(Endgame *e, const uint16_t *square, const uint8_t *cell, int n) {
    const int side = e->side;
    uint8_t *rack = e->rack[side];
    for (int i = 0; i < n; i++) {
        unsigned from = untile(cell[i]);
        e->board[square[i]] = cell[i];
        e->board_key ^= square_key(square[i], cell[i]);
        rack_changed(e, side, from, rack[from], rack[from] - 1);
        rack[from]--;
        e->points[side] -= tile_points(e->r, cell[i]);
    }
    e->held[side] -= n;
    e->side ^= 1;
}

/* Lay a play and bring the passes up to date with it. */
static void make_play(Endgame *e, const uint16_t *square, const uint8_t *cell, int n) {
    lay_play(e, square, cell, n);
    for (int dir = 0; dir < 2; dir++) place_tiles(&e->passes[dir], e->r, square, cell, n);
}

/* Before the node at `ply` generates: the play that led to it laid on the passes too,
 * the parent's passes saved first if no child of it had needed them yet. */
static void laid_play(Endgame *e, int ply) {
    if (!e->pending) return;
    Ply *parent = &e->plies_buf[ply - 1];
    if (!parent->has_saved) {
        for (int dir = 0; dir < 2; dir++) pass_copy(&parent->saved[dir], &e->passes[dir].pass);
        parent->has_saved = 1;
    }
    for (int dir = 0; dir < 2; dir++) place_tiles(&e->passes[dir], e->r, e->pending_square, e->pending_cell, e->pending);
    e->pending = 0;
    e->plies_buf[ply].laid = 1;
}

/* Take back a play lay_play made (the passes: the caller's business). */
static void lift_play(Endgame *e, const uint16_t *square, const uint8_t *cell, int n) {
    e->side ^= 1;
    const int side = e->side;
    uint8_t *rack = e->rack[side];
    for (int i = 0; i < n; i++) {
        unsigned from = untile(cell[i]);
        e->board[square[i]] = 0;
        e->board_key ^= square_key(square[i], cell[i]);
        rack_changed(e, side, from, rack[from], rack[from] + 1);
        rack[from]++;
        e->points[side] += tile_points(e->r, cell[i]);
    }
    e->held[side] += n;
}

/* What the side to move gains when its play goes out: the other rack's value. */
static inline int32_t out_bonus(const Endgame *e) {
    return (e->end->going_out + (e->end->stuck_loses_own ? 1 : 0)) * e->points[e->side ^ 1];
}

/* The side to move's spread change when the game ends on scoreless turns. */
static inline int32_t scoreless_end(const Endgame *e) {
    return e->end->scoreless_loses_own ? e->points[e->side ^ 1] - e->points[e->side] : 0;
}

/* A guess at a position searched no deeper: the racks' values, as if the game ended. */
static inline int32_t horizon_guess(const Endgame *e) { return e->points[e->side ^ 1] - e->points[e->side]; }

static int by_key(const void *a, const void *b) {
    const Ordered *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The order a node tries its plays in: the table's best first, then plays that go out
 * (by score), then the rest by score less the value of the tiles they keep (a tile kept
 * to the end costs its value twice), the pass last but one before plays that keep much. */
static int order_plays(Endgame *e, Ply *p, uint32_t best) {
    const size_t n = p->buf.count;
    if (p->order_cap < n + 1) {
        size_t cap = p->order_cap ? p->order_cap : 64;
        while (cap < n + 1) cap *= 2;
        Ordered *o = realloc(p->order, cap * sizeof *o);
        if (!o) return FAIL_MEMORY;
        p->order = o;
        uint32_t *later = realloc(p->later, cap * sizeof *later);
        if (!later) return FAIL_MEMORY;
        p->later = later;
        p->order_cap = cap;
    }
    const int side = e->side, held = e->held[side], points = e->points[side];
    for (size_t i = 0; i < n; i++) {
        const MoveRecord *m = &p->buf.items[i];
        int placed = 0, value = 0;
        for (int k = 0; k < m->len; k++)
            if (m->tiles[k]) {
                placed++;
                value += tile_points(e->r, m->tiles[k]);
            }
        int64_t key = placed == held ? ((int64_t)1 << 40) + m->score : (int64_t)m->score * 2 - (points - value);
        if (best > FP_PASS && fingerprint(e->r, m) == best) key = (int64_t)1 << 50;
        p->order[i] = (Ordered){key, (uint32_t)i};
    }
    p->order[n] = (Ordered){best == FP_PASS ? (int64_t)1 << 50 : -(int64_t)2 * points, (uint32_t)n};
    qsort(p->order, n + 1, sizeof *p->order, by_key);
    return 0;
}

static const MoveRecord PASS_RECORD = {0};

static int32_t negamax(Endgame *e, int ply, int depth, int32_t alpha, int32_t beta, int passed);

/* The value of trying play `index` of the node at `ply` (its count: the pass) with the
 * window (alpha, beta), for the side to move. */
static int32_t try_play(Endgame *e, int ply, int depth, int32_t alpha, int32_t beta, int passed, uint32_t index,
                        int *ends) {
    Ply *p = &e->plies_buf[ply];
    *ends = 1;
    if (index == p->buf.count) { /* the pass */
        if (passed) return scoreless_end(e);
        *ends = 0;
        e->side ^= 1;
        /* a pass forced by having no play costs no depth: it is not a choice */
        const int forced = p->buf.count == 0;
        int32_t v = -negamax(e, ply + 1, depth - (forced ? 0 : 1), -beta, -alpha, 1);
        e->side ^= 1;
        return v;
    }
    const MoveRecord *m = &p->buf.items[index];
    uint16_t square[MAX_RACK];
    uint8_t cell[MAX_RACK];
    int n = play_tiles(e->r, m, square, cell);
    if (n == e->held[e->side]) return m->score + out_bonus(e);
    *ends = 0;
    lay_play(e, square, cell, n);
    e->pending_square = square;
    e->pending_cell = cell;
    e->pending = n;
    Ply *next = &e->plies_buf[ply + 1];
    next->laid = 0;
    Shared *shared = e->shared;
    uint64_t child = 0;
    if (shared->busy && depth >= BUSY_DEPTH) {
        child = position_key(e, 0);
        atomic_store_explicit(&shared->busy[child & shared->busy_mask], child, memory_order_relaxed);
    }
    int32_t v = m->score - negamax(e, ply + 1, depth - 1, m->score - beta, m->score - alpha, 0);
    if (child) {
        uint64_t mine = child;
        atomic_compare_exchange_strong_explicit(&shared->busy[child & shared->busy_mask], &mine, 0,
                                                memory_order_relaxed, memory_order_relaxed);
    }
    e->pending = 0;
    if (next->laid)
        for (int dir = 0; dir < 2; dir++) pass_copy(&e->passes[dir].pass, &p->saved[dir]);
    lift_play(e, square, cell, n);
    return v;
}

/* Whether another thread is searching the position play `index` of the node at `ply` leads to. */
static int busy_elsewhere(Endgame *e, const Ply *p, uint32_t index) {
    const MoveRecord *m = &p->buf.items[index];
    uint16_t square[MAX_RACK];
    uint8_t cell[MAX_RACK];
    int n = play_tiles(e->r, m, square, cell);
    if (n == e->held[e->side]) return 0;
    lay_play(e, square, cell, n);
    const uint64_t key = position_key(e, 0);
    lift_play(e, square, cell, n);
    const Shared *shared = e->shared;
    return atomic_load_explicit(&shared->busy[key & shared->busy_mask], memory_order_relaxed) == key;
}

/* Negamax with alpha-beta over the principal variation (the first play with the whole
 * window, the rest with a null window and again when they beat it), `depth` plies at
 * most. The value is the side to move's spread change to the end of the game; with a
 * depth cut-off on some line it is a guess, and `horizons` says so. */
static int32_t negamax(Endgame *e, int ply, int depth, int32_t alpha, int32_t beta, int passed) {
    Ply *p = &e->plies_buf[ply];
    p->line_len = 0;
    if (e->failed) return 0;
    Shared *shared = e->shared;
    if ((++e->nodes & ENDGAME_CLOCK_EVERY) == 0) {
        int out = e->args.has_deadline && time_is_up(&e->args.deadline);
        if (shared->threads > 1) {
            const uint64_t all = atomic_fetch_add_explicit(&shared->nodes, ENDGAME_CLOCK_EVERY + 1,
                                                           memory_order_relaxed) + ENDGAME_CLOCK_EVERY + 1;
            out |= e->max_nodes && all > e->max_nodes;
        }
        if (out) {
            e->failed = FAIL_TIME;
            atomic_store(&shared->stop, 1);
            return 0;
        }
    }
    if (shared->busy && (atomic_load_explicit(&shared->stop, memory_order_relaxed) ||
                         (shared->peer && atomic_load_explicit(&shared->peer->proven, memory_order_acquire)))) {
        e->failed = STOPPED;
        return 0;
    }
    if (shared->threads == 1 && e->max_nodes && e->nodes > e->max_nodes) {
        e->failed = FAIL_TIME;
        return 0;
    }
    const uint64_t key = position_key(e, passed);
    TableEntry *t = &e->table[key & e->mask];
    uint32_t best_move = 0;
    const int pv = (int64_t)beta - alpha > 1;
    int32_t stored;
    int searched, kind;
    if (table_read(t, key, &searched, &kind, &stored, &best_move)) {
        /* a node of the principal variation is searched again, so that its line is whole */
        if (!pv && (searched == ENDGAME_COMPLETE || searched >= depth)) {
            int32_t v = stored;
            if (kind == BOUND_EXACT || (kind == BOUND_LOWER && v >= beta) || (kind == BOUND_UPPER && v <= alpha)) {
                if (searched != ENDGAME_COMPLETE) e->horizons++;
                return v;
            }
        }
    }
    if (depth <= 0 || ply >= ENDGAME_MAX_PLIES - 1) {
        e->horizons++;
        return horizon_guess(e);
    }
    const uint64_t horizons = e->horizons;
    if (!p->has_buf) {
        if (movebuf_init(&p->buf, -1, 0) < 0) {
            e->failed = FAIL_MEMORY;
            return 0;
        }
        p->has_buf = 1;
    }
    p->buf.count = p->buf.total = p->buf.seq = 0;
    p->buf.pruned = p->buf.has_floor = 0;
    laid_play(e, ply);
    p->has_saved = 0;
    int failed = search_moves(e->g, e->board, e->rack[e->side], e->held[e->side], &e->args, e->passes, &p->buf);
    if (!failed) failed = order_plays(e, p, best_move);
    if (failed) {
        e->failed = failed;
        return 0;
    }
    const size_t n = p->buf.count;
    const int restricted = ply == 0 && e->root_allowed;
    int32_t best = -VALUE_INF, a = alpha;
    uint32_t best_fp = 0;
    const int share = shared->busy && depth >= BUSY_DEPTH;
    size_t later = 0;
    for (size_t i = 0; i <= n + later; i++) {
        const uint32_t index = i <= n ? p->order[i].index : p->later[i - n - 1];
        if (i <= n && restricted && !e->root_allowed[index]) continue;
        if (share && i > 0 && i <= n && index != n && busy_elsewhere(e, p, index)) {
            p->later[later++] = index;
            continue;
        }
        int32_t v;
        int ends;
        if (i == 0) {
            v = try_play(e, ply, depth, a, beta, passed, index, &ends);
        } else {
            v = try_play(e, ply, depth, a, a + 1, passed, index, &ends);
            if (v > a && v < beta && !e->failed) v = try_play(e, ply, depth, a, beta, passed, index, &ends);
        }
        if (e->failed) return 0;
        if (v > best) {
            best = v;
            const MoveRecord *m = index == n ? &PASS_RECORD : &p->buf.items[index];
            best_fp = index == n ? FP_PASS : fingerprint(e->r, m);
            if (v > a) {
                a = v;
                if (ply == 0) e->root_best = (int)index;
                /* this play, then the line the node after it found (none after a last play) */
                p->line[0] = *m;
                const Ply *next = &e->plies_buf[ply + 1];
                int more = ends ? 0 : next->line_len;
                if (more > ENDGAME_MAX_PLIES - 1) more = ENDGAME_MAX_PLIES - 1;
                memcpy(p->line + 1, next->line, (size_t)more * sizeof *p->line);
                p->line_len = 1 + more;
            }
        }
        if (a >= beta) break;
    }
    if (restricted) return best; /* a bound on part of the root's plays: not the position's */
    const int bound = best <= alpha ? BOUND_UPPER : best >= beta ? BOUND_LOWER : BOUND_EXACT;
    const int below = e->horizons == horizons ? ENDGAME_COMPLETE : depth; /* depth searched */
    table_write(t, key, below, bound, best, best_fp);
    return best;
}

/* Generate the plays of the side to move at `ply` in canonical order (no table move);
 * the passes are saved for try_play. */
static int canonical_plays(Endgame *e, Ply *p) {
    if (!p->has_buf) {
        if (movebuf_init(&p->buf, -1, 0) < 0) return FAIL_MEMORY;
        p->has_buf = 1;
    }
    p->buf.count = p->buf.total = p->buf.seq = 0;
    p->buf.pruned = p->buf.has_floor = 0;
    int failed = search_moves(e->g, e->board, e->rack[e->side], e->held[e->side], &e->args, e->passes, &p->buf);
    if (!failed) failed = order_plays(e, p, 0);
    if (failed) return failed;
    for (int dir = 0; dir < 2; dir++) pass_copy(&p->saved[dir], &e->passes[dir].pass);
    p->has_saved = 1;
    return 0;
}

/* The root's canonical numbering and which plays the split searches. */
static int number_root(Endgame *e, const RootSplit *split) {
    Ply *p = &e->plies_buf[0];
    int failed = canonical_plays(e, p);
    if (failed) return failed;
    const size_t n = p->buf.count + 1;
    e->root_rank = malloc(n * sizeof *e->root_rank);
    e->root_allowed = malloc(n);
    if (!e->root_rank || !e->root_allowed) return FAIL_MEMORY;
    e->root_plays = n;
    for (size_t i = 0; i < n; i++) {
        const int k = (int)i, index = (int)p->order[i].index;
        e->root_rank[index] = k;
        e->root_allowed[index] = k >= split->first && (split->last < 0 || k < split->last) &&
                                 (k - split->first) % split->parts == split->part;
    }
    if (split->first == 0 && split->last < 0 && split->parts == 1) { /* the whole root */
        free(e->root_allowed);
        e->root_allowed = NULL;
    }
    return 0;
}

/* The canonical line of an exact value: from the root, at each turn the first play in
 * canonical order worth the value (a null-window search each, with the table warm), made,
 * until the game ends. Fills answer->line and answer->root; returns 0 or a FAIL_ code. */
static int canonical_line(Endgame *e, int32_t value, int passed, EndgameAnswer *answer) {
    answer->line_len = 0;
    for (int ply = 0; ply < ENDGAME_MAX_PLIES - 1; ply++) {
        Ply *p = &e->plies_buf[ply];
        int failed = canonical_plays(e, p);
        if (failed) return failed;
        const size_t n = p->buf.count;
        long chosen = -1;
        int ends = 0;
        for (size_t i = 0; i <= n && chosen < 0; i++) {
            const uint32_t index = p->order[i].index;
            if (ply == 0 && e->root_allowed && !e->root_allowed[index]) continue;
            int32_t v = try_play(e, ply, ENDGAME_MAX_PLIES, value - 1, value, passed, index, &ends);
            if (e->failed) return e->failed;
            if (v >= value) chosen = index;
        }
        if (chosen < 0) return FAIL_CHECK; /* no play keeps the value: it was not exact */
        if (ply == 0) answer->root = e->root_rank[chosen];
        const MoveRecord *m = (size_t)chosen == n ? &PASS_RECORD : &p->buf.items[chosen];
        answer->line[answer->line_len++] = *m;
        if (ends) return 0;
        if ((size_t)chosen == n) {
            e->side ^= 1;
            value = -value;
            passed = 1;
        } else {
            uint16_t square[MAX_RACK];
            uint8_t cell[MAX_RACK];
            int count = play_tiles(e->r, m, square, cell);
            make_play(e, square, cell, count);
            value = m->score - value;
            passed = 0;
        }
    }
    return 0;
}

/* Set up a searcher over `board` and `racks`: its own board, racks, passes and plies. */
static int searcher_init(Endgame *e, const Core *g, const uint8_t *board, const uint8_t racks[2][MAX_LETTERS + 1],
                         const EndRules *end, const EndgameTable *table, const EndgameLimits *limits,
                         Shared *shared) {
    const Rules *r = &g->rules;
    e->g = g;
    e->r = r;
    e->end = end;
    e->shared = shared;
    e->max_nodes = limits->max_nodes;
    e->passed = limits->passed;
    e->plies = limits->plies;
    e->mask = ((uint64_t)1 << table->bits) - 1;
    e->table = table->entries;
    e->plies_buf = calloc(ENDGAME_MAX_PLIES + 1, sizeof *e->plies_buf);
    if (!e->table || !e->plies_buf) return FAIL_MEMORY;
    e->board_key = shared->peer ? shared->peer->salt : 0; /* a peers' slot salts its keys */
    memcpy(e->board, board, (size_t)(r->rows * r->cols));
    for (int i = 0; i < r->rows * r->cols; i++)
        if (board[i]) e->board_key ^= square_key(i, board[i]);
    for (int side = 0; side < 2; side++) {
        memcpy(e->rack[side], racks[side], sizeof e->rack[side]);
        for (int t = 0; t <= r->alphabet; t++) {
            e->held[side] += racks[side][t];
            e->points[side] += racks[side][t] * r->values[t];
            rack_changed(e, side, (unsigned)t, 0, racks[side][t]);
        }
    }
    const uint64_t all = every_letter(r);
    for (int dir = 0; dir < 2; dir++) {
        attach(&e->passes[dir], g);
        prepare_pass(&e->passes[dir], r, board, dir, all);
    }
    e->args = (SearchArgs){MODE_ACROSS | MODE_DOWN, -1, 0, NULL, limits->has_deadline, {0, 0}, 1};
    if (limits->has_deadline) e->args.deadline = limits->deadline;
    return 0;
}

static void searcher_free(Endgame *e) {
    if (e->plies_buf)
        for (int i = 0; i <= ENDGAME_MAX_PLIES; i++) {
            if (e->plies_buf[i].has_buf) movebuf_free(&e->plies_buf[i].buf);
            free(e->plies_buf[i].order);
            free(e->plies_buf[i].later);
        }
    free(e->plies_buf);
    if (!e->helper) {
        free(e->root_rank);
        free(e->root_allowed);
    }
}

/* A helper thread: the first thread's iterations on the shared table, putting off the
 * plays another thread is searching, until some thread proves the value (a helper whose
 * iteration is exact keeps its value, depth and line and names itself in proven_by) or
 * the budget ends. (Helpers on the other parity of
 * depths, without putting off, searched 1.2-1.8x the nodes for no gain.) */
static void *helper_search(void *arg) {
    Endgame *e = arg;
    for (int depth = 1; depth <= e->plies; depth += 2) {
        e->horizons = 0;
        const int32_t v = negamax(e, 0, depth, e->alpha, VALUE_INF, e->passed);
        if (e->failed) break;
        if (e->horizons == 0) {
            int none = 0;
            e->value = v;
            e->depth = depth;
            atomic_compare_exchange_strong(&e->shared->proven_by, &none, e->helper);
            atomic_store(&e->shared->stop, 1);
            break;
        }
    }
    return NULL;
}

#define PAGE_BYTES 4096
#define HUGE_PAGE_BYTES (2u << 20)

TableEntry *endgame_table_new(int bits) {
    const size_t bytes = sizeof(TableEntry) << bits;
    void *entries = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (entries == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_PAGE_BYTES) madvise(entries, bytes, MADV_HUGEPAGE); /* advice: ignored where refused */
#endif
    return entries;
}

void endgame_table_free(TableEntry *entries, int bits) {
    if (entries) munmap(entries, sizeof(TableEntry) << bits);
}

void endgame_table_write_pages(const EndgameTable *table) {
    volatile uint64_t *words = (volatile uint64_t *)table->entries;
    const size_t count = (sizeof(TableEntry) / sizeof *words) << table->bits;
    for (size_t i = 0; i < count; i += PAGE_BYTES / sizeof *words) words[i] = words[i];
}

/* Stop the helpers and wait for them; the search is one thread's from here, and no
 * longer watches its peers (the canonical line is its own walk). */
static void join_helpers(Endgame *es, int started) {
    atomic_store(&es[0].shared->stop, 1);
    for (int h = 1; h < started; h++) pthread_join(es[h].thread, NULL);
    es[0].shared->threads = 1;
    es[0].shared->busy = NULL;
    atomic_store(&es[0].shared->stop, 0);
}

/* A value this process proved, for its peers: they stop and answer it. */
static void tell_peers(const Shared *shared, int32_t value, int depth) {
    PeerSlot *s = shared->peer;
    if (!s || atomic_load(&s->proven)) return;
    s->value = value;
    s->depth = depth;
    atomic_store_explicit(&s->proven, 1, memory_order_release);
}

int solve_endgame(const Core *g, const uint8_t *board, const uint8_t racks[2][MAX_LETTERS + 1],
                  const EndRules *end, const RootSplit *split, const EndgameTable *table,
                  const EndgamePeer *peer, const EndgameLimits *limits, EndgameAnswer *answer) {
    const int threads = limits->threads < 1 ? 1 : limits->threads > ENDGAME_MAX_THREADS ? ENDGAME_MAX_THREADS : limits->threads;
    const int plies = limits->plies, passed = limits->passed;
    Shared shared = {.threads = threads};
    Endgame *es = calloc((size_t)threads, sizeof *es);
    if (!es) return FAIL_MEMORY;
    Endgame *e = &es[0];
    int started = 1;
    _Atomic uint64_t *own_busy = NULL; /* the busy keys of this solve's threads, without peers */
    memset(answer, 0, sizeof *answer);
    int failed = searcher_init(e, g, board, racks, end, table, limits, &shared);
    if (failed) goto out;
    failed = number_root(e, split);
    if (failed) goto out;
    size_t searched = e->root_allowed ? 0 : e->root_plays;
    for (size_t i = 0; e->root_allowed && i < e->root_plays; i++) searched += e->root_allowed[i];
    if (!searched) {
        answer->no_plays = 1;
        answer->exact = 1;
        goto out;
    }
    /* with a floor, a play worth exactly the floor is still told apart: the merge of the
     * parts then picks the first in canonical order, as one search would */
    const int32_t alpha = split->has_floor ? split->floor - 1 : -VALUE_INF;
    /* peers search whole roots to the end only: a part's root value is not the position's,
     * and a depth-limited search answers its own depth's guess, not a peer's proof */
    if (peer && peer->slot && !e->root_allowed && !split->has_floor && plies >= ENDGAME_MAX_PLIES) {
        shared.peer = peer->slot;
        shared.busy = peer->busy;
        e->board_key ^= peer->slot->salt; /* as searcher_init salts the helpers' */
    }
    shared.busy_mask = ((uint64_t)1 << BUSY_BITS) - 1;
    int done = 0, from_peer = 0; /* the value is a peer's proof: only the line is ours */
    int done_helpers = 0;        /* helpers were started (or could not be) */
    /* Iterations two plies apart: a search ending on the side to move's turn and one ending
     * on the other's guess differently, and each odd iteration paid for the even one before
     * it (bench/endgame_nodes.py: 29% fewer nodes on the records' endgames). */
    for (int depth = 1;;) {
        e->horizons = 0;
        if (threads > 1 && started == 1 && depth >= HELPERS_FROM_DEPTH && !done_helpers) {
            done_helpers = 1;
            if (!shared.peer) { /* without busy keys no play is put off: the same answer */
                own_busy = malloc(sizeof *own_busy << BUSY_BITS);
                if (own_busy) memset((void *)own_busy, 0, sizeof *own_busy << BUSY_BITS); /* written first */
                shared.busy = own_busy;
                if (own_busy) endgame_table_write_pages(table); /* a peers' table: shared memory, no zero page */
            }
            for (int h = 1; h < threads; h++, started++) {
                Endgame *helper = &es[h];
                helper->helper = h;
                helper->root_rank = e->root_rank;
                helper->root_allowed = e->root_allowed;
                helper->root_plays = e->root_plays;
                helper->alpha = alpha;
                if (searcher_init(helper, g, board, racks, end, table, limits, &shared) ||
                    pthread_create(&helper->thread, NULL, helper_search, helper))
                    break; /* fewer helpers: the answer is the same */
            }
        }
        /* a peer's proof (before this search began, or during it) answers */
        from_peer = shared.peer && atomic_load_explicit(&shared.peer->proven, memory_order_acquire);
        int32_t v = from_peer ? 0 : negamax(e, 0, depth, alpha, VALUE_INF, passed);
        const Endgame *found = e; /* whose iteration answers */
        if (e->failed == STOPPED || from_peer) {
            join_helpers(es, started);
            started = 1;
            e->failed = 0;
            const int by = atomic_load(&shared.proven_by);
            if (by) {
                found = &es[by]; /* a helper's exact iteration: its value, depth and line */
                v = found->value;
                depth = found->depth;
                from_peer = 0;
            } else if (shared.peer && atomic_load_explicit(&shared.peer->proven, memory_order_acquire)) {
                v = shared.peer->value; /* its line is walked below, as for our own proof */
                depth = shared.peer->depth;
                from_peer = 1;
            } else { /* a helper spent the time or the nodes */
                e->failed = FAIL_TIME;
                break;
            }
        }
        if (e->failed) break;
        done = 1;
        answer->value = v;
        answer->depth = depth;
        answer->exact = found == e && !from_peer ? e->horizons == 0 : 1;
        if (answer->exact && !from_peer) tell_peers(&shared, v, depth);
        answer->below_floor = v <= alpha;
        answer->line_len = found->plies_buf[0].line_len;
        memcpy(answer->line, found->plies_buf[0].line, (size_t)answer->line_len * sizeof *answer->line);
        answer->root = e->root_rank[found->root_best];
        if (answer->exact || depth >= plies) break;
        depth = depth + 2 < plies ? depth + 2 : plies;
    }
    if (started > 1) join_helpers(es, started);
    started = 1;
    shared.busy = NULL; /* the line below is this thread's own walk, watching no peer */
    shared.peer = NULL;
    if (!done) {
        failed = e->failed ? e->failed : FAIL_TIME;
    } else if (e->failed == FAIL_MEMORY) {
        failed = FAIL_MEMORY;
    } else if (answer->exact && !answer->below_floor) {
        e->failed = 0;
        e->max_nodes = 0; /* the value is proven: its line is part of the answer */
        EndgameAnswer *line = malloc(sizeof *line);
        if (!line) {
            failed = FAIL_MEMORY;
            goto out;
        }
        memset(line, 0, sizeof *line);
        int bad = canonical_line(e, answer->value, passed, line);
        if (!bad) {
            answer->line_len = line->line_len;
            answer->root = line->root;
            memcpy(answer->line, line->line, (size_t)line->line_len * sizeof *line->line);
        } else if (bad != FAIL_TIME || from_peer) {
            failed = bad; /* FAIL_CHECK: the value was not what the search said; a bug. A peer's
                           * value without its line (out of time walking it) is no answer */
        }
        free(line);
    }
out:
    if (started > 1) join_helpers(es, started);
    answer->nodes = 0;
    for (int h = 0; h < threads; h++) {
        answer->nodes += es[h].nodes;
        searcher_free(&es[h]);
    }
    free((void *)own_busy);
    free(es);
    return failed;
}
