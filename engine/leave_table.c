/*
 * anchor.engine._movegen: leave tables from KLV2 graphs (leave_table.h).
 */
#include "core.h"
#include "leave_table.h"

/* From node `from` of a sibling list on, the first node whose tile is t or more (0 when
 * the list ends first), adding to *idx the leaves listed before it: the difference of the
 * two nodes' suffix counts. Lists are in ascending tile order (kwg_check refuses others).
 * Every index it follows is checked, so a graph it was not given checked is safe (a wrong
 * count gives a wrong index, which the values' bounds catch). */
static uint32_t klv_seek(const Klv *k, uint32_t from, unsigned t, long *idx) {
    if (!from || from >= k->n) return 0;
    for (uint32_t i = from; i < k->n; i++) {
        uint32_t node = k->nodes[i];
        if (kwg_tile(node) >= t) {
            *idx += (long)k->counts[from] - (long)k->counts[i];
            return i;
        }
        if (kwg_is_end(node)) break;
    }
    *idx += k->counts[from];
    return 0;
}

/* The node for tile t in the sibling list starting at `list` (0 when the list lacks it),
 * adding to *idx the leaves listed before it. */
static uint32_t klv_child(const Klv *k, uint32_t list, unsigned t, long *idx) {
    uint32_t i = klv_seek(k, list, t, idx);
    return i && kwg_tile(k->nodes[i]) == t ? i : 0;
}

/* Index of a sorted leave in a KLV graph (DAWG order: a word before its extensions), or -1. */
static long klv_index(const Klv *k, const uint8_t *leave, int len) {
    long idx = 0;
    uint32_t list = k->n ? kwg_arc(k->nodes[0]) : 0;
    for (int d = 0; d < len; d++) {
        uint32_t i = klv_child(k, list, leave[d], &idx);
        if (!i) return -1;
        uint32_t node = k->nodes[i];
        if (d == len - 1) return kwg_accepts(node) ? idx : -1;
        idx += kwg_accepts(node);
        list = kwg_arc(node);
    }
    return -1;
}

/* The value of keeping `leave` (sorted tiles, blank 0 first): 0 when the graph lacks it. */
float klv_value(const Klv *k, const uint8_t *leave, int len) {
    long idx = len ? klv_index(k, leave, len) : -1;
    return idx >= 0 && (size_t)idx < k->nvals ? k->values[idx] : 0.0f;
}

/* One walk of a rack's leaves through the KLV graph (leave_fill): the rack's distinct tiles
 * in sorted order, and where the values go. */
typedef struct {
    const Klv *k;
    const uint8_t *have;
    const uint8_t *tile; /* distinct tiles, ascending (blank 0 first) */
    int distinct, tiles;
    const uint16_t *steps;
    float *table;
    float *best, *best_blank; /* by tiles played, when not NULL (LeaveTable) */
} LeaveWalk;

/* Where a leave_walk stands: the key of the tiles played so far and how many were kept,
 * whether a blank was played, and the graph after the leave kept so far: `at` its index
 * (-1 when it is none), the walk going on from node `from` with index `idx` there (from
 * 0: nowhere, and every longer leave gets 0). */
typedef struct {
    size_t key;
    int len, blank_played;
    uint32_t from;
    long idx, at;
} LeaveAt;

/* The leaves keeping tiles tile[d..] in every number the rack allows, from `h`. Leaves
 * sharing a beginning share its walk, and a leave without tile[d] goes on where the search
 * for it stopped (the later tiles are larger), so the rack's 2^7 leaves cost a few hundred
 * node reads rather than one walk from the root each. */
static inline void leave_record(const LeaveWalk *w, const LeaveAt *h) {
    const Klv *k = w->k;
    float v = h->len && h->at >= 0 && (size_t)h->at < k->nvals ? k->values[h->at] : 0.0f;
    w->table[h->key] = v;
    if (w->best) {
        int played = w->tiles - h->len;
        if (v > w->best[played]) w->best[played] = v;
        if (h->blank_played && v > w->best_blank[played]) w->best_blank[played] = v;
    }
}

static void leave_walk(const LeaveWalk *w, int d, LeaveAt h);

/* leave_walk's next step: the leaves from tile[d] on, or the one leave `h` is when no
 * tile is left (recorded here: half the walk's steps are those, spared a call each). */
static inline void leave_next(const LeaveWalk *w, int d, const LeaveAt *h) {
    if (d == w->distinct)
        leave_record(w, h);
    else
        leave_walk(w, d, *h);
}

static void leave_walk(const LeaveWalk *w, int d, LeaveAt h) {
    const Klv *k = w->k;
    const unsigned t = w->tile[d];
    const int have = w->have[t];
    uint32_t i = klv_seek(k, h.from, t, &h.idx);
    LeaveAt none = h; /* none kept */
    none.key += (size_t)have * w->steps[t];
    none.from = i;
    none.blank_played |= t == 0;
    leave_next(w, d + 1, &none);
    if (i && kwg_tile(k->nodes[i]) != t) i = 0;
    for (int kept = 1; kept <= have; kept++) {
        if (kept > 1 && i) i = klv_child(k, i, t, &h.idx);
        if (i) {
            uint32_t node = k->nodes[i];
            h.at = kwg_accepts(node) ? h.idx : -1;
            h.idx += kwg_accepts(node);
            i = kwg_arc(node);
        } else { /* not in the graph: nor is any leave going on from here */
            h.at = -1;
        }
        LeaveAt next = h;
        next.key += (size_t)(have - kept) * w->steps[t];
        next.len += kept;
        next.from = i;
        next.blank_played |= t == 0 && kept < have;
        leave_next(w, d + 1, &next);
    }
}

/* The leave table of a rack (tile counts `have`, at most MAX_RACK tiles): steps[t] is
 * tile t's mixed-radix key step, table[key] the value of what is left when the tiles of
 * that key are used. table needs room for 1 << (tiles on the rack) values (the largest
 * radix a rack of that many tiles has). Returns the number of keys. */
size_t leave_fill(const Klv *k, const uint8_t have[MAX_LETTERS + 1],
                         uint16_t steps[MAX_LETTERS + 1], float *table, float *best, float *best_blank) {
    uint8_t distinct[MAX_RACK];
    int nd = 0;
    size_t radix = 1;
    memset(steps, 0, (MAX_LETTERS + 1) * sizeof *steps);
    for (int t = 0; t <= MAX_LETTERS && nd < MAX_RACK; t++) {
        if (!have[t]) continue;
        distinct[nd++] = (uint8_t)t;
        steps[t] = (uint16_t)radix;
        radix *= (size_t)have[t] + 1;
    }
    int tiles = 0;
    for (int d = 0; d < nd; d++) tiles += have[distinct[d]];
    for (int n = 0; best && n <= MAX_RACK; n++) best[n] = best_blank[n] = -INFINITY;
    const LeaveWalk w = {k, have, distinct, nd, tiles, steps, table, best, best_blank};
    const LeaveAt root = {0, 0, 0, k->n ? kwg_arc(k->nodes[0]) : 0, 0, -1};
    leave_next(&w, 0, &root);
    return radix;
}
