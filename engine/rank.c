/*
 * anchor.engine._movegen: The move buffer and ranking: a buffer sized for the search, and the found plays
 * ranked by score (a histogram) or by equity (a radix order), ties in generation order.
 */
#include "core.h"

/* Rank by score, descending; ties keep generation order (row, anchor, lexicon order),
 * which is deterministic. With limit >= 0 only the top `limit` are kept: a histogram
 * finds the cut-off score, so the rest are never sorted. O(n + max score). */
MoveRecord *rank_moves(const MoveBuf *buf, long limit, size_t *out_count) {
    size_t n = buf->count;
    size_t keep = (limit >= 0 && (size_t)limit < n) ? (size_t)limit : n;
    *out_count = keep;
    MoveRecord *sorted = malloc((keep ? keep : 1) * sizeof *sorted);
    if (!sorted) return NULL;
    if (keep == 0) return sorted;
    int32_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (buf->items[i].score > max) max = buf->items[i].score;
    size_t *slot = calloc((size_t)max + 2, sizeof *slot);
    if (!slot) {
        free(sorted);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) slot[buf->items[i].score]++;
    /* scores at or above `cut` are kept; at `cut` only the first `room` of them */
    size_t above = 0;
    int32_t cut = max;
    while (cut > 0 && above + slot[cut] < keep) above += slot[cut--];
    size_t room = keep - above;
    /* turn counts into starting offsets, highest score first */
    size_t offset = 0;
    for (int32_t sc = max; sc >= cut; sc--) {
        size_t c = slot[sc];
        slot[sc] = offset;
        offset += (sc == cut && c > room) ? room : c;
    }
    size_t at_cut_seen = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t sc = buf->items[i].score;
        if (sc < cut) continue;
        if (sc == cut) {
            if (at_cut_seen >= room) continue;
            at_cut_seen++;
        }
        sorted[slot[sc]++] = buf->items[i];
    }
    free(slot);
    return sorted;
}

typedef struct {
    float key;      /* score or equity */
    uint32_t index; /* into the buffer */
    uint64_t order; /* generation order: the tie-break */
} OrderKey;

static int by_key_then_order(const void *a, const void *b) {
    const OrderKey *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

/* An equity as an unsigned key whose ascending order is the equities' descending order. */
static inline uint32_t descending_key(float equity) {
    uint32_t bits;
    if (equity == 0.0f) equity = 0.0f; /* -0 ranks with +0 */
    memcpy(&bits, &equity, sizeof bits);
    bits = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u; /* now ascending with the float */
    return ~bits;
}

/* Every play's index, highest equity first, ties in buffer (generation) order: a stable
 * LSD radix sort on descending_key, a byte a pass, skipping bytes all keys share. O(n),
 * where a comparison sort of the 158,705 plays of a two-blank rack took a third of the
 * time of finding them. NULL when memory is out. */
static uint32_t *equity_order(const MoveBuf *buf) {
    size_t n = buf->count;
    uint32_t *key = malloc((n ? n : 1) * sizeof *key), *idx = malloc((n ? n : 1) * sizeof *idx);
    uint32_t *key2 = malloc((n ? n : 1) * sizeof *key2), *idx2 = malloc((n ? n : 1) * sizeof *idx2);
    size_t count[4][256];
    if (!key || !idx || !key2 || !idx2) {
        free(key);
        free(idx);
        free(key2);
        free(idx2);
        return NULL;
    }
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = descending_key(buf->equity[i]);
        key[i] = k;
        idx[i] = (uint32_t)i;
        for (int b = 0; b < 4; b++) count[b][k >> (8 * b) & 0xFF]++;
    }
    for (int b = 0; b < 4; b++) {
        size_t *c = count[b], at = 0;
        if (n == 0 || c[key[0] >> (8 * b) & 0xFF] == n) continue; /* one bucket: nothing moves */
        for (int v = 0; v < 256; v++) {
            size_t here = c[v];
            c[v] = at;
            at += here;
        }
        for (size_t i = 0; i < n; i++) {
            size_t to = c[key[i] >> (8 * b) & 0xFF]++;
            key2[to] = key[i];
            idx2[to] = idx[i];
        }
        uint32_t *t = key;
        key = key2;
        key2 = t;
        t = idx;
        idx = idx2;
        idx2 = t;
    }
    free(key);
    free(key2);
    free(idx2);
    return idx;
}

/* Rank by score or equity, descending, then generation order: MoveBuf.order when the
 * search was best-first, else the buffer's own order. Best-first buffers (at most
 * `keep` entries) by a comparison sort; every play by equity by equity_order. Returns
 * the best `limit` records, with their keys (equities, when ranking by equity) and order
 * keys. */
MoveRecord *rank_ordered(const MoveBuf *buf, long limit, int by_equity, size_t *out_count,
                                float **equities, uint64_t **orders) {
    size_t n = buf->count;
    size_t keep = (limit >= 0 && (size_t)limit < n) ? (size_t)limit : n;
    *out_count = keep;
    MoveRecord *sorted = malloc((keep ? keep : 1) * sizeof *sorted);
    float *eq = malloc((keep ? keep : 1) * sizeof *eq);
    uint64_t *ord = malloc((keep ? keep : 1) * sizeof *ord);
    if (!sorted || !eq || !ord) goto fail;
    if (!buf->order && by_equity) {
        uint32_t *ranked = equity_order(buf);
        if (!ranked) goto fail;
        for (size_t i = 0; i < keep; i++) {
            sorted[i] = buf->items[ranked[i]];
            eq[i] = buf->equity[ranked[i]];
            ord[i] = ranked[i];
        }
        free(ranked);
    } else {
        OrderKey *keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) goto fail;
        for (size_t i = 0; i < n; i++)
            keys[i] = (OrderKey){by_equity ? buf->equity[i] : (float)buf->items[i].score, (uint32_t)i,
                                 buf->order ? buf->order[i] : i};
        qsort(keys, n, sizeof *keys, by_key_then_order);
        for (size_t i = 0; i < keep; i++) {
            sorted[i] = buf->items[keys[i].index];
            eq[i] = keys[i].key;
            ord[i] = keys[i].order;
        }
        free(keys);
    }
    *equities = eq;
    *orders = ord;
    return sorted;
fail:
    free(sorted);
    free(eq);
    free(ord);
    return NULL;
}


/* An empty buffer for a search with this limit: best-first buffers (limit >= 0) start
 * with room for the plays they keep (up to INITIAL_RECORDS, then they grow) and carry order
 * keys. -1 when memory is out. */
int movebuf_init(MoveBuf *buf, long limit, int by_equity) {
    memset(buf, 0, sizeof *buf);
    buf->keep = limit;
    buf->known = -INFINITY;
    buf->enough = INFINITY;
    if (limit < 0) return 0;
    buf->capacity = limit < 1 ? 1 : limit < INITIAL_RECORDS ? (size_t)limit : INITIAL_RECORDS;
    buf->items = malloc(buf->capacity * sizeof *buf->items);
    buf->order = malloc(buf->capacity * sizeof *buf->order);
    buf->equity = by_equity ? malloc(buf->capacity * sizeof *buf->equity) : NULL;
    return buf->items && buf->order && (!by_equity || buf->equity) ? 0 : -1;
}

void movebuf_free(MoveBuf *buf) {
    free(buf->items);
    free(buf->equity);
    free(buf->order);
    memset(buf, 0, sizeof *buf);
}
