/*
 * anchor.engine._movegen: rack inference (infer.h).
 */
#include "core.h"
#include "infer.h"

#include <pthread.h>
#include <stdatomic.h>

/* A value in thousandths of a point, rounded half away from zero (MAGPIE's double_to_equity). */
static inline int64_t milli(float v) { return (int64_t)llround((double)v * 1000.0); }

/* ------------------------------------------------------------------ the racks tried */

/* How many multisets of `size` tiles `pool` holds, or more than `most` (counting stops there). */
static size_t count_racks(const uint8_t *pool, int alphabet, int size, size_t most) {
    uint64_t ways[MAX_RACK + 1] = {1}; /* ways[k]: multisets of k tiles from the tiles so far */
    for (int t = 0; t <= alphabet; t++) {
        if (!pool[t]) continue;
        for (int k = size; k > 0; k--) {
            uint64_t sum = 0;
            for (int c = 1; c <= pool[t] && c <= k; c++) sum += ways[k - c];
            ways[k] += sum;
            if (ways[k] > most) ways[k] = most + 1; /* saturate: only "too many" matters */
        }
    }
    return (size_t)ways[size];
}

typedef struct {
    const uint8_t *pool;
    int alphabet, size;
    uint8_t cur[MAX_RACK];
    uint8_t *tiles;
    size_t at;           /* racks kept */
    size_t index;        /* racks walked */
    size_t part, parts;  /* keep the racks of chunks c with c % parts == part */
} RackWalk;

/* A part's share of n racks: the racks of its chunks (INFER_CHUNK each, dealt in turn). */
static size_t part_share(size_t n, size_t part, size_t parts) {
    const size_t chunks = (n + INFER_CHUNK - 1) / INFER_CHUNK;
    if (part >= chunks) return 0;
    const size_t mine = (chunks - 1 - part) / parts + 1; /* chunks part, part + parts, ... */
    const size_t last = part + (mine - 1) * parts;       /* the last may be short */
    return (mine - 1) * INFER_CHUNK + (n - last * INFER_CHUNK < INFER_CHUNK ? n - last * INFER_CHUNK : INFER_CHUNK);
}

/* The racks in lexicographic order (tile t or later at position `len`), the part's kept. */
static void list_racks(RackWalk *w, int len, int from, uint8_t *left) {
    if (len == w->size) {
        if ((w->index / INFER_CHUNK) % w->parts == w->part) {
            memcpy(w->tiles + w->at * (size_t)w->size, w->cur, (size_t)w->size);
            w->at++;
        }
        w->index++;
        return;
    }
    for (int t = from; t <= w->alphabet; t++) {
        if (!left[t]) continue;
        left[t]--;
        w->cur[len] = (uint8_t)t;
        list_racks(w, len + 1, t, left);
        left[t]++;
    }
}

/* The ways the tiles `extra` (ascending) are drawn from `pool`: the product of C(pool[t], k_t). */
static uint64_t draws_of(const uint8_t *pool, const uint8_t *extra, int size) {
    uint64_t ways = 1;
    for (int j = 0; j < size;) {
        int t = extra[j], k = 0;
        while (j < size && extra[j] == t) j++, k++;
        uint64_t c = 1;
        for (int i = 0; i < k; i++) c = c * (uint64_t)(pool[t] - i) / (uint64_t)(i + 1);
        ways *= c; /* engine/inference.py refuses pools whose racks could pass 2^63 */
    }
    return ways;
}

/* ------------------------------------------------------------------ one rack judged */

/* One thread's state: its own passes (copies of the prepared board) and buffers. */
typedef struct {
    const Core *g;
    const Klv *klv;
    const InferArgs *a;
    InferResult *out;
    const Search *start;          /* two passes prepared for the board, read only */
    Search passes[2];
    MoveBuf buf;                  /* keep 1, by equity */
    uint16_t steps[MAX_LETTERS + 1];
    float best[MAX_RACK + 1], best_blank[MAX_RACK + 1];
    float *table;                 /* 1 << rack_size leave values */
    atomic_size_t *next;          /* the next chunk of racks to take */
    atomic_int *stop;             /* some thread failed: the rest stop */
    uint64_t searches;
    int failed;
    pthread_t thread;
} Worker;

/* The best play from `rack` worth at least `lo` thousandths, into *found (its worth):
 * 1 when there is one, 0 when none; a play worth more than `hi` ends the search at once
 * (*found is then hi + 1). Negative: -FAIL_*. */
static int best_play(Worker *w, const uint8_t *rack, int held, const LeaveTable *lt, int64_t lo, int64_t hi,
                     int64_t *found) {
    const InferArgs *a = w->a;
    MoveBuf *b = &w->buf;
    b->count = b->total = b->seq = 0;
    b->pruned = b->has_floor = 0;
    /* the floor: a play of worth just under `lo` that ranks below every real one */
    const MoveRecord floor_play = {0};
    movebuf_seed(b, &floor_play, (float)(((double)lo - 0.6) / 1000.0), UINT64_MAX);
    b->enough = (float)(((double)hi + 0.6) / 1000.0);
    SearchArgs args = {MODE_ACROSS | MODE_DOWN, 1, 0, lt, a->has_deadline, a->deadline, 1, NULL};
    w->searches++;
    int failed = search_moves(w->g, a->board, rack, held, &args, w->passes, b);
    b->enough = INFINITY;
    if (failed == FOUND_ENOUGH) {
        *found = hi + 1;
        return 1;
    }
    if (failed) return -failed;
    if (b->count == 0 || b->order[0] == UINT64_MAX) return 0;
    const MoveRecord *m = &b->items[0]; /* worth counted exactly: score, then the leave rounded */
    size_t key = 0;
    for (int i = 0; i < m->len; i++)
        if (m->tiles[i]) key += lt->key_step[(m->tiles[i] & BLANK_FLAG) ? 0 : m->tiles[i]];
    *found = (int64_t)m->score * 1000 + milli(key < lt->keys ? lt->value[key] : 0.0f);
    return *found >= lo;
}

/* Whether exchange x (tile counts) comes before y among exchanges of equal worth: fewer
 * tiles, then the lower tiles in order, blank first (MAGPIE's order of equal moves). */
static int exchange_first(int alphabet, const uint8_t *x, int nx, const uint8_t *y, int ny) {
    if (nx != ny) return nx < ny;
    for (int t = 0; t <= alphabet; t++)
        if (x[t] != y[t]) return x[t] > y[t]; /* more of a lower tile: lower in order */
    return 0;
}

/* The best exchange of `least` to `most` tiles from `rack`, by the worth of what it keeps:
 * its worth in thousandths, tiles put back (counts) and how many. */
static int64_t best_exchange(const Worker *w, const uint8_t *rack, size_t keys, int least, int most, uint8_t *back,
                             int *size) {
    const Rules *r = &w->g->rules;
    uint8_t tile[MAX_RACK], used[MAX_RACK] = {0};
    int distinct = rack_distinct(r, rack, tile);
    int64_t best = INT64_MIN;
    *size = 0;
    while (next_subrack(used, tile, distinct, rack)) {
        int n;
        size_t key = subrack_key(used, tile, distinct, w->steps, &n);
        if (n < least || n > most) continue;
        const int64_t v = milli(key < keys ? w->table[key] : 0.0f);
        uint8_t these[MAX_LETTERS + 1] = {0};
        for (int d = 0; d < distinct; d++) these[tile[d]] = used[d];
        if (v > best || (v == best && exchange_first(r->alphabet, these, n, back, *size))) {
            best = v;
            *size = n;
            memcpy(back, these, (size_t)r->alphabet + 1);
        }
    }
    return best;
}

/* Judge rack i: its verdict, value and (exchanges) thrown tiles. 0 or a FAIL_ code. */
static int judge(Worker *w, size_t i) {
    const InferArgs *a = w->a;
    const Rules *r = &w->g->rules;
    InferResult *out = w->out;
    uint8_t rack[MAX_LETTERS + 1];
    memcpy(rack, a->played, sizeof rack);
    const uint8_t *extra = out->tiles + i * (size_t)a->size;
    int held = 0;
    for (int t = 0; t <= r->alphabet; t++) held += rack[t];
    for (int j = 0; j < a->size; j++) rack[extra[j]]++;
    held += a->size;
    const size_t keys = leave_fill(w->klv, rack, w->steps, w->table, w->best, w->best_blank);
    const LeaveTable lt = {w->steps, w->table, keys, w->best, w->best_blank};
    int64_t play;
    uint8_t verdict = INFER_NO;
    int got;
    if (!a->exchanged) {
        size_t key = 0;
        for (int t = 0; t <= r->alphabet; t++) key += (size_t)a->played[t] * w->steps[t];
        const float leave = key < keys ? w->table[key] : 0.0f;
        out->value[i] = leave;
        const int64_t cutoff = (int64_t)a->score * 1000 + milli(leave) + a->margin;
        /* the exchanges first: when one beats the play, no search is needed */
        for (int k = 1; k <= a->exchange_most && k <= held; k++)
            if (w->best[k] > -INFINITY && milli(w->best[k]) > cutoff) goto judged;
        got = best_play(w, rack, held, &lt, cutoff + 1, cutoff, &play);
        if (got < 0) return -got;
        if (!got) verdict = INFER_YES;
    } else {
        uint8_t back[MAX_LETTERS + 1] = {0};
        int thrown = 0;
        const int64_t exchange = best_exchange(w, rack, keys, 1, a->exchange_most, back, &thrown);
        const int as_made = thrown == a->exchanged;
        /* the best move is worth at least the best exchange: past the margin, only the
         * exchange made can be it, and a play would have to beat that (most racks end
         * here, unsearched) */
        if (!as_made && exchange > a->margin) goto judged;
        /* a play worth as much wins (it scores more); only such plays change the verdict */
        const int64_t hi = exchange - 1 > a->margin ? exchange - 1 : a->margin;
        got = best_play(w, rack, held, &lt, exchange, hi, &play);
        if (got < 0) return -got;
        if (got) {
            verdict = play <= a->margin ? INFER_YES : INFER_NO;
        } else if (as_made) {
            verdict = INFER_EXCHANGE;
        } else {
            verdict = exchange <= a->margin ? INFER_YES : INFER_NO;
        }
        if (verdict != INFER_NO) {
            /* what it kept: the exchange made, or (a rack whose best move was another, within
             * the margin) its best exchange of that many tiles */
            int64_t kept = exchange;
            if (verdict == INFER_YES)
                kept = best_exchange(w, rack, keys, a->exchanged, a->exchanged, back, &thrown);
            uint8_t *to = out->thrown + i * (size_t)a->exchanged;
            for (int t = 0, n = 0; t <= r->alphabet; t++)
                for (int c = 0; c < back[t]; c++) to[n++] = (uint8_t)t;
            out->value[i] = (float)((double)kept / 1000.0);
        }
    }
judged:
    out->verdict[i] = verdict;
    return 0;
}

/* A thread's share: chunks of racks until none is left, one fails or time is up. */
static void *work(void *arg) {
    Worker *w = arg;
    const size_t n = w->out->tried;
    for (;;) {
        if (atomic_load_explicit(w->stop, memory_order_relaxed)) break;
        const size_t from = atomic_fetch_add(w->next, INFER_CHUNK);
        if (from >= n) break;
        if (w->a->has_deadline && time_is_up(&w->a->deadline)) {
            w->failed = FAIL_TIME;
            break;
        }
        const size_t to = from + INFER_CHUNK < n ? from + INFER_CHUNK : n;
        for (size_t i = from; i < to && !w->failed; i++) w->failed = judge(w, i);
        if (w->failed) break;
    }
    if (w->failed) atomic_store(w->stop, 1);
    return NULL;
}

static int worker_init(Worker *w, const Core *g, const Klv *klv, const InferArgs *a, InferResult *out,
                       const Search *start, atomic_size_t *next, atomic_int *stop) {
    w->g = g;
    w->klv = klv;
    w->a = a;
    w->out = out;
    w->start = start;
    w->next = next;
    w->stop = stop;
    for (int dir = 0; dir < 2; dir++) {
        attach(&w->passes[dir], g);
        pass_copy(&w->passes[dir].pass, &start[dir].pass);
    }
    w->table = malloc(((size_t)1 << g->rules.rack_size) * sizeof *w->table);
    if (!w->table || movebuf_init(&w->buf, 1, 1) < 0) return FAIL_MEMORY;
    return 0;
}

static void worker_free(Worker *w) {
    free(w->table);
    movebuf_free(&w->buf);
}

void infer_free(InferResult *out) {
    free(out->tiles);
    free(out->verdict);
    free(out->thrown);
    free(out->draws);
    free(out->value);
    free(out->hist);
    memset(out, 0, sizeof *out);
}

/* Tally `n` tiles (ascending) of a rack that explains the move, `draws` ways drawn. */
static void tally(uint64_t *hist, int alphabet, int kind, const uint8_t *tiles, int n, uint64_t draws) {
    for (int j = 0; j < n;) {
        int t = tiles[j], k = 0;
        while (j < n && tiles[j] == t) j++, k++;
        hist[HIST_AT(alphabet, kind, 0, t, k)] += draws;
        hist[HIST_AT(alphabet, kind, 1, t, k)] += 1;
    }
}

/* Keep only the racks that explain the move (in order), and tally them; a rack holding
 * none of a tile is counted at k = 0 from the totals. */
static void keep_explaining(const InferArgs *a, int alphabet, InferResult *out) {
    const size_t size = (size_t)a->size, x = (size_t)a->exchanged;
    uint64_t total[TALLIES][2] = {{0}};
    size_t kept = 0;
    for (size_t i = 0; i < out->tried; i++) {
        const uint8_t v = out->verdict[i];
        if (v == INFER_NO) continue;
        const uint8_t *tiles = out->tiles + i * size;
        const uint64_t d = out->draws[i];
        if (!a->exchanged) {
            tally(out->hist, alphabet, TALLY_LEAVE, tiles, a->size, d);
            total[TALLY_LEAVE][0] += d, total[TALLY_LEAVE][1]++;
        } else {
            tally(out->hist, alphabet, TALLY_RACK, tiles, a->size, d);
            total[TALLY_RACK][0] += d, total[TALLY_RACK][1]++;
            if (v == INFER_EXCHANGE) {
                const uint8_t *back = out->thrown + i * x;
                uint8_t keep[MAX_RACK];
                int n = 0;
                for (size_t j = 0, b = 0; j < size; j++) /* both ascending: a merge */
                    if (b < x && back[b] == tiles[j])
                        b++;
                    else
                        keep[n++] = tiles[j];
                tally(out->hist, alphabet, TALLY_LEAVE, keep, n, d);
                tally(out->hist, alphabet, TALLY_THROWN, back, a->exchanged, d);
                total[TALLY_LEAVE][0] += d, total[TALLY_LEAVE][1]++;
                total[TALLY_THROWN][0] += d, total[TALLY_THROWN][1]++;
            }
        }
        if (kept != i) {
            memmove(out->tiles + kept * size, tiles, size);
            if (x) memmove(out->thrown + kept * x, out->thrown + i * x, x);
            out->verdict[kept] = v;
            out->draws[kept] = d;
            out->value[kept] = out->value[i];
        }
        kept++;
    }
    out->count = kept;
    for (int kind = 0; kind < TALLIES; kind++)
        for (int u = 0; u < 2; u++)
            for (int t = 0; t <= alphabet; t++) {
                uint64_t with = 0;
                for (int k = 1; k <= MAX_RACK; k++) with += out->hist[HIST_AT(alphabet, kind, u, t, k)];
                out->hist[HIST_AT(alphabet, kind, u, t, 0)] = total[kind][u] - with;
            }
}

int infer_racks(const Core *g, const Klv *klv, const InferArgs *a, InferResult *out) {
    const Rules *r = &g->rules;
    const int threads = a->threads < 1 ? 1 : a->threads > INFER_MAX_THREADS ? INFER_MAX_THREADS : a->threads;
    const size_t parts = a->parts ? a->parts : 1;
    const size_t most = a->max_racks > SIZE_MAX / 64 / parts ? SIZE_MAX / 64 : a->max_racks * parts;
    const size_t all_racks = count_racks(a->pool, r->alphabet, a->size, most);
    if (all_racks > most) return INFER_TOO_MANY;
    const size_t n = part_share(all_racks, a->part, parts);
    if (n > a->max_racks) return INFER_TOO_MANY;
    out->tried = n;
    const size_t cells = n ? n : 1;
    out->tiles = malloc(cells * (size_t)a->size + 1);
    out->verdict = calloc(cells, 1);
    out->thrown = a->exchanged ? malloc(cells * (size_t)a->exchanged) : NULL;
    out->draws = malloc(cells * sizeof *out->draws);
    out->value = calloc(cells, sizeof *out->value);
    out->hist = calloc(HIST_SIZE(r->alphabet), sizeof *out->hist);
    if (!out->tiles || !out->verdict || (a->exchanged && !out->thrown) || !out->draws || !out->value ||
        !out->hist)
        return FAIL_MEMORY;
    if (a->exchanged) memset(out->thrown, 0xFF, n * (size_t)a->exchanged);
    uint8_t left[MAX_LETTERS + 1];
    memcpy(left, a->pool, sizeof left);
    RackWalk walk = {a->pool, r->alphabet, a->size, {0}, out->tiles, 0, 0, a->part, parts};
    list_racks(&walk, 0, 0, left);
    for (size_t i = 0; i < n; i++) out->draws[i] = draws_of(a->pool, out->tiles + i * (size_t)a->size, a->size);

    Search *start = malloc(2 * sizeof *start);
    Worker *ws = calloc((size_t)threads, sizeof *ws);
    int failed = 0, started = 0;
    atomic_size_t next = 0;
    atomic_int stop = 0;
    if (!start || !ws) {
        failed = FAIL_MEMORY;
        goto out;
    }
    const uint64_t all = every_letter(r);
    for (int dir = 0; dir < 2; dir++) {
        attach(&start[dir], g);
        prepare_pass(&start[dir], r, a->board, dir, all);
    }
    for (int t = 0; t < threads; t++) {
        if (worker_init(&ws[t], g, klv, a, out, start, &next, &stop) ||
            (t > 0 && pthread_create(&ws[t].thread, NULL, work, &ws[t])))
            break; /* fewer threads: the same answer */
        started++;
    }
    if (!started) {
        failed = FAIL_MEMORY;
        goto out;
    }
    work(&ws[0]);
    for (int t = 1; t < started; t++) pthread_join(ws[t].thread, NULL);
    for (int t = 0; t < started; t++) {
        out->searches += ws[t].searches;
        if (!failed && ws[t].failed) failed = ws[t].failed;
    }
    if (!failed) keep_explaining(a, r->alphabet, out);
out:
    for (int t = 0; ws && t < threads; t++) worker_free(&ws[t]); /* zeroed where never set up */
    free(ws);
    free(start);
    return failed;
}
