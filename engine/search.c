/*
 * anchor.engine._movegen: The search: LeftPart/ExtendRight [AJ88] with incremental scoring, the shadow bounds
 * that order and prune anchors, GADDAG-led left parts, best-first over anchors, and
 * search_moves, which runs both passes of one position.
 */
#include "core.h"

/* Double the buffer's capacity, its side arrays with it. */
static int grow(MoveBuf *out, int by_equity) {
    size_t cap = out->capacity ? out->capacity * 2 : INITIAL_RECORDS;
    if (resize((void **)&out->items, cap, sizeof *out->items) < 0 ||
        (by_equity && resize((void **)&out->equity, cap, sizeof *out->equity) < 0) ||
        (out->order && resize((void **)&out->order, cap, sizeof *out->order) < 0))
        return -1;
    out->capacity = cap;
    return 0;
}

/* Whether a tile from the rack can go on the empty square `idx` after `list`. */
static inline int can_place(const Search *s, uint32_t list, int idx) {
    return s->rack_left && (list_children(s, list) & s->pass.cross[idx] & playable(s));
}

/* Whether a play ranks above the worst kept one: higher score (or equity), or equal and
 * earlier in generation order. */
static inline int beats_floor(const MoveBuf *b, int by_equity, int32_t score, float equity,
                              uint64_t order) {
    if (by_equity) {
        if (equity != b->floor_equity) return equity > b->floor_equity;
    } else if (score != b->floor_score) {
        return score > b->floor_score;
    }
    return b->order && order < b->floor_order;
}

/* Whether kept play i ranks below kept play j: lower score (or equity), or equal and later. */
static inline int ranks_below(const MoveBuf *b, int by_equity, size_t i, size_t j) {
    if (by_equity) {
        if (b->equity[i] != b->equity[j]) return b->equity[i] < b->equity[j];
    } else if (b->items[i].score != b->items[j].score) {
        return b->items[i].score < b->items[j].score;
    }
    return b->order[i] > b->order[j];
}

static void swap_kept(MoveBuf *b, int by_equity, size_t i, size_t j) {
    MoveRecord m = b->items[i];
    b->items[i] = b->items[j];
    b->items[j] = m;
    uint64_t o = b->order[i];
    b->order[i] = b->order[j];
    b->order[j] = o;
    if (by_equity) {
        float e = b->equity[i];
        b->equity[i] = b->equity[j];
        b->equity[j] = e;
    }
}

/* Restore the heap of kept plays below slot i (the lowest-ranking at the root). */
static void sink(MoveBuf *b, int by_equity, size_t i) {
    for (;;) {
        size_t low = i, child = 2 * i + 1;
        if (child < b->count && ranks_below(b, by_equity, child, low)) low = child;
        if (child + 1 < b->count && ranks_below(b, by_equity, child + 1, low)) low = child + 1;
        if (low == i) return;
        swap_kept(b, by_equity, i, low);
        i = low;
    }
}

/* `keep` plays are kept: heap them (when the last one just came in) or restore the heap
 * under the root that was replaced, and read the floor off the root. */
static void raise_floor(MoveBuf *b, int by_equity) {
    if (!b->has_floor)
        for (size_t i = b->count / 2; i-- > 0;) sink(b, by_equity, i);
    else
        sink(b, by_equity, 0);
    b->has_floor = 1;
    b->floor_score = b->items[0].score;
    b->floor_equity = by_equity ? b->equity[0] : 0.0f;
    b->floor_order = b->order[0];
    b->floor_rises++;
}

/* A play found by another search, put in an empty buffer by equity as emit would put it
 * (the floor, when it fills the buffer), so that what this search finds must beat it. */
void movebuf_seed(MoveBuf *b, const MoveRecord *m, float equity, uint64_t order) {
    b->items[0] = *m;
    b->equity[0] = equity;
    b->order[0] = order;
    b->count = 1;
    if (b->keep == 1) raise_floor(b, 1);
}

/* The least order key a play this search finds from now on can have: its anchor's, and a
 * sequence number past every play made so far. A play tying the floor's value and found
 * after it in the same anchor ranks below it, so a bound that only ties cannot rank. */
static inline uint64_t next_order(const Search *s) { return s->order_base | s->out->seq; }

/* A play found (its tiles in s->placed, its main word from s->start_col to end_col), kept
 * when it could rank: its order key the next of the walk's, or `key` when `keyed` (laid.c). */
static inline __attribute__((always_inline)) void emit_play(Search *s, int end_col, Tally t, const int keyed, uint64_t key) {
    int start = s->start_col, len = end_col - start;
    if (len < 2) return;
    if (s->skip_lone_cross && t.placed == 1) {
        /* A lone tile with a perpendicular word was already found in the across pass. */
        for (int c = start; c < end_col; c++)
            if (s->placed[c] && s->pass.cross_score[s->row * s->pass.cols + c] >= 0) return;
    }
    MoveBuf *out = s->out;
    out->total++;
    int32_t score = t.main * t.mult + t.cross + (t.placed == s->ctx.rules->rack_size ? s->ctx.rules->bingo : 0);
    float equity = 0.0f;
    if (s->leaves && out->has_floor && (float)score + s->best_leave[t.placed] < out->floor_equity) {
        if (!keyed) out->seq++; /* not worth the floor with the best leave its tiles could keep: no need of its own */
        return;
    }
    if (s->leaves) {
        size_t used = 0;
        for (int c = start; c < end_col; c++) {
            uint8_t tile = s->placed[c];
            if (tile) used += s->leaves->key_step[(tile & BLANK_FLAG) ? 0 : tile];
        }
        equity = (float)score + (used < s->leaves->keys ? s->leaves->value[used] : 0.0f);
    }
    uint64_t order = keyed ? key : s->order_base | out->seq++;
    if (out->keep == 0) return;
    if (out->has_floor && !beats_floor(out, s->leaves != NULL, score, equity, order)) return;
    if (equity > out->enough) { /* by equity only: +inf otherwise */
        s->failed = FOUND_ENOUGH;
        return;
    }
    size_t at = 0; /* with `keep` plays kept, the new one replaces the floor at the root */
    if (!out->has_floor) {
        if (out->count == out->capacity && grow(out, s->leaves != NULL) < 0) {
            s->failed = FAIL_MEMORY;
            return;
        }
        at = out->count++;
    }
    MoveRecord *m = &out->items[at];
    if (s->leaves) out->equity[at] = equity;
    if (out->order) out->order[at] = order;
    m->score = score;
    m->row = (uint8_t)(s->pass.dir ? start : s->row);
    m->col = (uint8_t)(s->pass.dir ? s->row : start);
    m->dir = (uint8_t)s->pass.dir;
    m->len = (uint8_t)len;
    memset(m->tiles, 0, sizeof m->tiles);
    for (int i = 0; i < len; i++) m->tiles[i] = s->placed[start + i];
    if (out->keep > 0 && out->count == (size_t)out->keep) {
        raise_floor(out, s->leaves != NULL);
        /* nothing more this extension makes can rank now: stop it */
        if (s->prune && !could_rank(out, s->leaves != NULL, s->extend_bound, next_order(s))) {
            s->halted = 1;
            out->pruned = 1;
        }
    }
}

static void emit(Search *s, int end_col, Tally t) { emit_play(s, end_col, t, 0, 0); }

void emit_keyed(Search *s, int end_col, Tally t, uint64_t order) { emit_play(s, end_col, t, 1, order); }

static void extend_right(Search *s, uint32_t list, int col, Tally t);

int time_is_up(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* ExtendRight's step to the next square, `col` (right of the anchor): the word so far
 * ends there if the square is empty or off the board (emit it when `accepted`), and the
 * search goes on only where something can follow: a rack tile on an empty square, or a
 * board tile the lexicon allows after the word so far. */
static inline void advance(Search *s, uint32_t list, int col, int accepted, Tally t) {
    if (col >= s->pass.cols) {
        if (accepted) emit(s, col, t);
        return;
    }
    int idx = s->row * s->pass.cols + col;
    uint8_t cell = s->pass.cells[idx];
    if (cell == 0) {
        if (accepted) emit(s, col, t);
        if (can_place(s, list, idx)) extend_right(s, list, col, t);
    } else if (list_children(s, list) >> (cell & TILE_MASK) & 1) {
        extend_right(s, list, col, t);
    }
}

/* ExtendRight [AJ88] from square `col` (on the board): `list` is the sibling list of
 * letters that may follow the word so far. Words ending on an empty square are emitted by
 * advance(), which also decides whether calling this is worth it. */
static void extend_right(Search *s, uint32_t list, int col, Tally t) {
    if (s->failed | s->halted) return;
    if (s->has_deadline && (++s->steps & CLOCK_EVERY) == 0 && time_is_up(&s->deadline)) {
        s->failed = FAIL_TIME;
        return;
    }
    int idx = s->row * s->pass.cols + col;
    if (s->pass.cells[idx] == 0) {
        /* nothing to place when the list is 0 (no children) or the rack is empty */
        uint64_t children = list_children(s, list);
        uint64_t todo = children & s->pass.cross[idx] & playable(s);
        if (!todo) return;
        int32_t lm = s->pass.lm[idx], wm = s->pass.wm[idx], cross = s->pass.cross_score[idx];
        /* a blank goes down only where a play with one (the second of two: with both) could
         * still rank: else it is put out of reach for this square and all the recursion below */
        uint8_t hidden = 0;
        if (s->rack[0] && s->prune &&
            !could_rank(s->out, s->leaves != NULL,
                        s->rack[0] < s->blanks_held ? s->two_bound : s->blank_bound[s->left_len], next_order(s))) {
            s->out->pruned = 1;
            hidden = s->rack[0];
            s->rack[0] = 0;
            todo &= s->rack_mask;
        }
        Tally blank = t; /* a blank here scores nothing: the same for every letter */
        blank.mult *= wm;
        blank.placed++;
        if (cross >= 0) blank.cross += cross * wm;
        while (todo && !s->halted) {
            unsigned tile = (unsigned)__builtin_ctzll(todo);
            todo &= todo - 1;
            uint32_t node = s->ctx.nodes[child_at(list, children, tile)];
            uint32_t child = kwg_arc(node);
            int acc = kwg_accepts(node);
            if (s->rack[tile]) {
                int32_t points = s->ctx.rules->values[tile] * lm;
                Tally u = blank;
                u.main += points;
                if (cross >= 0) u.cross += points * wm;
                take_tile(s, tile);
                s->placed[col] = (uint8_t)tile;
                advance(s, child, col + 1, acc, u);
                return_tile(s, tile);
            }
            if (s->rack[0] && !s->halted) {
                take_tile(s, 0);
                s->placed[col] = (uint8_t)(tile | BLANK_FLAG);
                advance(s, child, col + 1, acc, blank);
                return_tile(s, 0);
            }
            s->placed[col] = 0;
        }
        s->rack[0] += hidden;
    } else {
        uint8_t cell = s->pass.cells[idx];
        uint32_t i = child_node(s, list, cell & TILE_MASK);
        if (!i) return;
        Tally u = t;
        u.main += tile_points(s->ctx.rules, cell);
        advance(s, kwg_arc(s->ctx.nodes[i]), col + 1, kwg_accepts(s->ctx.nodes[i]), u);
    }
}

/* The left part in s->left is complete: lay it left of the anchor and extend right. */
static void extend_from_left_part(Search *s, uint32_t list) {
    const int n = s->left_len, start = s->anchor_col - n, at = s->row * s->pass.cols + start;
    const uint8_t *restrict lm = s->pass.lm + at, *restrict wm = s->pass.wm + at, *restrict left = s->left;
    const int32_t *restrict values = s->ctx.rules->values;
    uint8_t *restrict placed = s->placed + start;
    Tally t = {0, 1, 0, n};
    for (int i = 0; i < n; i++) {
        uint8_t tile = left[i];
        placed[i] = tile;
        t.main += ((tile & BLANK_FLAG) ? 0 : values[tile]) * lm[i];
        t.mult *= wm[i];
    }
    s->start_col = start;
    extend_right(s, list, s->anchor_col, t);
}

/* Lay the prefix tile[0 .. len-1] from the rack left of the anchor, extend it right from
 * `list` (where it leads in the DAWG), and put the rack back as it was. */
static void extend_prefix(Search *s, const uint8_t *tile, int len, uint32_t list) {
    uint8_t whole[MAX_LETTERS + 1];
    memcpy(whole, s->rack, sizeof whole);
    const uint64_t rack_mask = s->rack_mask;
    const int rack_left = s->rack_left;
    for (int j = 0; j < len; j++) {
        take_tile(s, untile(tile[j]));
        s->left[j] = tile[j];
    }
    s->left_len = len;
    if (s->prune) s->extend_bound = s->left_bound[len];
    extend_from_left_part(s, list);
    s->halted = 0;
    memcpy(s->rack, whole, sizeof whole);
    s->rack_left = rack_left;
    s->rack_mask = rack_mask;
    s->left_len = 0;
}

/* Double the tree's room, moving it off the stack the first time. */
static int grow_left_parts(LeftParts *t) {
    size_t cap = 2 * t->capacity;
    if (cap > UINT32_MAX) return -1;
    if (!t->on_heap) {
        LeftPart *items = malloc(cap * sizeof *items);
        if (!items) return -1;
        memcpy(items, t->items, t->count * sizeof *items);
        t->items = items;
        t->on_heap = 1;
    } else if (resize((void **)&t->items, cap, sizeof *t->items) < 0) {
        return -1;
    }
    t->capacity = cap;
    return 0;
}

/* The letters the rack can put down after prefix e: any while a blank is left. */
static inline uint64_t left_rest(const Search *s, const LeftPart *e) { return e->blanks ? s->all_letters : e->have; }

/* A prefix of the tree: its rack and what may follow it, from its list and what the rack
 * holds after it. */
static inline LeftPart left_part_at(const Search *s, uint32_t list, uint8_t tile, int len, uint64_t have, int blanks) {
    LeftPart e = {have, 0, list, 0, 0, tile, (uint8_t)len, 0, (uint8_t)blanks};
    e.follow = list_children(s, list) & left_rest(s, &e);
    return e;
}

/* The prefixes extending left part `at` by one rack tile, added as its children in the
 * order LeftPart's recursion tries them: the rack's letters in letter order, then the
 * blank as each letter in letter order (so that once no play with a blank could rank,
 * the rest of the list is skipped at once). `count` holds what `at` leaves of the rack,
 * by tile. Returns -1 when memory is out. */
static int expand_left_part(const Search *s, LeftParts *t, uint32_t at, const uint8_t *count) {
    const LeftPart e = t->items[at];
    uint64_t children = list_children(s, e.list);
    uint32_t prev = 0;
    t->items[at].expanded = 1;
    for (int blank = 0; blank < 2; blank++) {
        if (blank && !count[0]) break;
        for (uint64_t todo = blank ? e.follow : e.follow & e.have; todo; todo &= todo - 1) {
            unsigned x = (unsigned)__builtin_ctzll(todo);
            uint32_t child = kwg_arc(s->ctx.nodes[child_at(e.list, children, x)]);
            if (!child || !count[blank ? 0 : x]) continue; /* !child: a word nothing follows */
            if (t->count == t->capacity && grow_left_parts(t) < 0) return -1;
            uint32_t i = (uint32_t)t->count++;
            uint64_t have = blank || count[x] > 1 ? e.have : e.have & ~((uint64_t)1 << x);
            t->items[i] = left_part_at(s, child, (uint8_t)(blank ? (x | BLANK_FLAG) : x), e.len + 1, have, e.blanks - blank);
            if (prev)
                t->items[prev].next = i;
            else
                t->items[at].child = i;
            prev = i;
        }
    }
    return 0;
}

/* Whether some letter of `can` (those the rack can put on the anchor after the prefix
 * ending in `list`) goes on with the n letters of `run` (the board tiles after it). */
static inline int goes_on(const Search *s, uint32_t list, uint64_t can, const uint8_t *run, int n) {
    uint64_t children = list_children(s, list);
    for (uint64_t todo = can; todo; todo &= todo - 1) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        uint32_t at = kwg_arc(s->ctx.nodes[child_at(list, children, x)]);
        for (int j = 0;;) {
            uint64_t has = list_children(s, at);
            if (!(has >> run[j] & 1)) break;
            if (++j == n) return 1;
            at = kwg_arc(s->ctx.nodes[child_at(at, has, run[j - 1])]);
        }
    }
    return 0;
}

/* Whether some letter of `can` (as for goes_on) ends a word on the anchor or goes on with
 * a letter of `then` (those the rack can put on the empty square after it; 0 if none). */
static inline int ends_or_goes_on(const Search *s, uint32_t list, uint64_t can, uint64_t then) {
    if (can & list_accepts(s, list)) return 1;
    if (!then) return 0;
    uint64_t children = list_children(s, list);
    for (uint64_t todo = can; todo; todo &= todo - 1) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        uint32_t at = kwg_arc(s->ctx.nodes[child_at(list, children, x)]);
        if (list_children(s, at) & then) return 1;
    }
    return 0;
}

/* ------------------------------------------------------- GADDAG-led left parts */
/* A KWG may carry a GADDAG (node 1): for every prefix u of a word, the path of u's letters
 * read backwards. At an anchor the search then need not try every prefix the rack spells:
 * the GADDAG, entered with the board tiles after the anchor (last first), then a letter for
 * the anchor, then the rack tiles leftwards, reaches exactly the prefixes P for which P,
 * the anchor's letter and those tiles begin a word. Those are collected, put in the order
 * the prefix tree walk would try them, and extended as it would: the same plays in the same
 * order, with the prefixes that lead nowhere never tried. The GADDAG only picks prefixes (a
 * path it has beyond the DAWG's finds no play), and it is used only when it was found to
 * hold every path the DAWG needs (gaddag_covers). Its lists have no masks: a lookup scans
 * at most MAX_LETTERS + 1 nodes of one, whatever the file says. */

/* The prefixes collected at one anchor, as sort keys: a digit of 7 bits per tile (its
 * letter, plus KEY_BLANK for a blank), the prefix's first tile in the top digit, zeros
 * after its last, so that keys sort as the prefix tree walk tries the prefixes (a prefix
 * before those extending it, the rack's letters in order, then the blank as each). */
#define KEY_BLANK 0x40u
typedef struct {
    uint64_t key[GADDAG_LEFTS];
    int n, overflow, room;
    unsigned top;                   /* the highest letter the rack can lay */
    uint8_t count[MAX_LETTERS + 1]; /* the rack, less the tiles on the path ([0]: its blanks) */
    uint64_t have;                  /* the letters count holds (bit t: count[t] > 0, t >= 1), or
                                     * every letter while it holds a blank */
    uint64_t letters;               /* the letters count holds, blank or none */
    uint64_t all;                   /* every letter of the ruleset */
    const uint32_t *nodes;
} LeftKeys;

/* Take tile x from the path's rack (x = 0: the blank) and put it back. */
static inline void left_take(LeftKeys *k, unsigned x) {
    if (!--k->count[x] && x) k->letters &= ~((uint64_t)1 << x);
    k->have = k->count[0] ? k->all : k->letters;
}

static inline void left_return(LeftKeys *k, unsigned x) {
    if (!k->count[x]++ && x) k->letters |= (uint64_t)1 << x;
    k->have = k->count[0] ? k->all : k->letters;
}

/* Every prefix the rack can lay left of the anchor along the GADDAG from node `at` (the
 * last tile laid, on the anchor or left of it): `key` holds the `depth` tiles laid left of
 * it so far, each new one becoming the prefix's first. Along a GADDAG path the letters so
 * far are only part of a word; they begin one when the node ends a word or its list holds
 * the separator (tile 0, first in the list) to go right from. */
static void collect_lefts(LeftKeys *k, uint32_t at, int depth, uint64_t key);
static void collect_blank_lefts(LeftKeys *k, uint32_t at, int depth, uint64_t key);

/* collect_lefts, compiled twice: for a rack with a blank (`blank`) each child is tried as
 * the rack's letter and then as the blank, and the rack without one pays nothing for it. */
static inline __attribute__((always_inline)) void collect_step(LeftKeys *k, uint32_t at, int depth, uint64_t key,
                                                               const int blank) {
    const uint32_t node = k->nodes[at], list = kwg_arc(node);
    if (kwg_accepts(node) || (list && kwg_tile(k->nodes[list]) == 0)) {
        if (k->n == GADDAG_LEFTS) {
            k->overflow = 1;
            return;
        }
        k->key[k->n++] = key;
    }
    if (depth == k->room || !list) return;
    /* the children the rack can follow, first: the GADDAG seldom stays in a core's cache,
     * and asking for each one's list now lets their reads overlap, where one by one, as
     * the recursion reaches them, each would wait for the last */
    uint32_t next[MAX_LETTERS + 1];
    int n = 0;
    for (uint32_t i = list, end = list + MAX_LETTERS; i <= end; i++) {
        const uint32_t sibling = k->nodes[i];
        const unsigned x = kwg_tile(sibling);
        if (x > k->top) break; /* lists go up by tile: no rack tile further on */
        if (k->have >> x & 1) { /* a letter the rack still holds (never the separator) */
            __builtin_prefetch(&k->nodes[kwg_arc(sibling)]);
            next[n++] = i;
        }
        if (kwg_is_end(sibling)) break;
    }
    const uint64_t shift = 7 * (GADDAG_MAX_ROOM - 1);
    for (int j = 0; j < n; j++) {
        const uint32_t i = next[j];
        const unsigned x = kwg_tile(k->nodes[i]);
        if (!blank) {
            if (!--k->count[x]) k->have &= ~((uint64_t)1 << x);
            collect_lefts(k, i, depth + 1, (uint64_t)x << shift | key >> 7);
            if (!k->count[x]++) k->have |= (uint64_t)1 << x;
            if (k->overflow) return;
            continue;
        }
        for (unsigned as_blank = 0; as_blank < 2; as_blank++) { /* the rack's letter, then a blank as it */
            const unsigned tile = as_blank ? 0 : x;
            if (!k->count[tile]) continue;
            left_take(k, tile);
            const uint64_t step = (uint64_t)(x | (as_blank ? KEY_BLANK : 0)) << shift | key >> 7;
            if (k->count[0])
                collect_blank_lefts(k, i, depth + 1, step);
            else
                collect_lefts(k, i, depth + 1, step);
            left_return(k, tile);
            if (k->overflow) return;
        }
    }
}

static void collect_lefts(LeftKeys *k, uint32_t at, int depth, uint64_t key) { collect_step(k, at, depth, key, 0); }

static void collect_blank_lefts(LeftKeys *k, uint32_t at, int depth, uint64_t key) {
    collect_step(k, at, depth, key, 1);
}

static int by_key(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Which prefix lengths could still rank, by could_rank on the bounds of this anchor: bit l
 * of `extend` for left parts of l tiles, of `deeper` for l or more, of `blanks` for l or
 * more with a blank; `two`, whether any play with two blanks could. Only a play moves the
 * floor: they are asked again after extending. */
typedef struct {
    uint32_t extend, deeper, blanks, two;
    uint32_t seen; /* the floor's rises when they were asked */
} LeftRanks;

static void left_ranks(const Search *s, int room, LeftRanks *b) {
    const MoveBuf *out = s->out;
    const int by_equity = s->leaves != NULL, has_blank = s->rack[0] > 0;
    const uint64_t first = next_order(s);
    b->seen = out->floor_rises;
    b->extend = b->deeper = 0;
    b->blanks = has_blank ? 0 : ~0u;
    for (int l = 0; l <= room + 1; l++) {
        if (l <= room) b->extend |= (uint32_t)could_rank(out, by_equity, s->left_bound[l], first) << l;
        b->deeper |= (uint32_t)could_rank(out, by_equity, s->deeper_bound[l], first) << l;
        if (has_blank) b->blanks |= (uint32_t)could_rank(out, by_equity, s->deeper_blank[l], first) << l;
    }
    b->two = s->rack[0] < 2 || could_rank(out, by_equity, s->two_bound, first);
}

/* LeftPart at the anchor, led by the GADDAG, for a rack with at most GADDAG_BLANKS blanks:
 * `run` holds the n board tiles right after the anchor. Returns -1, having done nothing, when the prefixes
 * are too many to collect (the prefix tree walk then does it), else 0. */
static int left_part_gaddag(Search *s, int room, const uint8_t *run, int n) {
    const uint32_t *nodes = s->ctx.nodes;
    const int alphabet = s->ctx.rules->alphabet;
    const uint64_t cross = s->pass.cross[s->row * s->pass.cols + s->anchor_col];
    uint32_t g = s->ctx.gaddag;
    for (int j = n - 1; j >= 0 && g; j--) {
        uint32_t i = gaddag_child(nodes, g, run[j]);
        g = i ? kwg_arc(nodes[i]) : 0;
    }
    if (!g) return 0; /* no word has a letter before these tiles: no play here */
    MoveBuf *out = s->out;
    LeftRanks ranks = {~0u, ~0u, ~0u, 1, out->floor_rises - 1};
    int recheck = s->prune;
    LeftKeys k;
    k.n = k.overflow = 0;
    k.room = room;
    if (s->prune) { /* no need to collect prefixes longer than any that could rank */
        left_ranks(s, room, &ranks);
        recheck = 0;
        while (k.room > 0 && !(ranks.extend >> k.room & 1)) k.room--;
        if (k.room < room) out->pruned = 1;
    }
    k.nodes = nodes;
    memcpy(k.count, s->rack, sizeof k.count);
    k.all = every_letter(s->ctx.rules);
    k.letters = s->rack_mask & ~(uint64_t)1;
    k.have = k.count[0] ? k.all : k.letters;
    k.top = k.count[0] ? (unsigned)alphabet : 63u - (unsigned)__builtin_clzll(s->rack_mask | 1);
    for (uint32_t i = g, c = 0; c <= MAX_LETTERS && !k.overflow; i++, c++) { /* the anchor's letter */
        uint32_t node = nodes[i];
        unsigned x = kwg_tile(node);
        if (x >= 1 && x <= (unsigned)alphabet && (cross >> x & 1))
            for (unsigned blank = 0; blank < 2 && !k.overflow; blank++) {
                const unsigned tile = blank ? 0 : x;
                if (!k.count[tile]) continue;
                left_take(&k, tile);
                if (k.count[0])
                    collect_blank_lefts(&k, i, 0, 0);
                else
                    collect_lefts(&k, i, 0, 0);
                left_return(&k, tile);
            }
        if (kwg_is_end(node)) break;
    }
    if (k.overflow) return -1;
    if (k.n > 64) {
        qsort(k.key, (size_t)k.n, sizeof *k.key, by_key);
    } else { /* the usual few dozen */
        for (int i = 1; i < k.n; i++) {
            uint64_t key = k.key[i];
            int j = i;
            for (; j > 0 && k.key[j - 1] > key; j--) k.key[j] = k.key[j - 1];
            k.key[j] = key;
        }
    }
    for (int i = 0; i < k.n; i++) {
        const uint64_t key = k.key[i];
        if (i > 0 && key == k.key[i - 1]) continue; /* reached through more than one letter */
        if (recheck && ranks.seen != out->floor_rises) left_ranks(s, room, &ranks);
        recheck = 0;
        uint8_t tile[GADDAG_MAX_ROOM];
        int len = 0, blanks = 0;
        for (; len < GADDAG_MAX_ROOM; len++) {
            const unsigned digit = (unsigned)(key >> (7 * (GADDAG_MAX_ROOM - 1 - len)) & 0x7F);
            if (!digit) break;
            blanks += (digit & KEY_BLANK) != 0;
            tile[len] = (uint8_t)((digit & ~KEY_BLANK) | (digit & KEY_BLANK ? BLANK_FLAG : 0));
        }
        /* as the walk skips them: a left part of this length, or one with a blank (two), that cannot rank */
        if (!(ranks.extend >> len & 1) || (blanks && !(ranks.blanks >> len & 1)) || (blanks > 1 && !ranks.two)) {
            out->pruned = 1;
            continue;
        }
        uint32_t list = s->ctx.root;
        for (int j = 0; j < len && list; j++) {
            uint32_t at = child_node(s, list, tile[j] & TILE_MASK);
            list = at ? kwg_arc(nodes[at]) : 0;
        }
        if (!list) continue; /* a path of the GADDAG's alone */
        extend_prefix(s, tile, len, list);
        if (s->failed) break;
        recheck = s->prune;
    }
    return 0;
}

/* LeftPart [AJ88]: every prefix from the rack of up to `room` tiles, each laid left of the
 * anchor and extended right when a rack tile can go on the anchor after it. The prefixes
 * are the same at every anchor, so they live in a tree (s->lefts) grown as anchors first
 * need them and walked here in the recursion's order; each knows what the rack holds after
 * it, so the rack is touched only to expand a prefix or to extend one. Best-first, a prefix
 * (and every longer one extending it) is skipped when no play through it could rank. */
static void left_part(Search *s, int room) {
    LeftParts *t = s->lefts;
    MoveBuf *out = s->out;
    const int anchor = s->row * s->pass.cols + s->anchor_col;
    const uint64_t cross = s->pass.cross[anchor];
    uint8_t run[MAX_SIDE]; /* the board tiles right after the anchor */
    int n = 0;
    for (int i = 1; s->anchor_col + i < s->pass.cols && s->pass.cells[anchor + i]; i++) run[n++] = s->pass.cells[anchor + i] & TILE_MASK;
    const int led = n >= GADDAG_MIN_RUN && s->rack[0] <= GADDAG_BLANKS;
    if (s->ctx.gaddag && n > 0 && led && room >= GADDAG_MIN_ROOM && room <= GADDAG_MAX_ROOM &&
        left_part_gaddag(s, room, run, n) == 0)
        return;
    uint32_t path[MAX_SIDE + 1]; /* path[d]: the prefix of d tiles being tried */
    /* the rack stays whole while the tree is walked; count: what the prefix being tried
     * leaves of it */
    uint8_t count[MAX_LETTERS + 1];
    memcpy(count, s->rack, sizeof count);
    uint32_t at = 0;
    path[0] = 0;
    LeftRanks ranks = {~0u, ~0u, ~0u, 1, out->floor_rises - 1};
    int recheck = s->prune;
    const int has_blank = s->rack[0] > 0;
    /* what stands after the anchor: a prefix is extended only when some letter it can put
     * on the anchor goes on with the board tiles there (up to RUN_AFTER of them), or, with
     * none, ends a word or goes on with a letter for the next square (most extensions
     * that find nothing stop right there) */
    const int room_after = s->anchor_col + 1 < s->pass.cols;
    const uint64_t cross_after = room_after ? s->pass.cross[anchor + 1] : 0;
    const int after = n < RUN_AFTER ? n : RUN_AFTER;
    for (;;) {
        const LeftPart *e = &t->items[at];
        if (recheck && ranks.seen != out->floor_rises) left_ranks(s, room, &ranks);
        recheck = 0;
        const uint64_t can = e->follow & cross;
        const int len = e->len;
        if (can) {
            if (!(ranks.extend >> len & 1)) {
                out->pruned = 1;
            } else if (after ? goes_on(s, e->list, can, run, after)
                             : ends_or_goes_on(s, e->list, can, cross_after & left_rest(s, e))) {
                uint8_t tile[MAX_SIDE];
                for (int d = 1; d <= len; d++) tile[d - 1] = t->items[path[d]].tile;
                extend_prefix(s, tile, len, e->list);
                if (s->failed) return;
                recheck = s->prune;
            }
        }
        /* the next prefix to try: the first extending this one, else the next one of the
         * same length, else that of a shorter one */
        uint32_t go = 0;
        int level = len + 1;
        /* the tiles a longer prefix leaves are fewer still: once none of them can go on the
         * anchor, nothing extending this prefix can be played here */
        if (len < room && e->list && (cross & left_rest(s, e))) {
            if (!(ranks.deeper >> (len + 1) & 1)) {
                out->pruned = 1;
            } else {
                if (!e->expanded && expand_left_part(s, t, at, count) < 0) {
                    s->failed = FAIL_MEMORY;
                    return;
                }
                go = t->items[at].child;
            }
        }
        for (;;) {
            /* a blank child after a prefix that holds one already puts down the second */
            if (has_blank && go && (t->items[go].tile & BLANK_FLAG) &&
                (!(ranks.blanks >> level & 1) || (!ranks.two && t->items[go].blanks + 1 < s->rack[0]))) {
                out->pruned = 1; /* nor any longer left part using the blank: the rest of the list */
                go = 0;
            }
            if (go || --level == 0) break;
            at = path[level]; /* the prefix at `level` is done */
            count[untile(t->items[at].tile)]++;
            go = t->items[at].next;
        }
        if (!go) return;
        count[untile(t->items[go].tile)]--;
        path[level] = at = go;
    }
}

/* Every play whose leftmost anchor is (row, col): the left part read from the board, or
 * every left part from the rack, each extended right [AJ88]. bounds: the anchor's shadow
 * bounds by left-part length, when searching best-first (else NULL). */
static void search_anchor(Search *s, int row, int col, const AnchorBounds *bounds) {
    int idx = row * s->pass.cols + col;
    s->row = row;
    s->anchor_col = col;
    s->order_base = (uint64_t)(s->pass.dir * MAX_CELLS + idx) << ORDER_ANCHOR_SHIFT;
    memset(s->placed, 0, sizeof s->placed);
    s->left_len = 0;
    const int blanks = s->prune && s->rack[0];
    if (blanks) {
        s->blank_bound[0] = bounds->blank[0];
        s->two_bound = bounds->two_blanks;
    }
    if (col > 0 && s->pass.cells[idx - 1]) {
        int c = col - 1;
        while (c > 0 && s->pass.cells[idx - (col - c) - 1]) c--;
        uint32_t list = s->ctx.root;
        Tally t = {0, 1, 0, 0};
        for (int k = c; k < col && list; k++) {
            uint8_t cell = s->pass.cells[row * s->pass.cols + k];
            uint32_t i = child_node(s, list, cell & TILE_MASK);
            list = i ? kwg_arc(s->ctx.nodes[i]) : 0;
            t.main += tile_points(s->ctx.rules, cell);
        }
        if (!list) return;
        s->start_col = c;
        if (s->prune) s->extend_bound = bounds->any[0];
        extend_right(s, list, col, t);
        s->halted = 0;
    } else {
        int room = left_room(s, row, col);
        if (s->prune) {
            memcpy(s->left_bound, bounds->any, (size_t)(room + 1) * sizeof *bounds->any);
            s->deeper_bound[room + 1] = -INFINITY;
            for (int l = room; l >= 0; l--) s->deeper_bound[l] = max_bound(s->left_bound[l], s->deeper_bound[l + 1]);
        }
        if (blanks) {
            memcpy(s->blank_bound, bounds->blank, (size_t)(room + 1) * sizeof *bounds->blank);
            s->deeper_blank[room + 1] = -INFINITY;
            for (int l = room; l >= 0; l--) s->deeper_blank[l] = max_bound(s->blank_bound[l], s->deeper_blank[l + 1]);
        }
        s->left_len = 0;
        left_part(s, room);
    }
}

/* A tile's place in the order the walk tries tiles: left of the anchor the rack's letters
 * in order, then the blank as each letter (expand_left_part); from the anchor rightwards
 * each letter, then the blank as that letter (extend_right). 0 is the mark between. */
static inline unsigned walk_digit(unsigned tile, int left) {
    if (!tile) return 0;
    const unsigned letter = tile & TILE_MASK, blank = (tile & BLANK_FLAG) != 0;
    return left ? 1 + letter + blank * (TILE_MASK + 1) : 2 * letter + blank + 1;
}

/* The order the search finds bingos of one anchor in: LeftPart's prefixes before those
 * extending them, then ExtendRight's tiles, each side in its own order (walk_digit).
 * Compared as the left tiles, a mark, then the right tiles: at each position both plays
 * are on the same side of their marks until one of them is at its mark. */
static int bingo_before(const BingoPlay *a, const BingoPlay *b, int tiles) {
    for (int i = 0; i <= tiles; i++) {
        unsigned x = walk_digit(i < a->left ? a->tile[i] : i == a->left ? 0 : a->tile[i - 1], i < a->left);
        unsigned y = walk_digit(i < b->left ? b->tile[i] : i == b->left ? 0 : b->tile[i - 1], i < b->left);
        if (x != y) return x < y;
    }
    return 0;
}

/* Anchor (row, col) when only its bingos could rank (the best play by equity, and every
 * other play here bounded below what it must beat): its bingos are laid from their words
 * and emitted in the order the search would find them, and nothing is walked. Returns 0,
 * having done nothing, when they cannot be laid (the anchor is then searched). */
static int emit_bingos(Search *s, int row, int col) {
    BingoPlay plays[KNOWN_BINGO_PLAYS];
    const int n = bingo_plays(s, row, col, plays, KNOWN_BINGO_PLAYS);
    if (n < 0) return 0;
    const int tiles = s->ctx.rules->rack_size;
    for (int i = 1; i < n; i++) {
        BingoPlay p = plays[i];
        int j = i;
        for (; j > 0 && bingo_before(&p, &plays[j - 1], tiles); j--) plays[j] = plays[j - 1];
        plays[j] = p;
    }
    s->row = row;
    s->anchor_col = col;
    s->order_base = (uint64_t)(s->pass.dir * MAX_CELLS + row * s->pass.cols + col) << ORDER_ANCHOR_SHIFT;
    s->left_len = 0;
    s->out->pruned = 1;
    s->extend_bound = INFINITY; /* none of them stops the others */
    for (int i = 0; i < n && !s->failed; i++) {
        const BingoPlay *p = &plays[i];
        memset(s->placed, 0, sizeof s->placed);
        for (int c = p->start, k = 0; c < p->end; c++)
            if (!s->pass.cells[row * s->pass.cols + c]) s->placed[c] = p->tile[k++];
        s->start_col = p->start;
        emit(s, p->end, p->t);
    }
    memset(s->placed, 0, sizeof s->placed);
    return 1;
}

static inline int can_start(const Search *s, int idx) {
    return s->pass.anchor[idx] && (s->pass.cross[idx] & playable(s));
}

/* Every play of one pass, in generation order. */
static void run_pass(Search *s) {
    for (int row = 0; row < s->pass.rows && !s->failed; row++)
        for (uint32_t a = s->pass.anchors[row]; a && !s->failed; a &= a - 1) {
            int col = __builtin_ctz(a);
            if (can_start(s, row * s->pass.cols + col)) search_anchor(s, row, col, NULL);
        }
}

typedef struct {
    uint64_t rank;    /* anchor_rank: the order of the search, largest first */
    float bound;
    int refined;      /* refine_bounds has tightened it (or it has no spans kept) */
    uint32_t ordinal; /* dir * MAX_CELLS + oriented square: generation order */
    uint32_t slot;    /* its bounds by left-part length */
} AnchorRef;

/* Higher bound first, then generation order, as one number: the bound's bits made to sort
 * as unsigned (bounds are never NaN; -0 counts as 0, which it equals), above the ordinal's
 * complement. */
static inline uint64_t anchor_rank(float bound, uint32_t ordinal) {
    uint32_t u;
    if (bound == 0.0f) bound = 0.0f;
    memcpy(&u, &bound, sizeof u);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return (uint64_t)u << 32 | (UINT32_MAX - ordinal);
}

/* Whether x is searched before y. */
static inline int searched_before(const AnchorRef *x, const AnchorRef *y) { return x->rank > y->rank; }

/* Restore the heap order below slot i (a binary max-heap by searched_before). */
static void sift_down(AnchorRef *heap, size_t n, size_t i) {
    AnchorRef item = heap[i];
    for (size_t child; (child = 2 * i + 1) < n; i = child) {
        if (child + 1 < n && searched_before(&heap[child + 1], &heap[child])) child++;
        if (!searched_before(&heap[child], &item)) break;
        heap[i] = heap[child];
    }
    heap[i] = item;
}

/* Whether a rack with a blank has the anchor's plays laid (laid.c) rather than walked: where
 * a left part from the rack can go (after a board tile or another anchor the walk has no
 * prefixes to try, and is the quicker), unless the anchor has a lane of many blank pairs
 * whose bingos could rank (the walk finds those that fit its squares without trying every
 * pair's words). */
static int lays(const MoveBuf *buf, const AnchorBounds *b, uint64_t first) {
    if (b->room == 0) return 0; /* anchor_bound's room: 0 after a board tile */
    if (!b->lanes) return 1;
    float whole = -INFINITY;
    for (int l = 0; l <= b->room; l++) whole = max_bound(whole, b->whole[l]);
    return !could_rank(buf, 1, whole, first);
}

/* Top-N: the anchors of both passes, highest shadow bound first, until none can beat the
 * N-th best play found; within an anchor, left-part lengths that cannot are skipped. */
static int search_best_first(Search *passes, int mode, MoveBuf *buf, int by_equity, const uint32_t *lines) {
    AnchorRef refs[2 * MAX_CELLS];
    SpanBound span_items[LOCAL_SPANS];
    SpanBounds spans = {span_items, 0, LOCAL_SPANS};
    if (passes[0].parts) passes[0].spans = passes[1].spans = &spans;
    /* each anchor's bounds (232 bytes): on the stack for the usual few dozen anchors, on the
     * heap (room for every square of both passes) past LOCAL_ANCHORS */
    AnchorBounds local[LOCAL_ANCHORS], *bounds = local;
    size_t n = 0;
    for (int dir = 0; dir < 2; dir++) {
        if (!(mode & (dir ? MODE_DOWN : MODE_ACROSS))) continue;
        Search *s = &passes[dir];
        for (int row = 0; row < s->pass.rows; row++)
            for (uint32_t a = lines && !(lines[dir] >> row & 1) ? 0 : s->pass.anchors[row]; a; a &= a - 1) {
                int col = __builtin_ctz(a), idx = row * s->pass.cols + col;
                if (!can_start(s, idx)) continue;
                if (n == LOCAL_ANCHORS && bounds == local) {
                    bounds = malloc(2 * MAX_CELLS * sizeof *bounds);
                    if (!bounds) return FAIL_MEMORY;
                    memcpy(bounds, local, sizeof local);
                }
                float bound = anchor_bound(s, row, col, &bounds[n]);
                if (buf->keep == 1 && by_equity) buf->known = max_bound(buf->known, bounds[n].bingo);
                if (bound > -INFINITY) {
                    uint32_t ordinal = (uint32_t)(dir * MAX_CELLS + idx);
                    refs[n] = (AnchorRef){anchor_rank(bound, ordinal), bound, bounds[n].spans == 0, ordinal, (uint32_t)n};
                    n++;
                }
            }
    }
    const int laying = by_equity && can_lay(&passes[0]);
    /* a heap, not a sort: the search usually stops after a few of the anchors */
    for (size_t i = n / 2; i-- > 0;) sift_down(refs, n, i);
    int failed = buf->known > buf->enough ? FOUND_ENOUGH : 0; /* a bingo the bounds placed */
    for (size_t left = n; left > 0 && !failed; left--) {
        const AnchorRef next = refs[0];
        uint64_t first = (uint64_t)next.ordinal << ORDER_ANCHOR_SHIFT;
        if (passes[0].prune && !could_rank(buf, by_equity, next.bound, first)) {
            buf->pruned = 1; /* nor can any later one */
            break;
        }
        Search *s = &passes[next.ordinal / MAX_CELLS];
        int idx = (int)(next.ordinal % MAX_CELLS);
        if (!next.refined) { /* tighter now, it may go back below others */
            float at_least = buf->has_floor ? max_bound(buf->known, buf->floor_equity) : buf->known;
            float bound = refine_bounds(s, &bounds[next.slot], at_least);
            refs[0].refined = 1;
            if (bound < next.bound) {
                if (bound == -INFINITY) {
                    refs[0] = refs[left - 1];
                    sift_down(refs, left - 1, 0);
                } else {
                    refs[0].bound = bound;
                    refs[0].rank = anchor_rank(bound, next.ordinal);
                    sift_down(refs, left, 0);
                    left++;
                }
                continue;
            }
        }
        refs[0] = refs[left - 1];
        sift_down(refs, left - 1, 0);
        /* only a bingo here could be the best play: lay them, walk nothing */
        const int bingos_only = buf->keep == 1 && by_equity && s->prune && bounds[next.slot].bingo > -INFINITY &&
                                !could_rank(buf, by_equity, bounds[next.slot].other, first);
        if (bingos_only && emit_bingos(s, idx / s->pass.cols, idx % s->pass.cols)) {
            failed = s->failed;
            continue;
        }
        if (laying && !bingos_only && lays(buf, &bounds[next.slot], first)) {
            lay_anchor(s, &bounds[next.slot]);
            failed = s->failed;
            continue;
        }
        search_anchor(s, idx / s->pass.cols, idx % s->pass.cols, &bounds[next.slot]);
        failed = s->failed;
    }
    if (bounds != local) free(bounds);
    passes[0].spans = passes[1].spans = NULL;
    return failed;
}

/* The lexicon's tables, for a search or a board prepared for one. */
void attach(Search *p, const Core *g) {
    p->ctx.nodes = g->nodes;
    p->ctx.masks = g->masks;
    p->ctx.runs = g->runs;
    p->ctx.before = g->reach;
    p->ctx.root = kwg_arc(g->nodes[0]);
    p->ctx.gaddag = g->gaddag;
    p->ctx.rules = &g->rules;
    p->ctx.short_words = g->short_words.slots ? &g->short_words : NULL;
}

/* Every play for `rack` (counts, `rack_total` tiles) on `board` into `buf` (from
 * movebuf_init), unranked: set up both passes in s[0..1], then search all anchors in
 * generation order, or best bound first with a limit. Returns 0, FAIL_MEMORY, FAIL_TIME or
 * (buf->enough set) FOUND_ENOUGH.
 * Touches no Python object: callers may release the GIL around it. */
int search_moves(const Core *g, const uint8_t *board, const uint8_t *rack, int rack_total,
                        const SearchArgs *a, Search s[2], MoveBuf *buf) {
    const Rules *r = &g->rules;
    buf->known = -INFINITY; /* until the bounds place a bingo */
    int mode = a->mode;
    if (a->limit == 1 && !a->count_all && mode == (MODE_ACROSS | MODE_DOWN) && r->mirrored) {
        /* the best play of an empty board: each down play ties its across mirror, which
         * comes first, so the down pass cannot hold it */
        int empty = !board[r->centre_row * r->cols + r->centre_col]; /* the usual answer, at once */
        for (int i = 0; i < r->rows * r->cols && empty; i++) empty = !board[i];
        if (empty) {
            mode = MODE_ACROSS;
            buf->pruned = 1;
        }
    }
    int32_t tile_desc[MAX_RACK] = {0};
    float best_leave[MAX_RACK + 1] = {0}, blank_leave[MAX_RACK + 1], two_leave[MAX_RACK + 1];
    rack_bounds(rack, r, a->leaves, tile_desc, best_leave, blank_leave, two_leave);
    const Anagrams *anagrams = g->anagrams.slots ? &g->anagrams : NULL;
    Bingos bingos[1];
    bingos_init(bingos, anagrams, rack, r);
    for (int dir = 0; dir < 2; dir++) {
        Search *p = &s[dir];
        attach(p, g);
        p->ctx.anagrams = anagrams;
        p->ctx.words = anagrams && g->words.bits ? &g->words : NULL;
        p->bingos = bingos;
        memcpy(p->rack, rack, (size_t)r->alphabet + 1);
        memset(p->rack + r->alphabet + 1, 0, sizeof p->rack - (size_t)r->alphabet - 1);
        p->rack_left = rack_total;
        p->all_letters = every_letter(r);
        p->rack_mask = 0;
        for (int k = 0; k <= r->alphabet; k++)
            if (rack[k]) p->rack_mask |= (uint64_t)1 << k;
        p->skip_lone_cross = dir == 1 && (mode & MODE_ACROSS);
        p->leaves = a->leaves;
        memcpy(p->tile_desc, tile_desc, sizeof tile_desc);
        memcpy(p->best_leave, best_leave, sizeof best_leave);
        memcpy(p->blank_leave, blank_leave, sizeof blank_leave);
        memcpy(p->two_leave, two_leave, sizeof two_leave);
        p->blanks_held = rack[0];
        p->prune = a->limit >= 0 && !a->count_all;
        p->out = buf;
        p->failed = 0;
        p->halted = 0;
        p->extend_bound = INFINITY; /* each extension and each laying of bingos sets its own */
        p->steps = 0;
        p->has_deadline = a->has_deadline;
        p->deadline = a->deadline;
        p->order_base = 0;
        if ((mode & (dir ? MODE_DOWN : MODE_ACROSS)) && !a->prepared) prepare_pass(p, r, board, dir, playable(p));
    }
    bingos->alone = rack_spells(&s[0], 0);
    /* by equity with a limit, an anchor's bounds keep only the leaves of parts that spell
     * words, once it comes up to be searched */
    RackParts parts[1];
    s[0].parts = s[1].parts = NULL;
    s[0].lay_masks = s[1].lay_masks = NULL;
    s[0].spans = s[1].spans = NULL;
    if (a->leaves && s[0].ctx.words && a->limit >= 0 && !a->count_all && rack_parts_init(parts, r, rack, a->leaves) == 0)
        s[0].parts = s[1].parts = parts;
    if (!s[0].ctx.root) return 0; /* an empty lexicon: no plays */
    if (a->limit == 0 && !a->count_all) {
        buf->pruned = 1; /* nothing wanted, nothing searched */
        return 0;
    }
    /* a rack with a blank has its anchors laid (laid.c): what it remembers of its parts, on
     * the heap (13 KiB) rather than in every search's frame; without it they are walked.
     * Taken here, past the returns above, and freed below. */
    LayMasks *lay_masks = s[0].parts && rack[0] ? malloc(sizeof *lay_masks) : NULL;
    if (lay_masks) {
        for (int i = 0; i < 1 << LAY_MASK_BITS; i++) lay_masks->entry[i].blanks = 0;
        memset(lay_masks->alone_known, 0, sizeof lay_masks->alone_known);
        s[0].lay_masks = s[1].lay_masks = lay_masks;
    }
    /* the prefix tree starts as the empty prefix; the stack holds the usual few hundred */
    LeftPart local[LOCAL_LEFT_PARTS];
    LeftParts lefts = {local, 1, LOCAL_LEFT_PARTS, 0};
    local[0] = left_part_at(&s[0], s[0].ctx.root, 0, 0, s[0].rack_mask & ~(uint64_t)1, s[0].rack[0]);
    s[0].lefts = s[1].lefts = &lefts;
    int failed = 0;
    if (a->limit >= 0) {
        failed = search_best_first(s, mode, buf, a->leaves != NULL, a->lines);
    } else {
        for (int dir = 0; dir < 2 && !failed; dir++)
            if (mode & (dir ? MODE_DOWN : MODE_ACROSS)) {
                run_pass(&s[dir]);
                failed = s[dir].failed;
            }
    }
    if (lefts.on_heap) free(lefts.items);
    s[0].lefts = s[1].lefts = NULL;
    free(lay_masks);
    s[0].lay_masks = s[1].lay_masks = NULL;
    bingos_free(bingos);
    return failed;
}
