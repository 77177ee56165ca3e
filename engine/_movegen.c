/*
 * anchor.engine._movegen — the native core of Anchor.
 *
 * The Appel & Jacobson move generator (CACM 31(5), 1988) with incremental scoring, here;
 * the KWG checker (Lexicon.open/build trust nothing they did not check) in kwg_check.h,
 * leave tables in leave_table.h, Monte Carlo playouts in playout.h, every constant in
 * movegen_limits.h.
 *
 * KWG node layout (little-endian uint32, the format of wolges/MAGPIE/Macondo):
 *   bits  0..21  arc index: first node of the child sibling list (0 = no children)
 *   bit   22     last sibling of its list
 *   bit   23     accepts: a word ends with this node's tile
 *   bits 24..31  tile (1..N letters; 0 is the GADDAG separator)
 * Node 0's arc is the DAWG root list, node 1's the GADDAG root list (0 if absent).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "movegen_limits.h"
#include "kwg_check.h"
#include "leave_table.h"

/* --------------------------------------------------------- move generator */
/* Move record, 32 bytes in native byte order (engine/moves.py unpacks it):
 *   0..3   int32  score (main word, cross-words, bingo)
 *   4      uint8  row of the main word's first square (original board, 0-based)
 *   5      uint8  column of that square
 *   6      uint8  direction: 0 across, 1 down
 *   7      uint8  length of the main word (2..MAX_SIDE)
 *   8..31  uint8  one byte per main-word square: the tile placed there (1..N, with
 *                 BLANK_FLAG for a blank standing for it), 0 if it was already on the board
 */
typedef struct {
    int32_t score;
    uint8_t row, col, dir, len;
    uint8_t tiles[RECORD_TILES];
} MoveRecord;
_Static_assert(sizeof(MoveRecord) == 32, "MoveRecord is 32 bytes");

/* Plays found so far.
 *
 * Without a limit (keep = -1) plays are found in generation order (pass, row, anchor,
 * then the recursion's order) and ranked once at the end; ties keep that order.
 *
 * With a limit (keep >= 0) anchors are searched best bound first, so each play carries
 * its generation-order key in `order` (anchor ordinal << ORDER_ANCHOR_SHIFT | sequence)
 * and ranking breaks ties by it: the top `keep` are the first `keep` of the full ranking.
 * At most `keep` plays are kept: once there are that many they form a binary heap with
 * the one ranking lowest at the root, the floor. A play that does not beat the floor
 * (score, then key) could never rank, so it is counted in `total` and dropped; one that
 * does takes the root's place. The floor rises with every such play, and a left part or
 * an anchor whose bound cannot beat it is never searched. */
typedef struct {
    MoveRecord *items;
    float *equity;   /* beside items when ranking by equity, else NULL */
    uint64_t *order; /* beside items when searching best-first (keep >= 0), else NULL */
    size_t count, capacity;
    size_t total;      /* plays found, kept or not: every play unless `pruned` */
    int pruned;        /* some anchor or left part was skipped as unable to rank */
    long keep;         /* -1: keep all */
    uint64_t seq;      /* plays emitted so far: the low part of the order key */
    int has_floor;
    int32_t floor_score;
    float floor_equity;
    uint64_t floor_order;
    uint32_t floor_rises; /* how often the floor was set: cached answers of could_rank go
                           * stale when it changes */
} MoveBuf;

#define ORDER_ANCHOR_SHIFT 40 /* plays per anchor < 2^40; anchor ordinals < 2 * MAX_CELLS */

/* Leave values for equity ranking, for one rack: the leave kept after a play is found
 * by its "used" key, the sum of key_step[tile] over the tiles placed (tile 0 = blank),
 * a mixed-radix number over the rack's distinct tiles; value[key] is the leave value of
 * the rack minus those tiles (worked out in Python from the KLV2 file). */
typedef struct {
    const uint16_t *key_step; /* MAX_LETTERS + 1 entries */
    const float *value;       /* keys entries */
    size_t keys;
    /* when not NULL (MAX_RACK + 1 entries each): the best value after playing k tiles, and
     * after playing k tiles a blank among them (-inf where there is none), as rack_bounds
     * would find them */
    const float *best, *best_blank;
} LeaveTable;

/* Per sibling-list start: which tiles the list holds and which of them end a word.
 * Lists are sorted by tile, so the node for tile t is at start + popcount(children
 * below t): O(1) lookups and loops over only the letters that can go on a square. */
typedef struct {
    uint64_t children;
    uint64_t accepts;
} ListMasks;

/* An anchor's shadow bounds by the length l of the left part from the rack (l = 0 also
 * for a left part on the board): of every play, and of the plays putting down a blank
 * (a blank scores nothing, and by equity the leave it would have been part of is gone). */
typedef struct {
    float any[MAX_RACK + 1];
    float blank[MAX_RACK + 1];
} AnchorBounds;

/* A prefix from the rack, as LeftPart [AJ88] tries it: the list of letters that may follow
 * it in the lexicon, its length and last tile, its place in the tree of prefixes, and what
 * the rack holds after it, so that walking the tree at an anchor needs no rack bookkeeping
 * (32 bytes). Index 0 is the empty prefix, so 0 also means "none" below. */
typedef struct {
    uint64_t have;    /* the letters left on the rack after it (blanks aside) */
    uint64_t follow;  /* the letters the rack can put down right after it that the lexicon allows */
    uint32_t list;
    uint32_t child;   /* the first prefix extending it by one tile */
    uint32_t next;    /* the next prefix extending its parent */
    uint8_t tile;     /* BLANK_FLAG set for a blank; 0 for the empty prefix */
    uint8_t len;
    uint8_t expanded; /* children added (grown when an anchor first needs them) */
    uint8_t blanks;   /* blanks left on the rack after it */
} LeftPart;
_Static_assert(sizeof(LeftPart) == 32, "LeftPart is 32 bytes");

/* The rack's prefixes, shared by both passes of one search. */
typedef struct {
    LeftPart *items;
    size_t count, capacity;
    int on_heap; /* items was malloc'd (it starts on the caller's stack) */
} LeftParts;

/* Running score of the play being built: passed by value down the recursion. */
typedef struct {
    int32_t main;  /* letter sum of the main word, letter premiums applied */
    int32_t mult;  /* product of word premiums under placed tiles */
    int32_t cross; /* finished scores of the cross-words formed so far */
    int32_t placed;
} Tally;

/* Ruleset constants, fixed for the life of a Generator. */
typedef struct {
    int rows, cols, alphabet, rack_size, bingo, centre_row, centre_col;
    int32_t values[MAX_LETTERS + 1]; /* by tile; [0] = 0 for blanks */
    uint8_t lm[2][MAX_CELLS], wm[2][MAX_CELLS]; /* premiums, as read by each pass */
} Rules;

/* Bits 1..alphabet: every letter of the ruleset (bit 0, the blank, is never a letter). */
static inline uint64_t every_letter(const Rules *r) { return (((uint64_t)1 << r->alphabet) - 1) << 1; }

/* Bingo words by their letters: every word of rack_size to MAX_SIDE letters (the whole
 * rack, alone or with board tiles), keyed by the sum of its letters' random codes (so a key
 * needs no sorting and grows a letter at a time), in an open addressing set (0: empty).
 * Two multisets may share a key; then a rack is taken to spell a word it does not, which
 * keeps a bingo in a bound and never drops a play. Built once per Generator
 * (build_anagrams). */
typedef struct {
    uint64_t *slots;
    size_t mask; /* slots - 1, a power of two less one */
    size_t count;
    uint64_t code[MAX_LETTERS + 1]; /* by letter */
} Anagrams;

/* What the search knows of the rack's bingos, shared by both passes (the rack is whole
 * whenever bounds are taken, so one answer per set of board letters serves the whole
 * search): the answers last asked, by the board letters' codes, direct-mapped. */
typedef struct {
    int checked;  /* the rack has rack_size tiles, at most two blanks and a set to ask */
    uint64_t key; /* its letters' codes, blanks left out */
    int alone;    /* it spells a word by itself */
    struct {
        uint64_t with; /* the board letters' codes */
        int8_t known, spells;
    } asked[BINGO_ANSWERS];
} Bingos;

/* Everything LeftPart/ExtendRight read and write, for one pass over one orientation.
 * The down pass runs on the transposed board, so the search only knows "across". */
typedef struct {
    const uint32_t *nodes;
    const ListMasks *masks;             /* indexed by list start (every one below the extent) */
    const uint8_t *runs;                /* Runs: the letter runs words hold */
    const uint8_t *before;              /* Reach: letters a word has before a run, at most */
    const Anagrams *anagrams;           /* bingo words by their letters, or NULL */
    Bingos *bingos;                     /* shared by the two passes */
    uint32_t root;
    uint32_t gaddag;                    /* GADDAG root list, when the file has one that covers the DAWG; else 0 */
    const Rules *rules;
    int rows, cols, dir;                /* oriented geometry; dir 1 = transposed */
    uint8_t cells[MAX_CELLS];
    const uint8_t *lm, *wm;             /* the rules' premiums for this orientation */
    uint64_t cross[MAX_CELLS];          /* rack letters the perpendicular word allows */
    int32_t cross_score[MAX_CELLS];     /* value of perpendicular tiles; -1 = none */
    uint8_t anchor[MAX_CELLS];
    uint32_t anchors[MAX_SIDE];         /* the same, a bit per column of each row */
    int empty_board;                    /* no tile yet: the centre is the one anchor */
    uint8_t rack[MAX_LETTERS + 1];      /* tile counts; [0] = blanks */
    uint64_t rack_mask;                 /* bit t set while tile t is on the rack (0: blank) */
    uint64_t all_letters;               /* bits 1..N */
    int rack_left;
    int row, anchor_col, start_col;
    LeftParts *lefts;                   /* the rack's left parts, shared by both passes */
    uint8_t left[MAX_SIDE];             /* left part placed from the rack */
    int left_len;
    uint8_t placed[MAX_SIDE];           /* tile placed in each column of the row, 0 = none */
    int skip_lone_cross;                /* "both" mode's down pass: drop duplicates */
    const LeaveTable *leaves;           /* NULL: rank by score */
    int32_t tile_desc[MAX_RACK];        /* values of the rack's tiles, highest first (blank 0) */
    float best_leave[MAX_RACK + 1];     /* best leave value playing k tiles (0 by score) */
    int prune;                          /* best-first search: skip what cannot rank */
    float left_bound[MAX_RACK + 1];     /* this anchor: bound of plays with l left tiles */
    float deeper_bound[MAX_RACK + 2];   /* ... and with l or more (suffix maxima) */
    uint64_t order_base;                /* this anchor's ordinal << ORDER_ANCHOR_SHIFT */
    MoveBuf *out;
    int failed;                         /* FAIL_MEMORY or FAIL_TIME: unwind */
    uint64_t steps;                     /* extend_right calls, for the clock */
    int has_deadline;
    struct timespec deadline;           /* CLOCK_MONOTONIC */
    float blank_leave[MAX_RACK + 1];    /* best_leave when a blank is among the tiles (-inf: no blank) */
    float blank_bound[MAX_RACK + 1];    /* left_bound and deeper_bound of plays putting down a blank */
    float deeper_blank[MAX_RACK + 2];
} Search;

/* Letters the rack can put down: any letter while a blank remains. */
static inline uint64_t playable(const Search *s) {
    return s->rack[0] ? s->all_letters : s->rack_mask;
}

/* The rack tile a placed tile came from: 0 for a blank. */
static inline unsigned untile(uint8_t tile) { return (tile & BLANK_FLAG) ? 0 : tile; }

/* Branch-free: bit t of rack_mask is set exactly while rack[t] > 0, the blank's bit 0
 * included (no letter mask has bit 0, so nothing reads it). */
static inline void take_tile(Search *s, unsigned from) {
    s->rack_mask &= ~((uint64_t)(--s->rack[from] == 0) << from);
    s->rack_left--;
}

static inline void return_tile(Search *s, unsigned from) {
    s->rack[from]++;
    s->rack_mask |= (uint64_t)1 << from;
    s->rack_left++;
}

static inline int32_t tile_points(const Rules *r, uint8_t cell) {
    return (cell & BLANK_FLAG) ? 0 : r->values[cell & TILE_MASK];
}

/* Every list the search reaches is the root, 0 (no list: masks[0] is empty) or the arc of
 * a node in a list reached before, so the KWG check's walk visited it: it lies below the
 * Generator's `extent` and needs no test here. */
static inline uint64_t list_children(const Search *s, uint32_t list) {
    return s->masks[list].children;
}

/* Index of the node for `tile` in the sibling list starting at `list`, or 0. */
static inline uint32_t child_node(const Search *s, uint32_t list, unsigned tile) {
    uint64_t children = list_children(s, list);
    if (tile > MAX_LETTERS || !(children >> tile & 1u)) return 0;
    return list + (uint32_t)__builtin_popcountll(children & (((uint64_t)1 << tile) - 1));
}

/* Resize *array to cap elements of `size` bytes; -1 (array untouched) when memory is out. */
static int resize(void **array, size_t cap, size_t size) {
    void *grown = realloc(*array, cap * size);
    if (!grown) return -1;
    *array = grown;
    return 0;
}

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
    return s->rack_left && (list_children(s, list) & s->cross[idx] & playable(s));
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

/* Whether some play bounded by `bound` whose order key is at least `first` could rank. */
static inline int could_rank(const MoveBuf *b, int by_equity, float bound, uint64_t first) {
    if (!b->has_floor) return 1;
    float floor = by_equity ? b->floor_equity : (float)b->floor_score;
    return bound > floor || (bound == floor && first < b->floor_order);
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

/* The least order key a play this search finds from now on can have: its anchor's, and a
 * sequence number past every play made so far. A play tying the floor's value and found
 * after it in the same anchor ranks below it, so a bound that only ties cannot rank. */
static inline uint64_t next_order(const Search *s) { return s->order_base | s->out->seq; }

static void emit(Search *s, int end_col, Tally t) {
    int start = s->start_col, len = end_col - start;
    if (len < 2) return;
    if (s->skip_lone_cross && t.placed == 1) {
        /* A lone tile with a perpendicular word was already found in the across pass. */
        for (int c = start; c < end_col; c++)
            if (s->placed[c] && s->cross_score[s->row * s->cols + c] >= 0) return;
    }
    MoveBuf *out = s->out;
    out->total++;
    int32_t score = t.main * t.mult + t.cross + (t.placed == s->rules->rack_size ? s->rules->bingo : 0);
    float equity = 0.0f;
    if (s->leaves) {
        size_t key = 0;
        for (int c = start; c < end_col; c++) {
            uint8_t tile = s->placed[c];
            if (tile) key += s->leaves->key_step[(tile & BLANK_FLAG) ? 0 : tile];
        }
        equity = (float)score + (key < s->leaves->keys ? s->leaves->value[key] : 0.0f);
    }
    uint64_t order = s->order_base | out->seq++;
    if (out->keep == 0) return;
    if (out->has_floor && !beats_floor(out, s->leaves != NULL, score, equity, order)) return;
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
    m->row = (uint8_t)(s->dir ? start : s->row);
    m->col = (uint8_t)(s->dir ? s->row : start);
    m->dir = (uint8_t)s->dir;
    m->len = (uint8_t)len;
    memset(m->tiles, 0, sizeof m->tiles);
    for (int i = 0; i < len; i++) m->tiles[i] = s->placed[start + i];
    if (out->keep > 0 && out->count == (size_t)out->keep) raise_floor(out, s->leaves != NULL);
}

static int time_is_up(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static void extend_right(Search *s, uint32_t list, int col, Tally t);

/* ExtendRight's step to the next square, `col` (right of the anchor): the word so far
 * ends there if the square is empty or off the board (emit it when `accepted`), and the
 * search goes on only where something can follow: a rack tile on an empty square, or a
 * board tile the lexicon allows after the word so far. */
static inline void advance(Search *s, uint32_t list, int col, int accepted, Tally t) {
    if (col >= s->cols) {
        if (accepted) emit(s, col, t);
        return;
    }
    int idx = s->row * s->cols + col;
    uint8_t cell = s->cells[idx];
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
    if (s->failed) return;
    if (s->has_deadline && (++s->steps & CLOCK_EVERY) == 0 && time_is_up(&s->deadline)) {
        s->failed = FAIL_TIME;
        return;
    }
    int idx = s->row * s->cols + col;
    if (s->cells[idx] == 0) {
        /* nothing to place when the list is 0 (no children) or the rack is empty */
        uint64_t children = list_children(s, list);
        uint64_t todo = children & s->cross[idx] & playable(s);
        if (!todo) return;
        int32_t lm = s->lm[idx], wm = s->wm[idx], cross = s->cross_score[idx];
        /* a blank goes down only where a play with one could still rank: else it is put
         * out of reach for this square and all the recursion below it */
        uint8_t hidden = 0;
        if (s->rack[0] && s->prune &&
            !could_rank(s->out, s->leaves != NULL, s->blank_bound[s->left_len], next_order(s))) {
            s->out->pruned = 1;
            hidden = s->rack[0];
            s->rack[0] = 0;
            todo &= s->rack_mask;
        }
        while (todo) {
            unsigned tile = (unsigned)__builtin_ctzll(todo);
            todo &= todo - 1;
            uint32_t node = s->nodes[list + __builtin_popcountll(children & (((uint64_t)1 << tile) - 1))];
            uint32_t child = kwg_arc(node);
            int acc = kwg_accepts(node);
            for (int blank = 0; blank < 2; blank++) {
                unsigned from = blank ? 0 : tile;
                if (!s->rack[from]) continue;
                int32_t points = blank ? 0 : s->rules->values[tile];
                Tally u = t;
                u.main += points * lm;
                u.mult *= wm;
                u.placed++;
                if (cross >= 0) u.cross += (cross + points * lm) * wm;
                take_tile(s, from);
                s->placed[col] = (uint8_t)(blank ? (tile | BLANK_FLAG) : tile);
                advance(s, child, col + 1, acc, u);
                s->placed[col] = 0;
                return_tile(s, from);
            }
        }
        s->rack[0] += hidden;
    } else {
        uint8_t cell = s->cells[idx];
        uint32_t i = child_node(s, list, cell & TILE_MASK);
        if (!i) return;
        Tally u = t;
        u.main += tile_points(s->rules, cell);
        advance(s, kwg_arc(s->nodes[i]), col + 1, kwg_accepts(s->nodes[i]), u);
    }
}

/* The left part in s->left is complete: lay it left of the anchor and extend right. */
static void extend_from_left_part(Search *s, uint32_t list) {
    const int n = s->left_len, start = s->anchor_col - n, at = s->row * s->cols + start;
    const uint8_t *restrict lm = s->lm + at, *restrict wm = s->wm + at, *restrict left = s->left;
    const int32_t *restrict values = s->rules->values;
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
    extend_from_left_part(s, list);
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
 * order LeftPart's recursion tries them (letter order, a blank after the letter). `count`
 * holds what `at` leaves of the rack, by tile. Returns -1 when memory is out. */
static int expand_left_part(const Search *s, LeftParts *t, uint32_t at, const uint8_t *count) {
    const LeftPart e = t->items[at];
    uint64_t children = list_children(s, e.list), todo = e.follow;
    uint32_t prev = 0;
    t->items[at].expanded = 1;
    while (todo) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        todo &= todo - 1;
        uint32_t child = kwg_arc(s->nodes[e.list + __builtin_popcountll(children & (((uint64_t)1 << x) - 1))]);
        if (!child) continue; /* a word nothing follows: no left part goes on from it */
        for (int blank = 0; blank < 2; blank++) {
            if (!count[blank ? 0 : x]) continue;
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
        uint32_t at = kwg_arc(s->nodes[list + __builtin_popcountll(children & (((uint64_t)1 << x) - 1))]);
        for (int j = 0;;) {
            uint64_t has = list_children(s, at);
            if (!(has >> run[j] & 1)) break;
            if (++j == n) return 1;
            at = kwg_arc(s->nodes[at + __builtin_popcountll(has & (((uint64_t)1 << run[j - 1]) - 1))]);
        }
    }
    return 0;
}

/* Whether some letter of `can` (as for goes_on) ends a word on the anchor or goes on with
 * a letter of `then` (those the rack can put on the empty square after it; 0 if none). */
static inline int ends_or_goes_on(const Search *s, uint32_t list, uint64_t can, uint64_t then) {
    if (can & s->masks[list].accepts) return 1;
    if (!then) return 0;
    uint64_t children = list_children(s, list);
    for (uint64_t todo = can; todo; todo &= todo - 1) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        uint32_t at = kwg_arc(s->nodes[list + __builtin_popcountll(children & (((uint64_t)1 << x) - 1))]);
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

/* The node for `tile` in the sibling list at `list`, or 0. */
static inline uint32_t gaddag_child(const uint32_t *nodes, uint32_t list, unsigned tile) {
    if (!list) return 0;
    for (uint32_t i = list, n = 0; n <= MAX_LETTERS; i++, n++) {
        uint32_t node = nodes[i];
        if (kwg_tile(node) == tile) return i;
        if (kwg_is_end(node)) return 0;
    }
    return 0;
}

/* Whether the GADDAG at `gaddag` holds the backwards path of every prefix of every word of
 * the DAWG at `root` (words of up to MAX_SIDE letters, which is all a board can hold). 0 too
 * when that takes more than `budget` steps: the GADDAG is then left unused. */
static int gaddag_covers(const uint32_t *nodes, uint32_t root, uint32_t gaddag, uint64_t budget) {
    uint32_t at[MAX_SIDE + 1];
    uint8_t word[MAX_SIDE];
    int d = 0;
    if (!root) return 1;
    if (!gaddag) return 0;
    at[0] = root;
    for (;;) {
        uint32_t node = nodes[at[d]];
        word[d] = (uint8_t)kwg_tile(node);
        /* the prefix word[0..d], backwards */
        uint32_t g = gaddag;
        for (int j = d; j >= 0; j--) {
            uint32_t i = gaddag_child(nodes, g, word[j]);
            if (!i) return 0;
            g = j ? kwg_arc(nodes[i]) : 1;
            if (budget-- == 0) return 0;
        }
        uint32_t child = kwg_arc(node);
        if (child && d + 1 < MAX_SIDE) { /* down to the prefixes extending this one */
            d++;
            at[d] = child;
            continue;
        }
        while (kwg_is_end(nodes[at[d]])) { /* this list done: on to the parent's next */
            if (d-- == 0) return 1;
        }
        at[d]++;
    }
}

/* The prefixes collected at one anchor, from a rack without a blank (with one, every path
 * is open: more prefixes than the walk tries), as sort keys: a digit of 7 bits per tile
 * (its letter), the prefix's first tile in the top digit, zeros after its last, so that
 * keys sort as the prefix tree walk tries the prefixes (a prefix before those extending
 * it, letters in order). */
typedef struct {
    uint64_t key[GADDAG_LEFTS];
    int n, overflow, room;
    unsigned top;                   /* the highest letter on the rack */
    uint8_t count[MAX_LETTERS + 1]; /* the rack, less the tiles on the path */
    const uint32_t *nodes;
} LeftKeys;

/* Every prefix the rack can lay left of the anchor along the GADDAG from node `at` (the
 * last tile laid, on the anchor or left of it): `key` holds the `depth` tiles laid left of
 * it so far, each new one becoming the prefix's first. Along a GADDAG path the letters so
 * far are only part of a word; they begin one when the node ends a word or its list holds
 * the separator (tile 0, first in the list) to go right from. */
static void collect_lefts(LeftKeys *k, uint32_t at, int depth, uint64_t key) {
    const uint32_t node = k->nodes[at], list = kwg_arc(node);
    if (kwg_accepts(node) || (list && kwg_tile(k->nodes[list]) == 0)) {
        if (k->n == GADDAG_LEFTS) {
            k->overflow = 1;
            return;
        }
        k->key[k->n++] = key;
    }
    if (depth == k->room || !list) return;
    for (uint32_t i = list, n = 0; n <= MAX_LETTERS && !k->overflow; i++, n++) {
        unsigned x = kwg_tile(k->nodes[i]);
        if (x > k->top) break; /* lists go up by tile: no rack tile further on */
        if (x >= 1 && k->count[x]) {
            k->count[x]--;
            collect_lefts(k, i, depth + 1, (uint64_t)x << (7 * (GADDAG_MAX_ROOM - 1)) | key >> 7);
            k->count[x]++;
        }
        if (kwg_is_end(k->nodes[i])) break;
    }
}

static int by_key(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Which prefix lengths could still rank, by could_rank on the bounds of this anchor: bit l
 * of `extend` for left parts of l tiles, of `deeper` for l or more, of `blanks` for l or
 * more with a blank. Only a play moves the floor: they are asked again after extending. */
typedef struct {
    uint32_t extend, deeper, blanks;
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
}

/* LeftPart at the anchor, led by the GADDAG, for a rack without a blank: `run` holds the n
 * board tiles right after the anchor. Returns -1, having done nothing, when the prefixes
 * are too many to collect (the prefix tree walk then does it), else 0. */
static int left_part_gaddag(Search *s, int room, const uint8_t *run, int n) {
    const uint32_t *nodes = s->nodes;
    const int alphabet = s->rules->alphabet;
    const uint64_t cross = s->cross[s->row * s->cols + s->anchor_col];
    uint32_t g = s->gaddag;
    for (int j = n - 1; j >= 0 && g; j--) {
        uint32_t i = gaddag_child(nodes, g, run[j]);
        g = i ? kwg_arc(nodes[i]) : 0;
    }
    if (!g) return 0; /* no word has a letter before these tiles: no play here */
    LeftKeys k;
    k.n = k.overflow = 0;
    k.room = room;
    k.top = 63u - (unsigned)__builtin_clzll(s->rack_mask | 1);
    k.nodes = nodes;
    memcpy(k.count, s->rack, sizeof k.count);
    for (uint32_t i = g, c = 0; c <= MAX_LETTERS && !k.overflow; i++, c++) { /* the anchor's letter */
        uint32_t node = nodes[i];
        unsigned x = kwg_tile(node);
        if (x >= 1 && x <= (unsigned)alphabet && (cross >> x & 1) && k.count[x]) {
            k.count[x]--;
            collect_lefts(&k, i, 0, 0);
            k.count[x]++;
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
    MoveBuf *out = s->out;
    LeftRanks ranks = {~0u, ~0u, ~0u, out->floor_rises - 1};
    int recheck = s->prune;
    for (int i = 0; i < k.n; i++) {
        const uint64_t key = k.key[i];
        if (i > 0 && key == k.key[i - 1]) continue; /* reached through more than one letter */
        if (recheck && ranks.seen != out->floor_rises) left_ranks(s, room, &ranks);
        recheck = 0;
        uint8_t tile[GADDAG_MAX_ROOM];
        int len = 0;
        for (; len < GADDAG_MAX_ROOM; len++) {
            tile[len] = (uint8_t)(key >> (7 * (GADDAG_MAX_ROOM - 1 - len)) & 0x7F);
            if (!tile[len]) break;
        }
        if (!(ranks.extend >> len & 1)) {
            out->pruned = 1;
            continue;
        }
        uint32_t list = s->root;
        for (int j = 0; j < len && list; j++) {
            uint32_t at = child_node(s, list, tile[j]);
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
    const int anchor = s->row * s->cols + s->anchor_col;
    const uint64_t cross = s->cross[anchor];
    uint8_t run[MAX_SIDE]; /* the board tiles right after the anchor */
    int n = 0;
    for (int i = 1; s->anchor_col + i < s->cols && s->cells[anchor + i]; i++) run[n++] = s->cells[anchor + i] & TILE_MASK;
    if (s->gaddag && n > 0 && room >= GADDAG_MIN_ROOM && room <= GADDAG_MAX_ROOM && !s->rack[0] &&
        left_part_gaddag(s, room, run, n) == 0)
        return;
    uint32_t path[MAX_SIDE + 1]; /* path[d]: the prefix of d tiles being tried */
    /* the rack stays whole while the tree is walked; count: what the prefix being tried
     * leaves of it */
    uint8_t count[MAX_LETTERS + 1];
    memcpy(count, s->rack, sizeof count);
    uint32_t at = 0;
    path[0] = 0;
    LeftRanks ranks = {~0u, ~0u, ~0u, out->floor_rises - 1};
    int recheck = s->prune;
    const int has_blank = s->rack[0] > 0;
    /* what stands after the anchor: a prefix is extended only when some letter it can put
     * on the anchor goes on with the board tiles there (up to RUN_AFTER of them), or, with
     * none, ends a word or goes on with a letter for the next square (most extensions
     * that find nothing stop right there) */
    const int room_after = s->anchor_col + 1 < s->cols;
    const uint64_t cross_after = room_after ? s->cross[anchor + 1] : 0;
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
            while (has_blank && go && (t->items[go].tile & BLANK_FLAG) && !(ranks.blanks >> level & 1)) {
                out->pruned = 1; /* nor any longer left part using the blank */
                go = t->items[go].next;
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

static inline size_t anagram_slot(const Anagrams *a, uint64_t key) {
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & a->mask;
}

static int anagram_has(const Anagrams *a, uint64_t key) {
    if (!key) key = 1; /* 0 marks an empty slot */
    for (size_t i = anagram_slot(a, key);; i = (i + 1) & a->mask) {
        if (a->slots[i] == key) return 1;
        if (!a->slots[i]) return 0;
    }
}

static int anagram_add(Anagrams *a, uint64_t key) {
    if (!key) key = 1;
    if (2 * (a->count + 1) > a->mask + 1) { /* keep it at most half full */
        size_t size = 2 * (a->mask + 1);
        uint64_t *old = a->slots, old_mask = a->mask;
        if (!(a->slots = calloc(size, sizeof *a->slots))) {
            a->slots = old;
            return -1;
        }
        a->mask = size - 1;
        a->count = 0;
        for (size_t i = 0; i <= old_mask; i++)
            if (old[i]) anagram_add(a, old[i]);
        free(old);
    }
    size_t i = anagram_slot(a, key);
    while (a->slots[i] && a->slots[i] != key) i = (i + 1) & a->mask;
    if (!a->slots[i]) {
        a->slots[i] = key;
        a->count++;
    }
    return 0;
}

/* A letter's code for Anagrams keys: splitmix64 of the letter, fixed so that keys are
 * the same in every process. */
static uint64_t letter_code(unsigned letter) {
    uint64_t z = (letter + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Every word of `rack` to MAX_SIDE letters (no board holds a longer one), by its letters
 * (Anagrams): the DAWG walked to that depth. A graph that takes more than RUN_STEPS steps a
 * node below its extent to walk, or holds more than ANAGRAM_KEYS keys a node, gets no set
 * (a made-up graph can hold far more words than nodes), and the search then keeps the
 * bingo in every bound. Returns -1 when memory is out. */
static int build_anagrams(const uint32_t *nodes, uint32_t extent, int a, int rack, Anagrams *out) {
    memset(out, 0, sizeof *out);
    for (int t = 0; t <= a; t++) out->code[t] = letter_code((unsigned)t);
    Anagrams set = *out;
    if (!(set.slots = calloc(1024, sizeof *set.slots))) return -1;
    set.mask = 1023;
    size_t budget = RUN_STEPS * (size_t)extent;
    uint32_t at[MAX_SIDE]; /* at[d]: the node of the prefix's letter d */
    uint64_t key[MAX_SIDE + 1] = {0}; /* key[d]: the codes of the prefix's first d letters */
    int depth = 0;
    at[0] = kwg_arc(nodes[0]);
    if (!at[0]) goto done;
    for (;;) {
        if (budget-- == 0) goto give_up;
        uint32_t node = nodes[at[depth]];
        unsigned t = kwg_tile(node);
        int valid = t >= 1 && t <= (unsigned)a;
        key[depth + 1] = key[depth] + (valid ? set.code[t] : 0);
        if (valid && kwg_accepts(node) && depth + 1 >= rack) {
            if (set.count >= ANAGRAM_KEYS * (size_t)extent + 1024) goto give_up;
            if (anagram_add(&set, key[depth + 1]) < 0) {
                free(set.slots);
                return -1;
            }
        }
        if (valid && kwg_arc(node) && depth + 1 < MAX_SIDE) {
            at[++depth] = kwg_arc(node);
            continue;
        }
        while (kwg_is_end(nodes[at[depth]])) {
            if (depth-- == 0) goto done;
        }
        at[depth]++;
    }
give_up:
    free(set.slots);
    return 0;
done:
    *out = set;
    return 0;
}

/* Which runs of 2, 3 and 4 letters occur in some word of the lexicon, as bits: a run of n
 * letters (1..A) is the base-A number of its letters minus one, at bit RUN_AT(A, n) + that
 * number. Built once per Generator, (A^2 + A^3 + A^4) bits: 57 KiB for 26 letters, 2 MiB at
 * most (63). A tile put beside tiles of the row makes runs with them that its word holds:
 * a letter whose runs occur in no word cannot go there. */
#define RUN_AT(a, n) ((n) == 2 ? 0 : (n) == 3 ? (size_t)(a) * (a) : (size_t)(a) * (a) * ((a) + 1))

static inline size_t run_index(int a, const unsigned *tile, int n) {
    size_t at = 0;
    for (int i = 0; i < n; i++) at = at * (size_t)a + tile[i] - 1;
    return at + RUN_AT(a, n);
}

static inline void set_run(uint8_t *runs, int a, const unsigned *tile, int n) {
    size_t at = run_index(a, tile, n);
    runs[at >> 3] |= (uint8_t)(1u << (at & 7));
}

/* Every run of 2..4 letters starting at a node of the DAWG (below `extent`): a node's tile
 * and the tiles of up to three lists below it. Nodes no word reaches only add runs, which
 * only lets more letters through. A lexicon's DAWG takes about 4 steps a node (a step per
 * list entry read); a graph built to take more than RUN_STEPS gets no table, and the search
 * no filter. Returns -1 when memory is out, else 0 with *out the table or NULL. */
static int build_runs(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out) {
    size_t bits = RUN_AT(a, 4) + (size_t)a * a * a * a, budget = RUN_STEPS * (size_t)extent;
    uint8_t *runs = calloc((bits + 7) / 8, 1);
    *out = NULL;
    if (!runs) return -1;
    unsigned t[4];
    for (uint32_t i = 2; i < extent; i++) {
        if ((t[0] = kwg_tile(nodes[i])) < 1 || t[0] > (unsigned)a) continue;
        for (uint32_t j = kwg_arc(nodes[i]); j; j = kwg_is_end(nodes[j]) ? 0 : j + 1) {
            if (budget-- == 0) goto give_up;
            if ((t[1] = kwg_tile(nodes[j])) < 1 || t[1] > (unsigned)a) continue;
            set_run(runs, a, t, 2);
            for (uint32_t k = kwg_arc(nodes[j]); k; k = kwg_is_end(nodes[k]) ? 0 : k + 1) {
                if (budget-- == 0) goto give_up;
                if ((t[2] = kwg_tile(nodes[k])) < 1 || t[2] > (unsigned)a) continue;
                set_run(runs, a, t, 3);
                for (uint32_t m = kwg_arc(nodes[k]); m; m = kwg_is_end(nodes[m]) ? 0 : m + 1) {
                    if (budget-- == 0) goto give_up;
                    if ((t[3] = kwg_tile(nodes[m])) < 1 || t[3] > (unsigned)a) continue;
                    set_run(runs, a, t, 4);
                }
            }
        }
    }
    *out = runs;
    return 0;
give_up:
    free(runs);
    return 0;
}

/* The most letters any word of up to MAX_SIDE letters has before each run of 2..4 letters
 * (indexed as in build_runs; 0 where no such word holds it): a play's main word holds the
 * runs of the board tiles in it, so no more of its letters than that can stand before
 * them. Read off every path of the DAWG from the root, one step per prefix; longer words
 * fit on no board. Only for alphabets of up to REACH_LETTERS letters (English 464 KiB);
 * a graph with more than RUN_STEPS prefixes a node, or out of room, gets no table (NULL),
 * and the search no such cap. Returns -1 when memory is out. */
static int build_reach(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out) {
    *out = NULL;
    if (a > REACH_LETTERS) return 0;
    size_t size = RUN_AT(a, 4) + (size_t)a * a * a * a, budget = RUN_STEPS * (size_t)extent;
    uint8_t *before = calloc(size, 1);
    if (!before) return -1;
    uint32_t at[MAX_SIDE]; /* at[d]: the node of the prefix's letter d */
    unsigned tile[MAX_SIDE];
    int depth = 0;
    at[0] = kwg_arc(nodes[0]);
    if (!at[0]) goto done;
    for (;;) {
        if (budget-- == 0) {
            free(before);
            return 0;
        }
        uint32_t node = nodes[at[depth]];
        tile[depth] = kwg_tile(node);
        int valid = tile[depth] >= 1 && tile[depth] <= (unsigned)a;
        for (int n = 2; valid && n <= 4 && n <= depth + 1; n++) { /* the letters above are valid */
            size_t g = run_index(a, tile + depth + 1 - n, n);
            if (before[g] < depth + 1 - n) before[g] = (uint8_t)(depth + 1 - n);
        }
        if (valid && kwg_arc(node) && depth + 1 < MAX_SIDE) {
            at[++depth] = kwg_arc(node); /* down to the first letter after this prefix */
            continue;
        }
        /* on to the next letter at this depth, or back up to one that has a next */
        while (kwg_is_end(nodes[at[depth]])) {
            if (depth-- == 0) goto done;
        }
        at[depth]++;
    }
done:
    *out = before;
    return 0;
}

/* The most letters a word can have before the run of board tiles starting at `idx` (a
 * square of row `row`), by its first 2..4 letters; MAX_SIDE when that is not known (no
 * reach table, or a lone tile). */
static int letters_before(const Search *s, int row, int idx) {
    const int end = (row + 1) * s->cols;
    unsigned run[4];
    int n = 0;
    while (s->before && n < 4 && idx + n < end && s->cells[idx + n]) run[n] = s->cells[idx + n] & TILE_MASK, n++;
    return n < 2 ? MAX_SIDE : s->before[run_index(s->rules->alphabet, run, n)];
}

/* Of `letters`, those that may go on the empty square (row, col) beside tiles of the row:
 * every run of up to 4 letters through it, with up to 3 of the tiles on each side, must
 * occur in some word. */
static uint64_t fits_runs(const Search *s, int row, int col, uint64_t letters) {
    const int a = s->rules->alphabet, base = row * s->cols;
    unsigned line[7];
    int left = 0, right = 0;
    while (left < 3 && col - left - 1 >= 0 && s->cells[base + col - left - 1]) left++;
    while (right < 3 && col + right + 1 < s->cols && s->cells[base + col + right + 1]) right++;
    for (int i = 0; i < left; i++) line[i] = s->cells[base + col - left + i] & TILE_MASK;
    for (int i = 0; i < right; i++) line[left + 1 + i] = s->cells[base + col + 1 + i] & TILE_MASK;
    const int len = left + 1 + right, n = len < 4 ? len : 4;
    /* the runs of n letters through the square: starting at most n - 1 before it */
    const int first = left - (n - 1) > 0 ? left - (n - 1) : 0;
    const int last = left < len - n ? left : len - n;
    /* each run's index with the first letter on the square, and what a later letter adds */
    size_t index[4], step[4];
    int runs = 0;
    line[left] = 1;
    for (int at = first; at <= last; at++, runs++) {
        index[runs] = run_index(a, line + at, n);
        step[runs] = 1;
        for (int i = at + n - 1; i > left; i--) step[runs] *= (size_t)a;
    }
    uint64_t ok = 0;
    for (uint64_t todo = letters; todo; todo &= todo - 1) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        int fits = 1;
        for (int i = 0; i < runs && fits; i++) {
            size_t at = index[i] + (x - 1) * step[i];
            fits = s->runs[at >> 3] >> (at & 7) & 1;
        }
        if (fits) ok |= (uint64_t)1 << x;
    }
    return ok;
}

/* A bit per square of a row of `cols` cells: set where a tile is. Eight squares at a
 * time where bytes are little-endian: each nonzero byte's high bit, gathered by one
 * multiplication. */
static inline uint32_t row_bits(const uint8_t *cells, int cols) {
    uint32_t bits = 0;
    int col = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; col + 8 <= cols; col += 8) {
        uint64_t x;
        memcpy(&x, cells + col, 8);
        x = ((((x & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | x) >> 7) & 0x0101010101010101ull;
        bits |= (uint32_t)((x * 0x0102040810204080ull) >> 56) << col;
    }
#endif
    for (; col < cols; col++) bits |= (uint32_t)(cells[col] != 0) << col;
    return bits;
}

/* The perpendicular word through the empty square (row, col) of the oriented board, with
 * the tiles above and below it: *score gets their points and the result the letters of
 * `letters` that make a word there (every letter when there is no such word, the square
 * then keeping score -1). */
HOT_INLINE uint64_t vertical_cross(const Search *s, const Rules *r, int row, int col, uint64_t letters, int32_t *score) {
    int top = row, bottom = row;
    while (top > 0 && s->cells[(top - 1) * s->cols + col]) top--;
    while (bottom + 1 < s->rows && s->cells[(bottom + 1) * s->cols + col]) bottom++;
    const uint64_t all = every_letter(r);
    if (top == row && bottom == row) {
        *score = -1;
        return all;
    }
    int32_t points = 0;
    uint32_t list = s->root;
    for (int k = top; k < row && list; k++) {
        uint8_t cell = s->cells[k * s->cols + col];
        uint32_t i = child_node(s, list, cell & TILE_MASK);
        list = i ? kwg_arc(s->nodes[i]) : 0;
        if (!i) break;
    }
    for (int k = top; k <= bottom; k++)
        if (k != row) points += tile_points(r, s->cells[k * s->cols + col]);
    *score = points;
    if (row == bottom) return s->masks[list].accepts & all;
    uint64_t mask = 0, children = list_children(s, list), todo = children & letters;
    while (todo) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        todo &= todo - 1;
        uint32_t next = kwg_arc(s->nodes[list + __builtin_popcountll(children & (((uint64_t)1 << x) - 1))]);
        int acc = 0;
        for (int k = row + 1; k <= bottom && next; k++) {
            uint32_t j = child_node(s, next, s->cells[k * s->cols + col] & TILE_MASK);
            acc = j && k == bottom ? kwg_accepts(s->nodes[j]) : 0;
            next = j ? kwg_arc(s->nodes[j]) : 0;
            if (!j) break;
        }
        if (acc) mask |= (uint64_t)1 << x;
    }
    return mask & all;
}

/* The cross-set of the empty square (row, col) from scratch: the perpendicular word's
 * letters, then, beside tiles of the row, only letters whose runs with them occur in a
 * word (of `letters`: the others are kept as they are, the search never reads them). */
static void square_cross(Search *s, const Rules *r, int row, int col, uint64_t letters) {
    const int idx = row * s->cols + col;
    uint64_t cross = vertical_cross(s, r, row, col, letters, &s->cross_score[idx]);
    const int beside = (col > 0 && s->cells[idx - 1]) || (col + 1 < s->cols && s->cells[idx + 1]);
    if (beside && s->runs) {
        uint64_t some = cross & letters;
        cross = fits_runs(s, row, col, some) | (cross & ~some);
    }
    s->cross[idx] = cross;
}

/* Anchors of row `row` (empty squares beside a tile), from the occupancy of the rows. */
HOT_INLINE void row_anchors(Search *s, int row, const uint32_t *occupied) {
    const uint32_t full = (uint32_t)((1u << s->cols) - 1), here = occupied[row];
    const uint32_t vertical = (row > 0 ? occupied[row - 1] : 0) | (row + 1 < s->rows ? occupied[row + 1] : 0);
    const uint32_t anchors = ~here & full & (vertical | ((here << 1) & full) | (here >> 1));
    s->anchors[row] = anchors;
    memset(s->anchor + row * s->cols, 0, (size_t)s->cols);
    for (uint32_t a = anchors; a; a &= a - 1) s->anchor[row * s->cols + __builtin_ctz(a)] = 1;
}

/* Lay the board out for one pass (transposed for down plays), then compute anchors,
 * cross-sets and cross-scores from the perpendicular (vertical) words: of `letters` (the
 * rack's, or every letter for a board that racks will come and go on). Squares are found
 * from per-row occupancy bits: only squares under or over a tile need a cross-set. */
static void prepare_pass(Search *s, const Rules *r, const uint8_t *board, int dir, uint64_t letters) {
    s->dir = dir;
    s->rows = dir ? r->cols : r->rows;
    s->cols = dir ? r->rows : r->cols;
    s->lm = r->lm[dir];
    s->wm = r->wm[dir];
    const int cells = s->rows * s->cols;
    if (dir) {
        for (int row = 0; row < s->rows; row++)
            for (int col = 0; col < s->cols; col++) s->cells[row * s->cols + col] = board[col * r->cols + row];
    } else {
        memcpy(s->cells, board, (size_t)cells);
    }
    uint64_t all = every_letter(r);
    uint32_t occupied[MAX_SIDE], full = (uint32_t)((1u << s->cols) - 1);
    int any_tile = 0;
    for (int row = 0; row < s->rows; row++) {
        occupied[row] = row_bits(s->cells + row * s->cols, s->cols);
        any_tile |= occupied[row] != 0;
    }
    for (int idx = 0; idx < cells; idx++) {
        s->cross[idx] = all;
        s->cross_score[idx] = -1;
    }
    for (int row = 0; row < s->rows; row++) {
        row_anchors(s, row, occupied);
        uint32_t here = occupied[row];
        uint32_t vertical = (row > 0 ? occupied[row - 1] : 0) | (row + 1 < s->rows ? occupied[row + 1] : 0);
        for (uint32_t x = ~here & full & vertical; x; x &= x - 1) {
            int col = __builtin_ctz(x), idx = row * s->cols + col;
            s->cross[idx] = vertical_cross(s, r, row, col, letters, &s->cross_score[idx]);
        }
    }
    /* squares beside tiles of the row: only letters whose runs with them occur in a word */
    for (int row = 0; row < s->rows && s->runs; row++) {
        uint32_t here = occupied[row];
        for (uint32_t x = ~here & full & ((here << 1) | (here >> 1)); x; x &= x - 1) {
            int col = __builtin_ctz(x), idx = row * s->cols + col;
            uint64_t some = s->cross[idx] & letters;
            if (some) s->cross[idx] = fits_runs(s, row, col, some) | (s->cross[idx] & ~some);
        }
    }
    s->empty_board = !any_tile;
    if (!any_tile) {
        int cr = dir ? r->centre_col : r->centre_row, cc = dir ? r->centre_row : r->centre_col;
        s->anchor[cr * s->cols + cc] = 1;
        s->anchors[cr] = 1u << cc;
    }
}

/* A pass prepared for every letter (prepare_pass) after tiles are laid on the board:
 * cells[i] on original square square[i]. Only what the tiles touch is worked out again:
 * the cross-sets at the two ends of each new tile's perpendicular run and of its run in
 * the row, and the anchors of the rows around it. The same result as preparing the new
 * board, without the rest of it (playouts lay a move, then search the board again). */
static void place_tiles(Search *s, const Rules *r, const uint16_t *square, const uint8_t *cell, int count) {
    const uint64_t all = every_letter(r);
    if (count == 0) return;
    int at[MAX_RACK][2];
    for (int i = 0; i < count; i++) {
        int row = square[i] / r->cols, col = square[i] % r->cols;
        if (s->dir) {
            int t = row;
            row = col;
            col = t;
        }
        at[i][0] = row;
        at[i][1] = col;
        int idx = row * s->cols + col;
        s->cells[idx] = cell[i];
        s->cross[idx] = all;
        s->cross_score[idx] = -1;
    }
    /* the squares to work out again, a bit per column of each row, and the rows whose
     * anchors change: a move's tiles share their runs' ends and their rows */
    uint32_t redo[MAX_SIDE] = {0}, rows = 0;
    for (int i = 0; i < count; i++) {
        const int row = at[i][0], col = at[i][1];
        rows |= (7u << row) >> 1;
        int top = row, bottom = row, left = col, right = col;
        while (top >= 0 && s->cells[top * s->cols + col]) top--;
        while (bottom < s->rows && s->cells[bottom * s->cols + col]) bottom++;
        while (left >= 0 && s->cells[row * s->cols + left]) left--;
        while (right < s->cols && s->cells[row * s->cols + right]) right++;
        if (top >= 0) redo[top] |= 1u << col;
        if (bottom < s->rows) redo[bottom] |= 1u << col;
        if (left >= 0) redo[row] |= 1u << left;
        if (right < s->cols) redo[row] |= 1u << right;
    }
    uint32_t occupied[MAX_SIDE];
    for (int row = 0; row < s->rows; row++) occupied[row] = row_bits(s->cells + row * s->cols, s->cols);
    if (s->empty_board) { /* the centre anchor goes: every row's anchors again */
        rows = ~0u;
        s->empty_board = 0;
    }
    for (int row = 0; row < s->rows; row++) {
        if (rows >> row & 1) row_anchors(s, row, occupied);
        for (uint32_t x = redo[row]; x; x &= x - 1) square_cross(s, r, row, __builtin_ctz(x), all);
    }
}

/* Empty squares left of an anchor that a left part from the rack may cover: up to the
 * nearest tile or anchor, and leaving at least one tile for the anchor. */
static int left_room(const Search *s, int row, int col) {
    int room = 0;
    for (int c = col - 1; c >= 0; c--) {
        int j = row * s->cols + c;
        if (s->cells[j] || s->anchor[j]) break;
        room++;
    }
    if (room > s->rack_left - 1) room = s->rack_left - 1;
    /* tiles just right of the anchor: no word has more letters before their run than
     * letters_before says, the anchor's tile among them */
    if (col + 1 < s->cols) {
        int most = letters_before(s, row, row * s->cols + col + 1) - 1;
        if (room > most) room = most < 0 ? 0 : most;
    }
    return room;
}

/* What rack_spells needs of the rack: its key, and whether it can be asked at all. */
static void bingos_init(Bingos *b, const Anagrams *set, const uint8_t *rack, const Rules *r) {
    int tiles = 0;
    memset(b, 0, sizeof *b);
    for (int t = 0; t <= r->alphabet; t++) {
        tiles += rack[t];
        if (t && set) b->key += rack[t] * set->code[t];
    }
    b->checked = set != NULL && tiles == r->rack_size && rack[0] <= 2;
}

/* Whether the whole rack, with board letters whose codes sum to `with`, spells some word:
 * each blank tried as every letter. Yes when the rack is not checked (Bingos.checked),
 * and with two blanks and board letters (such a rack nearly always does; 351 pairs to
 * try). */
static int rack_spells(const Search *s, uint64_t with, int board_tiles) {
    const Bingos *b = s->bingos;
    const Anagrams *set = s->anagrams;
    const int alphabet = s->rules->alphabet, blanks = s->rack[0];
    if (!b->checked || (blanks == 2 && board_tiles)) return 1;
    const uint64_t key = b->key + with;
    if (blanks == 0) return anagram_has(set, key);
    for (int x = 1; x <= alphabet; x++) {
        if (blanks == 1) {
            if (anagram_has(set, key + set->code[x])) return 1;
            continue;
        }
        for (int y = x; y <= alphabet; y++)
            if (anagram_has(set, key + set->code[x] + set->code[y])) return 1;
    }
    return 0;
}

/* rack_spells, remembered for the search. */
static int spells_bingo(Search *s, uint64_t with, int board_tiles) {
    Bingos *b = s->bingos;
    if (!board_tiles) return b->alone;
    if (!b->checked) return 1;
    int i = (int)((with * 0x9E3779B97F4A7C15ull) >> (64 - BINGO_ANSWER_BITS));
    if (!b->asked[i].known || b->asked[i].with != with) {
        b->asked[i].with = with;
        b->asked[i].known = 1;
        b->asked[i].spells = (int8_t)rack_spells(s, with, board_tiles);
    }
    return b->asked[i].spells;
}

/* The larger of two bounds: never NaN (leave tables with one are refused), so a plain
 * comparison, which the compiler inlines where fmaxf would be a libm call. */
static inline float max_bound(float a, float b) { return a > b ? a : b; }

/* A square a play may fill, as the shadow bound sees it. */
typedef struct {
    int32_t lm, wm;
    int32_t cross;     /* cross_score * wm: the cross-word's board tiles, when there is one */
    int32_t has_cross; /* 1 when a cross-word forms there */
} Square;

static inline Square square_at(const Search *s, int idx) {
    int has = s->cross_score[idx] >= 0;
    return (Square){s->lm[idx], s->wm[idx], has ? s->cross_score[idx] * s->wm[idx] : 0, has};
}

/* Squares a play fills, grown one at a time (the longer spans of a shadow bound extend the
 * shorter): each square weighs its tile by letter premium times the word premium, plus
 * letter times word premium again when it makes a cross-word. A square with a word premium
 * changes every weight; any other only adds its own. */
typedef struct {
    const Square *sq; /* sq[0 .. k-1] */
    int k;
    int32_t mult, cross;
    int32_t weight[MAX_RACK]; /* heaviest first */
} Span;

static inline void span_weigh(Span *p, int i) {
    const Square *q = &p->sq[i];
    int32_t w = q->lm * (p->mult + q->has_cross * q->wm);
    int j = i;
    for (; j > 0 && p->weight[j - 1] < w; j--) p->weight[j] = p->weight[j - 1];
    p->weight[j] = w;
}

/* Adds square sq[k]. */
static inline void span_grow(Span *p) {
    const Square *q = &p->sq[p->k++];
    p->cross += q->cross;
    if (q->wm == 1) {
        span_weigh(p, p->k - 1);
    } else {
        p->mult *= q->wm;
        for (int i = 0; i < p->k; i++) span_weigh(p, i);
    }
}

/* Fills the span with its first k squares at once (one weighing, whatever the premiums). */
static inline void span_fill(Span *p, int k) {
    for (int i = 0; i < k; i++) {
        p->mult *= p->sq[i].wm;
        p->cross += p->sq[i].cross;
    }
    for (int i = 0; i < k; i++) span_weigh(p, i);
    p->k = k;
}

/* The most a play filling exactly the span's k squares could score (or be worth), with
 * `board_sum` points of board tiles in its main word: the rack's highest tiles on the
 * heaviest squares (rearrangement inequality) bound every assignment, whatever the lexicon
 * allows. *with_blank: the same bound for the plays among them that put down a blank. */
static float span_bound(const Search *s, const Span *p, int32_t board_sum, int32_t bingo, float *with_blank) {
    const int k = p->k;
    int32_t score = board_sum * p->mult + p->cross;
    for (int i = 0; i < k; i++) score += p->weight[i] * s->tile_desc[i];
    if (k == s->rules->rack_size) score += bingo;
    /* with a blank among the tiles: the k - 1 best others, the blank on the lightest square */
    if (with_blank) *with_blank = (float)(score - p->weight[k - 1] * s->tile_desc[k - 1]) + s->blank_leave[k];
    return (float)score + s->best_leave[k]; /* the best leave of k tiles played */
}

/* Shadow bound (MAGPIE's "shadow playing"): the span bound above, taken over every span of
 * squares a play at this anchor could cover. Every term of it grows with the span, so for
 * each length l of the left part only the longest span counts: l squares left of the
 * anchor, then rightwards until the rack is spent or a square bars every rack tile (with
 * the board tiles just after the last one). b->any[l] bounds the plays whose left part has
 * l tiles from the rack (index 0 only when the left part is on the board), b->blank[l] those
 * of them with a blank; returns the largest, -INFINITY when no play fits. */
static float anchor_bound(Search *s, int row, int anchor, AnchorBounds *b) {
    const int base = row * s->cols;
    const uint64_t can = playable(s);
    int32_t on_left = 0; /* points of a left part already on the board */
    int left_len = 0, room = 0;
    const Anagrams *set = s->anagrams;
    uint64_t left_codes = 0; /* the letters of a left part already on the board */
    if (anchor > 0 && s->cells[base + anchor - 1]) {
        for (int c = anchor - 1; c >= 0 && s->cells[base + c]; c--, left_len++) {
            on_left += tile_points(s->rules, s->cells[base + c]);
            if (set) left_codes += set->code[s->cells[base + c] & TILE_MASK];
        }
    } else {
        room = left_room(s, row, anchor);
    }
    /* line[MAX_RACK - l .. MAX_RACK + r - 1]: l left squares, then r right ones */
    Square line[2 * MAX_RACK];
    for (int l = 1; l <= room; l++) line[MAX_RACK - l] = square_at(s, base + anchor - l);
    /* board points and tiles from the anchor up to the (j+1)-th empty square on the right,
     * and the most rack tiles left of the anchor that the board tiles so far allow: no word
     * has more letters before a run than Search.before says */
    int32_t board_upto[MAX_RACK + 1];
    int tiles_upto[MAX_RACK + 1], left_upto[MAX_RACK + 1];
    uint64_t codes_upto[MAX_RACK + 1]; /* and the codes of those tiles' letters (Anagrams) */
    int right = 0, tiles = 0, most_left = MAX_SIDE;
    int32_t points = 0;
    uint64_t codes = left_codes;
    for (int c = anchor; c < s->cols; c++) {
        int idx = base + c;
        if (s->cells[idx]) {
            points += tile_points(s->rules, s->cells[idx]);
            tiles++;
            if (set) codes += set->code[s->cells[idx] & TILE_MASK];
            if (s->before && !s->cells[idx - 1]) { /* a run of tiles starts here */
                int most = letters_before(s, row, idx) - left_len - (c - anchor);
                if (most < most_left) most_left = most;
            }
            continue;
        }
        board_upto[right] = points;
        tiles_upto[right] = tiles;
        left_upto[right] = most_left;
        codes_upto[right] = codes;
        if (right == s->rack_left || !(s->cross[idx] & can)) break;
        line[MAX_RACK + right++] = square_at(s, idx);
        board_upto[right] = points; /* in case the row ends next */
        tiles_upto[right] = tiles;
        left_upto[right] = most_left;
        codes_upto[right] = codes;
    }
    board_upto[right] = points;
    tiles_upto[right] = tiles;
    left_upto[right] = most_left;
    codes_upto[right] = codes;
    float top = -INFINITY;
    for (int l = 0; l <= room; l++) {
        int most = s->rack_left - l < right ? s->rack_left - l : right;
        b->any[l] = b->blank[l] = -INFINITY;
        /* spans of l left squares and r right ones. By score the longest that can hold a
         * play bounds the shorter ones; by equity each length has its own best leave (and
         * only the rack's length its bingo): every r, shortest first, each growing the last */
        /* a span taking the whole rack holds a play only when some word has exactly the
         * rack's letters and the span's board letters (spells_bingo): else it is skipped */
#define HOLDS_NO_PLAY(r)                                                                                   \
    (left_len + l + (r) + tiles_upto[r] < 2 || l > left_upto[r] ||                                        \
     (l + (r) == s->rules->rack_size && !spells_bingo(s, codes_upto[r], left_len + tiles_upto[r])))
        int r = s->leaves ? 1 : most;
        while (!s->leaves && r >= 1 && HOLDS_NO_PLAY(r)) r--;
        if (r < 1) continue;
        Span span; /* weights written as the squares come: not zeroed */
        span.sq = line + MAX_RACK - l;
        span.mult = 1;
        span.cross = 0;
        span_fill(&span, s->leaves ? l : l + r);
        for (; r >= 1 && r <= most; r++) {
            if (s->leaves) span_grow(&span);
            if (s->leaves && HOLDS_NO_PLAY(r)) continue;
#undef HOLDS_NO_PLAY
            float blank = -INFINITY;
            int32_t bingo = l + r == s->rules->rack_size ? s->rules->bingo : 0;
            float any = span_bound(s, &span, on_left + board_upto[r], bingo, s->rack[0] ? &blank : NULL);
            b->any[l] = max_bound(b->any[l], any);
            b->blank[l] = max_bound(b->blank[l], blank);
            if (!s->leaves) break;
        }
        if (b->any[l] > top) top = b->any[l];
    }
    return top;
}

/* Every play whose leftmost anchor is (row, col): the left part read from the board, or
 * every left part from the rack, each extended right [AJ88]. bounds: the anchor's shadow
 * bounds by left-part length, when searching best-first (else NULL). */
static void search_anchor(Search *s, int row, int col, const AnchorBounds *bounds) {
    int idx = row * s->cols + col;
    s->row = row;
    s->anchor_col = col;
    s->order_base = (uint64_t)(s->dir * MAX_CELLS + idx) << ORDER_ANCHOR_SHIFT;
    memset(s->placed, 0, sizeof s->placed);
    s->left_len = 0;
    const int blanks = s->prune && s->rack[0];
    if (blanks) s->blank_bound[0] = bounds->blank[0];
    if (col > 0 && s->cells[idx - 1]) {
        int c = col - 1;
        while (c > 0 && s->cells[idx - (col - c) - 1]) c--;
        uint32_t list = s->root;
        Tally t = {0, 1, 0, 0};
        for (int k = c; k < col && list; k++) {
            uint8_t cell = s->cells[row * s->cols + k];
            uint32_t i = child_node(s, list, cell & TILE_MASK);
            list = i ? kwg_arc(s->nodes[i]) : 0;
            t.main += tile_points(s->rules, cell);
        }
        if (!list) return;
        s->start_col = c;
        extend_right(s, list, col, t);
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

static inline int can_start(const Search *s, int idx) {
    return s->anchor[idx] && (s->cross[idx] & playable(s));
}

/* Every play of one pass, in generation order. */
static void run_pass(Search *s) {
    for (int row = 0; row < s->rows && !s->failed; row++)
        for (uint32_t a = s->anchors[row]; a && !s->failed; a &= a - 1) {
            int col = __builtin_ctz(a);
            if (can_start(s, row * s->cols + col)) search_anchor(s, row, col, NULL);
        }
}

/* The rack's distinct tiles (blank 0 first): the digits of its sub-multisets. */
static int rack_distinct(const Rules *r, const uint8_t *rack, uint8_t tile[MAX_RACK]) {
    int distinct = 0;
    for (int t = 0; t <= r->alphabet && distinct < MAX_RACK; t++)
        if (rack[t]) tile[distinct++] = (uint8_t)t;
    return distinct;
}

/* The sub-multiset after `used` (how many of each tile[d]), counting like an odometer;
 * 0 when it wraps back to the empty one: every sub-multiset has been seen. */
static inline int next_subrack(uint8_t *used, const uint8_t *tile, int distinct, const uint8_t *rack) {
    int d = 0;
    while (d < distinct && used[d] == rack[tile[d]]) used[d++] = 0;
    if (d == distinct) return 0;
    used[d]++;
    return 1;
}

/* A sub-multiset's leave-table key (LeaveTable: the sum of key steps of the tiles used)
 * and its size. */
static inline size_t subrack_key(const uint8_t *used, const uint8_t *tile, int distinct,
                                 const uint16_t *steps, int *size) {
    size_t key = 0;
    int k = 0;
    for (int d = 0; d < distinct; d++) {
        key += (size_t)used[d] * steps[tile[d]];
        k += used[d];
    }
    *size = k;
    return key;
}

/* What the bounds need from the rack: its tile values, highest first (blanks 0), and, when
 * ranking by equity, the best leave value left after playing k tiles, over every part of
 * the rack of size k, keyed exactly as emit() keys it; blank_leave the same over the
 * parts with a blank (by score 0, and -inf for every k on a rack without one). */
static void rack_bounds(const uint8_t *rack, const Rules *r, const LeaveTable *leaves,
                        int32_t tile_desc[MAX_RACK], float best_leave[MAX_RACK + 1],
                        float blank_leave[MAX_RACK + 1]) {
    int n = 0;
    for (int t = 0; t <= r->alphabet; t++)
        for (int c = 0; c < rack[t] && n < MAX_RACK; c++) {
            int32_t v = r->values[t];
            int j = n++;
            for (; j > 0 && tile_desc[j - 1] < v; j--) tile_desc[j] = tile_desc[j - 1];
            tile_desc[j] = v;
        }
    for (int k = 0; k <= MAX_RACK; k++) blank_leave[k] = rack[0] && k ? 0.0f : -INFINITY;
    if (!leaves) return;
    if (leaves->best) {
        memcpy(best_leave, leaves->best, (MAX_RACK + 1) * sizeof *best_leave);
        memcpy(blank_leave, leaves->best_blank, (MAX_RACK + 1) * sizeof *blank_leave);
        return;
    }
    for (int k = 0; k <= MAX_RACK; k++) best_leave[k] = blank_leave[k] = -INFINITY;
    uint8_t tile[MAX_RACK], used[MAX_RACK] = {0};
    int distinct = rack_distinct(r, rack, tile);
    do { /* every sub-multiset of the rack, the empty one first */
        int k;
        size_t key = subrack_key(used, tile, distinct, leaves->key_step, &k);
        float v = key < leaves->keys ? leaves->value[key] : 0.0f;
        if (k <= MAX_RACK && v > best_leave[k]) best_leave[k] = v;
        if (k <= MAX_RACK && tile[0] == 0 && used[0] && v > blank_leave[k]) blank_leave[k] = v;
    } while (next_subrack(used, tile, distinct, rack));
}

typedef struct {
    uint64_t rank;    /* anchor_rank: the order of the search, largest first */
    float bound;
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

/* Top-N: the anchors of both passes, highest shadow bound first, until none can beat the
 * N-th best play found; within an anchor, left-part lengths that cannot are skipped. */
static int search_best_first(Search *passes, int mode, MoveBuf *buf, int by_equity) {
    AnchorRef refs[2 * MAX_CELLS];
    /* each anchor's bounds (136 bytes): on the stack for the usual few dozen anchors, on the
     * heap (room for every square of both passes) past LOCAL_ANCHORS */
    AnchorBounds local[LOCAL_ANCHORS], *bounds = local;
    size_t n = 0;
    for (int dir = 0; dir < 2; dir++) {
        if (!(mode & (dir ? MODE_DOWN : MODE_ACROSS))) continue;
        Search *s = &passes[dir];
        for (int row = 0; row < s->rows; row++)
            for (uint32_t a = s->anchors[row]; a; a &= a - 1) {
                int col = __builtin_ctz(a), idx = row * s->cols + col;
                if (!can_start(s, idx)) continue;
                if (n == LOCAL_ANCHORS && bounds == local) {
                    bounds = malloc(2 * MAX_CELLS * sizeof *bounds);
                    if (!bounds) return FAIL_MEMORY;
                    memcpy(bounds, local, sizeof local);
                }
                float bound = anchor_bound(s, row, col, &bounds[n]);
                if (bound > -INFINITY) {
                    uint32_t ordinal = (uint32_t)(dir * MAX_CELLS + idx);
                    refs[n] = (AnchorRef){anchor_rank(bound, ordinal), bound, ordinal, (uint32_t)n};
                    n++;
                }
            }
    }
    /* a heap, not a sort: the search usually stops after a few of the anchors */
    for (size_t i = n / 2; i-- > 0;) sift_down(refs, n, i);
    int failed = 0;
    for (size_t left = n; left > 0 && !failed; left--) {
        const AnchorRef next = refs[0];
        uint64_t first = (uint64_t)next.ordinal << ORDER_ANCHOR_SHIFT;
        if (passes[0].prune && !could_rank(buf, by_equity, next.bound, first)) {
            buf->pruned = 1; /* nor can any later one */
            break;
        }
        refs[0] = refs[left - 1];
        sift_down(refs, left - 1, 0);
        Search *s = &passes[next.ordinal / MAX_CELLS];
        int idx = (int)(next.ordinal % MAX_CELLS);
        search_anchor(s, idx / s->cols, idx % s->cols, &bounds[next.slot]);
        failed = s->failed;
    }
    if (bounds != local) free(bounds);
    return failed;
}

/* Rank by score, descending; ties keep generation order (row, anchor, lexicon order),
 * which is deterministic. With limit >= 0 only the top `limit` are kept: a histogram
 * finds the cut-off score, so the rest are never sorted. O(n + max score). */
static MoveRecord *rank_moves(const MoveBuf *buf, long limit, size_t *out_count) {
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
static MoveRecord *rank_ordered(const MoveBuf *buf, long limit, int by_equity, size_t *out_count,
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


/* ------------------------------------------------------- Generator object */
typedef struct {
    PyObject_HEAD
    Py_buffer kwg; /* held while the object lives: the lexicon's mmap cannot close */
    int has_kwg;
    const uint32_t *nodes;
    uint32_t *owned_nodes;
    uint32_t n_nodes, extent;
    ListMasks *masks; /* extent entries; built once per Generator */
    uint8_t *runs;    /* the letter runs words hold (build_runs) */
    uint8_t *reach;   /* how far words reach beyond a run (build_reach), or NULL */
    Anagrams anagrams; /* bingo words by their letters (build_anagrams); no slots: none */
    uint32_t gaddag;   /* the GADDAG's root list when it covers the DAWG (gaddag_covers), else 0 */
    Rules rules;
} Generator;

/* What one search is asked for: Generator.generate's arguments, and the playouts'. */
typedef struct {
    int mode;       /* MODE_ACROSS | MODE_DOWN */
    long limit;     /* -1: every play; else the top N, best-first */
    int count_all;  /* with a limit, still search (and count) every play */
    const LeaveTable *leaves; /* NULL: rank by score */
    int has_deadline;
    struct timespec deadline; /* CLOCK_MONOTONIC */
    int prepared;   /* the passes already hold the board (prepare_pass for every letter) */
} SearchArgs;

/* An empty buffer for a search with this limit: best-first buffers (limit >= 0) start
 * with room for the plays they keep (up to INITIAL_RECORDS, then they grow) and carry order
 * keys. -1 when memory is out. */
static int movebuf_init(MoveBuf *buf, long limit, int by_equity) {
    memset(buf, 0, sizeof *buf);
    buf->keep = limit;
    if (limit < 0) return 0;
    buf->capacity = limit < 1 ? 1 : limit < INITIAL_RECORDS ? (size_t)limit : INITIAL_RECORDS;
    buf->items = malloc(buf->capacity * sizeof *buf->items);
    buf->order = malloc(buf->capacity * sizeof *buf->order);
    buf->equity = by_equity ? malloc(buf->capacity * sizeof *buf->equity) : NULL;
    return buf->items && buf->order && (!by_equity || buf->equity) ? 0 : -1;
}

static void movebuf_free(MoveBuf *buf) {
    free(buf->items);
    free(buf->equity);
    free(buf->order);
    memset(buf, 0, sizeof *buf);
}

/* The lexicon's tables, for a search or a board prepared for one. */
static void attach(Search *p, const Generator *g) {
    p->nodes = g->nodes;
    p->masks = g->masks;
    p->runs = g->runs;
    p->before = g->reach;
    p->root = kwg_arc(g->nodes[0]);
    p->gaddag = g->gaddag;
    p->rules = &g->rules;
}

/* Every play for `rack` (counts, `rack_total` tiles) on `board` into `buf` (from
 * movebuf_init), unranked: set up both passes in s[0..1], then search all anchors in
 * generation order, or best bound first with a limit. Returns 0, FAIL_MEMORY or FAIL_TIME.
 * Touches no Python object: callers may release the GIL around it. */
static int search_moves(const Generator *g, const uint8_t *board, const uint8_t *rack, int rack_total,
                        const SearchArgs *a, Search s[2], MoveBuf *buf) {
    const Rules *r = &g->rules;
    int32_t tile_desc[MAX_RACK] = {0};
    float best_leave[MAX_RACK + 1] = {0}, blank_leave[MAX_RACK + 1];
    rack_bounds(rack, r, a->leaves, tile_desc, best_leave, blank_leave);
    const Anagrams *anagrams = g->anagrams.slots ? &g->anagrams : NULL;
    Bingos bingos[1];
    bingos_init(bingos, anagrams, rack, r);
    for (int dir = 0; dir < 2; dir++) {
        Search *p = &s[dir];
        attach(p, g);
        p->anagrams = anagrams;
        p->bingos = bingos;
        memcpy(p->rack, rack, (size_t)r->alphabet + 1);
        memset(p->rack + r->alphabet + 1, 0, sizeof p->rack - (size_t)r->alphabet - 1);
        p->rack_left = rack_total;
        p->all_letters = every_letter(r);
        p->rack_mask = 0;
        for (int k = 0; k <= r->alphabet; k++)
            if (rack[k]) p->rack_mask |= (uint64_t)1 << k;
        p->skip_lone_cross = dir == 1 && (a->mode & MODE_ACROSS);
        p->leaves = a->leaves;
        memcpy(p->tile_desc, tile_desc, sizeof tile_desc);
        memcpy(p->best_leave, best_leave, sizeof best_leave);
        memcpy(p->blank_leave, blank_leave, sizeof blank_leave);
        p->prune = a->limit >= 0 && !a->count_all;
        p->out = buf;
        p->failed = 0;
        p->steps = 0;
        p->has_deadline = a->has_deadline;
        p->deadline = a->deadline;
        p->order_base = 0;
        if ((a->mode & (dir ? MODE_DOWN : MODE_ACROSS)) && !a->prepared) prepare_pass(p, r, board, dir, playable(p));
    }
    bingos->alone = rack_spells(&s[0], 0, 0);
    if (!s[0].root) return 0; /* an empty lexicon: no plays */
    if (a->limit == 0 && !a->count_all) {
        buf->pruned = 1; /* nothing wanted, nothing searched */
        return 0;
    }
    /* the prefix tree starts as the empty prefix; the stack holds the usual few hundred */
    LeftPart local[LOCAL_LEFT_PARTS];
    LeftParts lefts = {local, 1, LOCAL_LEFT_PARTS, 0};
    local[0] = left_part_at(&s[0], s[0].root, 0, 0, s[0].rack_mask & ~(uint64_t)1, s[0].rack[0]);
    s[0].lefts = s[1].lefts = &lefts;
    int failed = 0;
    if (a->limit >= 0) {
        failed = search_best_first(s, a->mode, buf, a->leaves != NULL);
    } else {
        for (int dir = 0; dir < 2 && !failed; dir++)
            if (a->mode & (dir ? MODE_DOWN : MODE_ACROSS)) {
                run_pass(&s[dir]);
                failed = s[dir].failed;
            }
    }
    if (lefts.on_heap) free(lefts.items);
    s[0].lefts = s[1].lefts = NULL;
    return failed;
}

#include "playout.h"

static void Generator_dealloc(Generator *self) {
    if (self->has_kwg) PyBuffer_Release(&self->kwg);
    free(self->owned_nodes);
    free(self->masks);
    free(self->runs);
    free(self->reach);
    free(self->anagrams.slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int read_grid(PyObject *obj, uint8_t *dst, int cells, const char *what, int max_value) {
    Py_buffer v;
    if (PyObject_GetBuffer(obj, &v, PyBUF_SIMPLE) < 0) return -1;
    int ok = v.len == cells;
    if (ok) {
        memcpy(dst, v.buf, (size_t)cells);
        for (int i = 0; i < cells; i++)
            if (dst[i] < 1 || dst[i] > max_value) ok = 0;
    }
    PyBuffer_Release(&v);
    if (!ok) PyErr_Format(PyExc_ValueError, "%s must be %d bytes, each 1..%d", what, cells, max_value);
    return ok ? 0 : -1;
}

/* An upper bound on any play's score under these rules: on the line with the largest
 * product of rack_size word premiums, every square at the highest tile value and letter
 * premium, and every placed tile making the longest possible cross-word; bingo added. */
static double max_score(const Rules *r) {
    int32_t top = 0;
    for (int t = 1; t <= r->alphabet; t++)
        if (r->values[t] > top) top = r->values[t];
    double word = 1.0;
    for (int dir = 0; dir < 2; dir++) {
        int rows = dir ? r->cols : r->rows, cols = dir ? r->rows : r->cols;
        for (int row = 0; row < rows; row++) {
            uint8_t wm[MAX_SIDE];
            for (int col = 0; col < cols; col++) { /* sorted, highest first */
                int j = col;
                for (; j > 0 && wm[j - 1] < r->wm[dir][row * cols + col]; j--) wm[j] = wm[j - 1];
                wm[j] = r->wm[dir][row * cols + col];
            }
            double product = 1.0;
            for (int k = 0; k < r->rack_size && k < cols; k++) product *= wm[k];
            if (product > word) word = product;
        }
    }
    int side = r->rows > r->cols ? r->rows : r->cols;
    double main = word * side * top * 4;
    double cross = (double)r->rack_size * (side * top + top * 4) * 4;
    return main + cross + r->bingo;
}

/* Checks the ruleset constants (r->rows .. r->bingo already set) and reads the tile values
 * and premium grids into r. The same checks serve Generator() and check_rules(), so the
 * limits a ruleset file is held to are the generator's own. -1 with ValueError. */
static int rules_load(Rules *r, PyObject *values, PyObject *lm, PyObject *wm) {
    if (r->rows < 2 || r->rows > MAX_SIDE || r->cols < 2 || r->cols > MAX_SIDE) {
        PyErr_Format(PyExc_ValueError, "board %dx%d: each side must be 2..%d", r->rows, r->cols, MAX_SIDE);
        return -1;
    }
    if (r->centre_row < 0 || r->centre_row >= r->rows || r->centre_col < 0 || r->centre_col >= r->cols) {
        PyErr_SetString(PyExc_ValueError, "centre square is off the board");
        return -1;
    }
    if (r->rack_size < 1 || r->rack_size > MAX_RACK) {
        PyErr_Format(PyExc_ValueError, "rack size %d: it must be 1..%d", r->rack_size, MAX_RACK);
        return -1;
    }
    if (r->bingo < 0 || r->bingo > MAX_BINGO) {
        PyErr_Format(PyExc_ValueError, "bingo bonus %d: it must be 0..%d", r->bingo, MAX_BINGO);
        return -1;
    }
    PyObject *seq = PySequence_Fast(values, "values must be a sequence of ints");
    if (!seq) return -1;
    Py_ssize_t nv = PySequence_Fast_GET_SIZE(seq);
    if (nv < 2 || nv > MAX_LETTERS + 1) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "values must list 2..%d entries (blank first)", MAX_LETTERS + 1);
        return -1;
    }
    r->alphabet = (int)nv - 1;
    memset(r->values, 0, sizeof r->values);
    for (Py_ssize_t i = 0; i < nv; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0 || v > MAX_TILE_VALUE || (i == 0 && v != 0)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "tile %zd is worth %ld points; values must be 0..%d",
                         i, v, MAX_TILE_VALUE);
            return -1;
        }
        r->values[i] = (int32_t)v;
    }
    Py_DECREF(seq);
    int cells = r->rows * r->cols;
    if (read_grid(lm, r->lm[0], cells, "letter_mult", 4) < 0) return -1;
    if (read_grid(wm, r->wm[0], cells, "word_mult", 4) < 0) return -1;
    for (int row = 0; row < r->cols; row++) /* the down pass reads the board transposed */
        for (int col = 0; col < r->rows; col++) {
            r->lm[1][row * r->rows + col] = r->lm[0][col * r->cols + row];
            r->wm[1][row * r->rows + col] = r->wm[0][col * r->cols + row];
        }
    double most = max_score(r);
    if (most >= MAX_SCORE) {
        PyErr_Format(PyExc_ValueError,
                     "tile values and premiums allow a play of up to %lld points; scores must stay "
                     "below %d (they are ranked as exact 32-bit floats)", (long long)most, MAX_SCORE);
        return -1;
    }
    return 0;
}

static char *rules_names[] = {"rows", "cols", "values", "letter_mult", "word_mult",
                              "centre_row", "centre_col", "rack_size", "bingo", NULL};

static PyObject *py_check_rules(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    PyObject *values, *lm, *wm;
    Rules *r = malloc(sizeof *r);
    if (!r) return PyErr_NoMemory();
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iiOOOiiii", rules_names, &r->rows, &r->cols,
                                     &values, &lm, &wm, &r->centre_row, &r->centre_col,
                                     &r->rack_size, &r->bingo) ||
        rules_load(r, values, lm, wm) < 0) {
        free(r);
        return NULL;
    }
    double most = max_score(r);
    free(r);
    return PyFloat_FromDouble(most);
}

PyDoc_STRVAR(check_rules_doc,
"check_rules(rows, cols, values, letter_mult, word_mult, centre_row, centre_col, rack_size,\n"
"            bingo) -> float\n\n"
"Check ruleset constants against the generator's limits, as Generator() does; returns\n"
"an upper bound on any play's score, or raises ValueError naming what is out of range.");

static int Generator_init(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"kwg", "rows", "cols", "values", "letter_mult", "word_mult",
                            "centre_row", "centre_col", "rack_size", "bingo", NULL};
    PyObject *kwg, *values, *lm, *wm;
    Rules *r = &self->rules;
    if (self->has_kwg) { /* the lexicon buffer is held for the object's life */
        PyErr_SetString(PyExc_TypeError, "Generator is already initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiiOOOiiii", names, &kwg, &r->rows, &r->cols,
                                     &values, &lm, &wm, &r->centre_row, &r->centre_col,
                                     &r->rack_size, &r->bingo))
        return -1;
    if (rules_load(r, values, lm, wm) < 0) return -1;
    if (PyObject_GetBuffer(kwg, &self->kwg, PyBUF_SIMPLE) < 0) return -1;
    self->has_kwg = 1;
    if (self->kwg.len % 4 != 0 || self->kwg.len < 8 || (uint64_t)self->kwg.len / 4 > KWG_MAX_NODES) {
        PyErr_SetString(PyExc_ValueError, "kwg buffer has a bad size");
        return -1;
    }
    self->n_nodes = (uint32_t)(self->kwg.len / 4);
    self->nodes = kwg_nodes_view(&self->kwg, &self->owned_nodes);
    if (!self->nodes) {
        PyErr_NoMemory();
        return -1;
    }
    KwgReport rep;
    rep.error[0] = 0;
    rep.counts = NULL;
    int bad = 0;
    for (uint32_t i = 0; i < self->n_nodes && !bad; i++)
        if (kwg_arc(self->nodes[i]) >= self->n_nodes) bad = 1;
    if (!bad && !kwg_is_end(self->nodes[self->n_nodes - 1])) bad = 1;
    if (!bad && kwg_walk(self->nodes, self->n_nodes, (unsigned)r->alphabet, 1, &rep) != 0) bad = 1;
    if (bad) {
        PyErr_Format(PyExc_ValueError, "kwg buffer failed its check: %s",
                     rep.error[0] ? rep.error : "arc out of range or unterminated list");
        return -1;
    }
    /* masks of the list starting at every node below the DAWG's extent, built backwards */
    self->extent = rep.extent;
    self->masks = calloc(self->extent + 1, sizeof *self->masks);
    if (!self->masks) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint32_t i = self->extent; i-- > 2;) {
        uint32_t node = self->nodes[i];
        unsigned tile = kwg_tile(node);
        uint64_t bit = tile >= 1 && tile <= MAX_LETTERS ? (uint64_t)1 << tile : 0;
        ListMasks next = kwg_is_end(node) ? (ListMasks){0, 0} : self->masks[i + 1];
        self->masks[i].children = next.children | bit;
        self->masks[i].accepts = next.accepts | (kwg_accepts(node) ? bit : 0);
    }
    if (build_runs(self->nodes, self->extent, r->alphabet, &self->runs) < 0 ||
        build_reach(self->nodes, self->extent, r->alphabet, &self->reach) < 0 ||
        build_anagrams(self->nodes, self->extent, r->alphabet, r->rack_size, &self->anagrams) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    uint32_t gaddag = kwg_arc(self->nodes[1]);
    self->gaddag = gaddag_covers(self->nodes, kwg_arc(self->nodes[0]), gaddag, GADDAG_CHECK_STEPS) ? gaddag : 0;
    return 0;
}

PyDoc_STRVAR(generate_doc,
"generate(cells, rack, mode, limit, steps=None, values=None, budget=0.0, count_all=False)\n"
"    -> (records, found, complete[, equities])\n\n"
"cells: rows*cols board bytes; rack: alphabet+1 tile counts (blanks first);\n"
"mode: 1 across, 2 down, 3 both; limit: -1 for all, else the top N (memory then stays\n"
"near 2N records however many plays there are); steps, values: a leave table (rank by\n"
"equity); budget: seconds the search may take (0: no limit), TimeoutError past it;\n"
"count_all: with a limit, still search every play (so `found` counts them all).\n"
"records: ranked 32-byte move records (layout in _movegen.c); found: plays the search\n"
"generated; complete: whether that is every play (a limit lets it skip what cannot rank).");

/* The moment `budget` seconds from now (CLOCK_MONOTONIC); budget 0 means none. */
static struct timespec deadline_after(double budget) {
    struct timespec at = {0, 0};
    if (budget <= 0.0) return at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    double whole = (double)(long)budget;
    at.tv_sec += (time_t)whole;
    at.tv_nsec += (long)((budget - whole) * 1e9);
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    return at;
}

/* The Python exception for a search's FAIL_ code: TimeoutError past the budget, else
 * MemoryError. */
static void raise_failure(int failed, const char *what, double budget) {
    if (failed == FAIL_TIME)
        PyErr_Format(PyExc_TimeoutError, "%s ran past the budget of %g s", what, budget);
    else if (failed == FAIL_CHECK)
        PyErr_Format(PyExc_AssertionError, "%s: a board laid tile by tile differs from the board prepared whole", what);
    else
        PyErr_NoMemory();
}

static PyObject *Generator_generate(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"cells", "rack",   "mode",       "limit", "steps",
                            "values", "budget", "count_all", NULL};
    Py_buffer cells_view, rack_view, step_view = {0}, value_view = {0};
    int mode;
    long limit;
    double budget = 0.0;
    int count_all = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*il|z*z*dp", names, &cells_view, &rack_view,
                                     &mode, &limit, &step_view, &value_view, &budget, &count_all))
        return NULL;
    int by_equity_rank = step_view.buf != NULL;
    LeaveTable leaves = {0};
    float *equities = NULL;
    const Rules *r = &self->rules;
    int ncells = r->rows * r->cols;
    PyObject *result = NULL;
    Search *s = NULL;
    MoveBuf buf = {0};
    MoveRecord *ranked = NULL;
    uint8_t board[MAX_CELLS];
    uint8_t rack[MAX_LETTERS + 1];
    if (cells_view.len != ncells) {
        PyErr_Format(PyExc_ValueError, "board has %zd cells; this ruleset's has %d", cells_view.len, ncells);
        goto out;
    }
    if (rack_view.len != r->alphabet + 1) {
        PyErr_Format(PyExc_ValueError, "rack must give %d counts", r->alphabet + 1);
        goto out;
    }
    if (mode < 1 || mode > 3) {
        PyErr_SetString(PyExc_ValueError, "mode must be 1 (across), 2 (down) or 3 (both)");
        goto out;
    }
    if (limit < -1) {
        PyErr_SetString(PyExc_ValueError, "limit must be -1 (all) or a count >= 0");
        goto out;
    }
    if (!(budget >= 0.0 && budget <= 1e6)) {
        PyErr_SetString(PyExc_ValueError, "budget must be 0..1e6 seconds (0: no limit)");
        goto out;
    }
    struct timespec deadline = deadline_after(budget);
    if (by_equity_rank) {
        /* the key steps alone, or leave_table's KeySteps with the best leaves after them */
        const Py_ssize_t steps_only = (Py_ssize_t)((MAX_LETTERS + 1) * sizeof(uint16_t));
        if ((step_view.len != steps_only && step_view.len != (Py_ssize_t)sizeof(KeySteps)) ||
            value_view.buf == NULL || value_view.len % sizeof(float) != 0 || value_view.len == 0 ||
            ((uintptr_t)step_view.buf % sizeof(float)) || ((uintptr_t)value_view.buf % sizeof(float))) {
            PyErr_SetString(PyExc_ValueError,
                            "leave table: 64 uint16 key steps (optionally with leave_table's best leaves) "
                            "and a float32 array");
            goto out;
        }
        if (step_view.len == (Py_ssize_t)sizeof(KeySteps)) {
            const KeySteps *ks = step_view.buf;
            leaves.best = ks->best;
            leaves.best_blank = ks->best_blank;
        }
        leaves.key_step = step_view.buf;
        leaves.value = value_view.buf;
        leaves.keys = (size_t)value_view.len / sizeof(float);
    }
    memcpy(board, cells_view.buf, (size_t)ncells);
    memcpy(rack, rack_view.buf, (size_t)r->alphabet + 1);
    for (int i = 0; i < ncells; i++) {
        unsigned t = board[i] & TILE_MASK;
        if (board[i] && (t < 1 || t > (unsigned)r->alphabet)) {
            PyErr_Format(PyExc_ValueError, "board cell %d holds invalid byte %u", i, board[i]);
            goto out;
        }
    }
    int rack_total = 0;
    for (int i = 0; i <= r->alphabet; i++) rack_total += rack[i];
    if (rack_total > r->rack_size) {
        PyErr_Format(PyExc_ValueError, "rack holds %d tiles; at most %d", rack_total, r->rack_size);
        goto out;
    }
    s = malloc(2 * sizeof *s); /* one per direction */
    if (!s) {
        PyErr_NoMemory();
        goto out;
    }
    if (movebuf_init(&buf, limit, by_equity_rank) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    int failed = 0;
    size_t kept = 0;
    SearchArgs sa = {mode, limit, count_all, by_equity_rank ? &leaves : NULL, budget > 0.0, deadline, 0};
    Py_BEGIN_ALLOW_THREADS
    failed = search_moves(self, board, rack, rack_total, &sa, s, &buf);
    if (!failed) {
        uint64_t *orders = NULL;
        if (limit >= 0 || by_equity_rank)
            ranked = rank_ordered(&buf, limit, by_equity_rank, &kept, &equities, &orders);
        else
            ranked = rank_moves(&buf, limit, &kept);
        free(orders);
        if (!ranked) failed = FAIL_MEMORY;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        raise_failure(failed, "move generation", budget);
        goto out;
    }
    Py_ssize_t found = (Py_ssize_t)buf.total;
    PyObject *complete = buf.pruned ? Py_False : Py_True;
    PyObject *records = PyBytes_FromStringAndSize((const char *)ranked, (Py_ssize_t)(kept * sizeof(MoveRecord)));
    if (records && by_equity_rank) {
        PyObject *eq = PyBytes_FromStringAndSize((const char *)equities, (Py_ssize_t)(kept * sizeof(float)));
        result = eq ? Py_BuildValue("NnON", records, found, complete, eq) : NULL;
        if (!eq) Py_DECREF(records);
    } else if (records) {
        result = Py_BuildValue("NnO", records, found, complete);
    }
out:
    free(ranked);
    free(equities);
    movebuf_free(&buf);
    if (step_view.buf) PyBuffer_Release(&step_view);
    if (value_view.buf) PyBuffer_Release(&value_view);
    free(s);
    PyBuffer_Release(&cells_view);
    PyBuffer_Release(&rack_view);
    return result;
}

/* A candidate from Python, (kind, score, placed, back), checked against the board and the
 * rack it is made from: placed holds (row, col, cell) byte triples, back the counts put
 * back (alphabet + 1, blank first). -1 with a ValueError when anything is off. */
static int read_turn(const Rules *r, PyObject *item, const uint8_t *board, const uint8_t *rack, Turn *t) {
    int kind, score;
    Py_buffer placed, back;
    if (!PyArg_ParseTuple(item, "iiy*y*", &kind, &score, &placed, &back)) return -1;
    int ok = 0;
    uint8_t need[MAX_LETTERS + 1] = {0};
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->score = score;
    if (kind < TURN_PLAY || kind > TURN_PASS || score < -MAX_SCORE || score > MAX_SCORE) {
        PyErr_SetString(PyExc_ValueError, "candidate: kind must be 0..2 and score within MAX_SCORE");
        goto out;
    }
    if (placed.len % 3 || placed.len / 3 > r->rack_size || (kind != TURN_PLAY && placed.len) ||
        (kind == TURN_PLAY && placed.len == 0)) {
        PyErr_SetString(PyExc_ValueError, "candidate: a play places 1..rack size tiles, nothing else does");
        goto out;
    }
    if (back.len != r->alphabet + 1) {
        PyErr_Format(PyExc_ValueError, "candidate: back must give %d counts", r->alphabet + 1);
        goto out;
    }
    const uint8_t *cells = placed.buf, *returned = back.buf;
    int back_total = 0;
    for (int k = 0; k <= r->alphabet; k++) back_total += returned[k];
    if ((kind == TURN_EXCHANGE) != (back_total > 0)) {
        PyErr_SetString(PyExc_ValueError, "candidate: only an exchange puts tiles back, and it puts some");
        goto out;
    }
    for (int k = 0; k <= r->alphabet; k++) {
        need[k] = returned[k];
        t->back[k] = returned[k];
    }
    t->count = (int)(placed.len / 3);
    for (int i = 0; i < t->count; i++) {
        int row = cells[3 * i], col = cells[3 * i + 1];
        uint8_t cell = cells[3 * i + 2];
        unsigned tile = cell & TILE_MASK;
        if (row >= r->rows || col >= r->cols || tile < 1 || tile > (unsigned)r->alphabet ||
            (cell & ~(BLANK_FLAG | TILE_MASK))) {
            PyErr_SetString(PyExc_ValueError, "candidate: a placed tile is off the board or not a tile");
            goto out;
        }
        int at = row * r->cols + col;
        for (int j = 0; j < i; j++)
            if (t->square[j] == at) at = -1;
        if (at < 0 || board[at]) {
            PyErr_SetString(PyExc_ValueError, "candidate: a tile is placed on a taken square");
            goto out;
        }
        t->square[i] = (uint16_t)at;
        t->cell[i] = cell;
        need[(cell & BLANK_FLAG) ? 0 : tile]++;
    }
    for (int k = 0; k <= r->alphabet; k++)
        if (need[k] > rack[k]) {
            PyErr_SetString(PyExc_ValueError, "candidate: it uses tiles the rack does not hold");
            goto out;
        }
    ok = 1;
out:
    PyBuffer_Release(&placed);
    PyBuffer_Release(&back);
    return ok ? 0 : -1;
}

PyDoc_STRVAR(playouts_doc,
"playouts(cells, rack, candidates, order, plies, graph, counts, values, budget=0.0)\n"
"    -> ([value per candidate], [tiles unplayed at its end per candidate])\n\n"
"One Monte Carlo playout of each candidate from this position (engine/simulate.py's\n"
"_playout in C): cells, rack as for generate; candidates: (kind, score, placed, back)\n"
"tuples, kind 0 play / 1 exchange / 2 pass, placed (row, col, cell) byte triples, back the\n"
"tile counts an exchange puts back; order: the unseen tiles (tile numbers, blank 0), the\n"
"opponent's rack first, then the bag; plies: moves after the candidate; graph, counts,\n"
"values: the KLV2 leave graph (Leaves.graph()); budget: seconds (0: no limit),\n"
"TimeoutError past it. Unplayed: tiles in the bag and on both racks when the playout\n"
"stopped, 0 when a side went out (the game is over).");

static PyObject *Generator_playouts(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"cells", "rack", "candidates", "order", "plies",
                            "graph", "counts", "values", "budget", "check", NULL};
    Py_buffer cells_view, rack_view, order_view, graph, counts, values;
    PyObject *candidates, *result = NULL;
    int plies, check = 0;
    double budget = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*Oy*iy*y*y*|dp", names, &cells_view, &rack_view,
                                     &candidates, &order_view, &plies, &graph, &counts, &values, &budget,
                                     &check))
        return NULL;
    const Rules *r = &self->rules;
    const int ncells = r->rows * r->cols;
    Turn *turns = NULL;
    double *out = NULL;
    long *left = NULL;
    Playout p = {0};
    PyObject *seq = NULL;
    uint8_t rack[MAX_LETTERS + 1] = {0};
    const uint32_t n_graph = (uint32_t)(graph.len / 4);
    if (cells_view.len != ncells || rack_view.len != r->alphabet + 1) {
        PyErr_Format(PyExc_ValueError, "playouts: %d board cells and %d rack counts expected", ncells,
                     r->alphabet + 1);
        goto out;
    }
    const uint8_t *board = cells_view.buf, *order = order_view.buf;
    for (int i = 0; i < ncells; i++) {
        unsigned t = board[i] & TILE_MASK;
        if (board[i] && (t < 1 || t > (unsigned)r->alphabet || (board[i] & ~(BLANK_FLAG | TILE_MASK)))) {
            PyErr_Format(PyExc_ValueError, "board cell %d holds invalid byte %u", i, board[i]);
            goto out;
        }
    }
    int rack_total = 0;
    memcpy(rack, rack_view.buf, (size_t)r->alphabet + 1);
    for (int i = 0; i <= r->alphabet; i++) rack_total += rack[i];
    if (rack_total > r->rack_size) {
        PyErr_Format(PyExc_ValueError, "rack holds %d tiles; at most %d", rack_total, r->rack_size);
        goto out;
    }
    if (plies < 0 || plies > MAX_PLAYOUT_PLIES || order_view.len > MAX_PLAYOUT_TILES ||
        !(budget >= 0.0 && budget <= 1e6)) {
        PyErr_Format(PyExc_ValueError, "playouts: plies 0..%d, at most %d unseen tiles, budget 0..1e6 s",
                     MAX_PLAYOUT_PLIES, MAX_PLAYOUT_TILES);
        goto out;
    }
    for (Py_ssize_t i = 0; i < order_view.len; i++)
        if (order[i] > r->alphabet) {
            PyErr_Format(PyExc_ValueError, "playouts: unseen tile %u is not a tile", order[i]);
            goto out;
        }
    if (graph.len % 4 || n_graph < 2 || counts.len != graph.len || values.len % 4 ||
        (uintptr_t)graph.buf % 4 || (uintptr_t)counts.buf % 4 || (uintptr_t)values.buf % 4) {
        PyErr_SetString(PyExc_ValueError, "playouts: the leave graph's buffers do not fit together");
        goto out;
    }
    seq = PySequence_Fast(candidates, "playouts: candidates must be a sequence");
    if (!seq) goto out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_PLAYOUT_CANDIDATES) {
        PyErr_Format(PyExc_ValueError, "playouts: at most %d candidates", MAX_PLAYOUT_CANDIDATES);
        goto out;
    }
    turns = malloc(((size_t)n + 1) * sizeof *turns);
    out = malloc(((size_t)n + 1) * sizeof *out);
    left = malloc(((size_t)n + 1) * sizeof *left);
    if (!turns || !out || !left) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_turn(r, PySequence_Fast_GET_ITEM(seq, i), board, rack, &turns[i]) < 0) goto out;
    Klv klv = {graph.buf, counts.buf, n_graph, values.buf, (size_t)values.len / 4};
    p.g = self;
    p.klv = &klv;
    p.passes = malloc(5 * sizeof *p.passes); /* the board in play, the position, a check's */
    p.table = malloc(((size_t)1 << r->rack_size) * sizeof *p.table);
    p.bag = malloc((size_t)order_view.len + (size_t)MAX_RACK * ((size_t)plies + 1) + 1);
    if (!p.passes || !p.table || !p.bag || movebuf_init(&p.buf, 1, 1) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    /* the position prepared once for every letter; each playout lays its moves on a copy */
    const uint64_t all = every_letter(r);
    for (int dir = 0; dir < 2; dir++) {
        attach(&p.passes[dir], self); /* the board in play: copy_board gives it its squares */
        attach(&p.passes[2 + dir], self);
        prepare_pass(&p.passes[2 + dir], r, board, dir, all);
    }
    p.start = p.passes + 2;
    p.scratch = check ? p.passes + 4 : NULL;
    p.args = (SearchArgs){MODE_ACROSS | MODE_DOWN, 1, 0, NULL, budget > 0.0, deadline_after(budget), 1};
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !failed; i++)
        failed = playout(&p, board, rack, &turns[i], order, (size_t)order_view.len, plies, &out[i], &left[i]);
    Py_END_ALLOW_THREADS
    if (failed) {
        raise_failure(failed, "the playouts", budget);
        goto out;
    }
    PyObject *vals = PyList_New(n), *lefts = PyList_New(n);
    int ok = vals && lefts;
    for (Py_ssize_t i = 0; ok && i < n; i++) { /* the lists own what they are given */
        PyObject *v = PyFloat_FromDouble(out[i]), *u = PyLong_FromLong(left[i]);
        if (v) PyList_SET_ITEM(vals, i, v);
        if (u) PyList_SET_ITEM(lefts, i, u);
        ok = v && u;
    }
    if (ok) result = PyTuple_Pack(2, vals, lefts);
    Py_XDECREF(vals);
    Py_XDECREF(lefts);
out:
    Py_XDECREF(seq);
    free(turns);
    free(out);
    free(left);
    free(p.passes);
    free(p.table);
    free(p.bag);
    movebuf_free(&p.buf);
    PyBuffer_Release(&cells_view);
    PyBuffer_Release(&rack_view);
    PyBuffer_Release(&order_view);
    PyBuffer_Release(&graph);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&values);
    return result;
}

PyDoc_STRVAR(describe_doc,
"describe(records, cells, text, lists=False) -> [(notation, score, row, col, direction,\n"
"    word, placed), ...]\n\n"
"engine.moves.fields() of every packed record, in order, without a Python loop: records\n"
"as generate() returns them, made on the board `cells`; text: the text of each cell byte\n"
"(board.cell_text). With lists, each entry is a list and placed squares are lists (the\n"
"protocol's compact move array).");

/* The text of cell byte b (borrowed), or NULL with a ValueError when the table has none. */
static PyObject *cell_str(PyObject *text, uint8_t b) {
    PyObject *s = PyTuple_GET_ITEM(text, b);
    if (!PyUnicode_Check(s) || PyUnicode_GET_LENGTH(s) == 0) {
        PyErr_Format(PyExc_ValueError, "describe: no text for cell byte %u", b);
        return NULL;
    }
    return s;
}

static PyObject *Generator_describe(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"records", "cells", "text", "lists", NULL};
    Py_buffer rec, cells;
    PyObject *text, *out = NULL, *across = NULL, *down = NULL, *open_ = NULL, *close_ = NULL,
             *empty = NULL;
    int lists = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*O!|p", names, &rec, &cells, &PyTuple_Type, &text,
                                     &lists))
        return NULL;
    const Rules *r = &self->rules;
    if (rec.len % (Py_ssize_t)sizeof(MoveRecord) || cells.len != r->rows * r->cols ||
        PyTuple_GET_SIZE(text) != 256) {
        PyErr_SetString(PyExc_ValueError, "describe: records of 32 bytes, the board's cells, 256 texts");
        goto done;
    }
    Py_ssize_t n = rec.len / (Py_ssize_t)sizeof(MoveRecord);
    const uint8_t *board = cells.buf;
    across = PyUnicode_FromString("across");
    down = PyUnicode_FromString("down");
    open_ = PyUnicode_FromString("(");
    close_ = PyUnicode_FromString(")");
    empty = PyUnicode_FromString("");
    out = PyList_New(n);
    if (!across || !down || !open_ || !close_ || !empty || !out) goto fail;
    for (Py_ssize_t k = 0; k < n; k++) {
        MoveRecord m;
        memcpy(&m, (const uint8_t *)rec.buf + k * (Py_ssize_t)sizeof m, sizeof m);
        int step = m.dir ? r->cols : 1;
        if (m.dir > 1 || m.len < 1 || m.len > RECORD_TILES || m.row >= r->rows || m.col >= r->cols ||
            (m.dir ? m.row : m.col) + m.len > (m.dir ? r->rows : r->cols)) {
            PyErr_Format(PyExc_ValueError, "describe: record %zd is not a play on this board", k);
            goto fail;
        }
        /* notation: the coordinate, then each letter, board letters in parentheses */
        char coord[16];
        int n = m.dir ? snprintf(coord, sizeof coord, "%c%d ", 'A' + m.col, m.row + 1)
                      : snprintf(coord, sizeof coord, "%d%c ", m.row + 1, 'A' + m.col);
        PyObject *word = PyList_New(m.len), *notation = PyList_New(0), *placed = PyList_New(0);
        PyObject *head = PyUnicode_FromStringAndSize(coord, n), *entry = NULL;
        int ok = word && notation && placed && head && PyList_Append(notation, head) == 0;
        int through = 0;
        for (int i = 0; ok && i < m.len; i++) {
            int at = m.row * r->cols + m.col + i * step;
            uint8_t tile = m.tiles[i];
            PyObject *letter = cell_str(text, tile ? tile : board[at]);
            if (!letter) {
                ok = 0;
                break;
            }
            Py_INCREF(letter);
            PyList_SET_ITEM(word, i, letter);
            if (tile) {
                int row = m.dir ? m.row + i : m.row, col = m.dir ? m.col : m.col + i;
                PyObject *square = lists ? PyList_New(3) : PyTuple_New(3);
                PyObject *y = PyLong_FromLong(row), *x = PyLong_FromLong(col);
                ok = square && y && x;
                if (ok) {
                    Py_INCREF(letter);
                    if (lists) {
                        PyList_SET_ITEM(square, 0, y);
                        PyList_SET_ITEM(square, 1, x);
                        PyList_SET_ITEM(square, 2, letter);
                    } else {
                        PyTuple_SET_ITEM(square, 0, y);
                        PyTuple_SET_ITEM(square, 1, x);
                        PyTuple_SET_ITEM(square, 2, letter);
                    }
                    ok = PyList_Append(placed, square) == 0;
                } else {
                    Py_XDECREF(y);
                    Py_XDECREF(x);
                }
                Py_XDECREF(square);
                if (ok && through) ok = PyList_Append(notation, close_) == 0;
                through = 0;
            } else {
                if (!through) ok = PyList_Append(notation, open_) == 0;
                through = 1;
            }
            if (ok) ok = PyList_Append(notation, letter) == 0;
        }
        if (ok && through) ok = PyList_Append(notation, close_) == 0;
        if (ok) {
            PyObject *items[7] = {PyUnicode_Join(empty, notation), PyLong_FromLong(m.score),
                                  PyLong_FromLong(m.row), PyLong_FromLong(m.col),
                                  m.dir ? down : across, PyUnicode_Join(empty, word),
                                  lists ? placed : PyList_AsTuple(placed)};
            Py_INCREF(items[4]);
            if (lists) Py_INCREF(placed);
            int complete = 1;
            for (int j = 0; j < 7; j++) complete &= items[j] != NULL;
            entry = complete ? (lists ? PyList_New(7) : PyTuple_New(7)) : NULL;
            for (int j = 0; j < 7; j++) {
                if (entry && lists) PyList_SET_ITEM(entry, j, items[j]);
                else if (entry) PyTuple_SET_ITEM(entry, j, items[j]);
                else Py_XDECREF(items[j]);
            }
        }
        Py_XDECREF(head);
        Py_XDECREF(word);
        Py_XDECREF(notation);
        Py_XDECREF(placed);
        if (!entry) goto fail;
        PyList_SET_ITEM(out, k, entry);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    Py_XDECREF(across);
    Py_XDECREF(down);
    Py_XDECREF(open_);
    Py_XDECREF(close_);
    Py_XDECREF(empty);
    PyBuffer_Release(&rec);
    PyBuffer_Release(&cells);
    return out;
}

static PyMethodDef Generator_methods[] = {
    {"generate", (PyCFunction)(void (*)(void))Generator_generate, METH_VARARGS | METH_KEYWORDS,
     generate_doc},
    {"playouts", (PyCFunction)(void (*)(void))Generator_playouts, METH_VARARGS | METH_KEYWORDS,
     playouts_doc},
    {"describe", (PyCFunction)(void (*)(void))Generator_describe, METH_VARARGS | METH_KEYWORDS,
     describe_doc},
    {NULL, NULL, 0, NULL},
};

static PyObject *Generator_gaddag(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->gaddag != 0);
}

static PyObject *Generator_letter_runs(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->runs != NULL);
}

static PyObject *Generator_run_reach(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->reach != NULL);
}

static PyGetSetDef Generator_getset[] = {
    {"letter_runs", (getter)Generator_letter_runs, NULL,
     "Whether the search narrows squares beside tiles by the letter runs words hold (False "
     "for a graph too costly to read them from: the same plays, found more slowly).",
     NULL},
    {"run_reach", (getter)Generator_run_reach, NULL,
     "Whether the search caps the letters a word may have before the tiles beside an anchor "
     "by how far the lexicon's words reach before their runs (False for a large alphabet or "
     "a graph too costly to read: the same plays, found more slowly).",
     NULL},
    {"gaddag", (getter)Generator_gaddag, NULL,
     "Whether the search lets the file's GADDAG pick the left parts of anchors with tiles "
     "after them (False when the file has none, or one that lacks a path the DAWG's words "
     "need: the same plays, found more slowly).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GeneratorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "anchor.engine._movegen.Generator",
    .tp_basicsize = sizeof(Generator),
    .tp_dealloc = (destructor)Generator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Generator(kwg, rows, cols, values, letter_mult, word_mult, centre_row, "
              "centre_col, rack_size, bingo): move generation over one lexicon and ruleset.",
    .tp_methods = Generator_methods,
    .tp_getset = Generator_getset,
    .tp_init = (initproc)Generator_init,
    .tp_new = PyType_GenericNew,
};

PyDoc_STRVAR(board_census_doc,
"board_census(cells, rows, cols, centre) -> (counts, stray)\n\n"
"The tiles on a board and whether they hang together: counts[t] tiles of each letter t\n"
"(1..63, blanks counted at 0 whatever they stand for), and stray: -1 when the board is\n"
"empty or its tiles are one group through square `centre` (row * cols + col), -2 when\n"
"there are tiles but none on the centre, else the first square whose tile is cut off.");

/* Tiles on the board by tile number (blanks at 0) and where connection fails: -1 when
 * every tile hangs together through the centre (or there is none), -2 when the centre is
 * empty under other tiles, else the first square not connected. -1 with a ValueError
 * when a cell holds no tile of MAX_LETTERS. */
static int census(const uint8_t *cells, int rows, int cols, int centre, long counts[MAX_LETTERS + 1], int *stray) {
    int any = 0;
    for (int i = 0; i < rows * cols; i++) {
        if (!cells[i]) continue;
        if ((cells[i] & TILE_MASK) == 0 || (cells[i] & TILE_MASK) > MAX_LETTERS) {
            PyErr_Format(PyExc_ValueError, "board_census: cell %d holds invalid byte %u", i, cells[i]);
            return -1;
        }
        any = 1;
        counts[(cells[i] & BLANK_FLAG) ? 0 : cells[i]]++;
    }
    *stray = -1;
    if (any && !cells[centre]) {
        *stray = -2;
    } else if (any) { /* flood fill from the centre over occupied squares */
        uint8_t seen[MAX_CELLS] = {0};
        int stack[MAX_CELLS], top = 0;
        seen[centre] = 1;
        stack[top++] = centre;
        while (top) {
            int at = stack[--top], r = at / cols, c = at % cols;
            int next[4] = {r > 0 ? at - cols : -1, r + 1 < rows ? at + cols : -1, c > 0 ? at - 1 : -1,
                           c + 1 < cols ? at + 1 : -1};
            for (int k = 0; k < 4; k++)
                if (next[k] >= 0 && cells[next[k]] && !seen[next[k]]) {
                    seen[next[k]] = 1;
                    stack[top++] = next[k];
                }
        }
        for (int i = 0; i < rows * cols && *stray == -1; i++)
            if (cells[i] && !seen[i]) *stray = i;
    }
    return 0;
}

static int census_args(const Py_buffer *view, int rows, int cols, int centre) {
    if (rows < 1 || cols < 1 || rows > MAX_SIDE || cols > MAX_SIDE || view->len != rows * cols ||
        centre < 0 || centre >= rows * cols) {
        PyErr_SetString(PyExc_ValueError, "board_census: rows x cols cells (at most 21 a side), centre on the board");
        return -1;
    }
    return 0;
}

static PyObject *py_board_census(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    int rows, cols, centre, stray;
    if (!PyArg_ParseTuple(args, "y*iii", &view, &rows, &cols, &centre)) return NULL;
    PyObject *result = NULL;
    long counts[MAX_LETTERS + 1] = {0};
    if (census_args(&view, rows, cols, centre) < 0 || census(view.buf, rows, cols, centre, counts, &stray) < 0)
        goto out;
    PyObject *list = PyList_New(MAX_LETTERS + 1);
    for (int t = 0; list && t <= MAX_LETTERS; t++) {
        PyObject *n = PyLong_FromLong(counts[t]);
        if (!n) Py_CLEAR(list);
        else PyList_SET_ITEM(list, t, n);
    }
    if (list) result = Py_BuildValue("Ni", list, stray);
out:
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(position_fits_doc,
"position_fits(cells, rows, cols, centre, supply, rack) -> bool\n\n"
"Whether the board's tiles hang together through the centre (or there are none) and the\n"
"board and rack together hold no more of any tile than the set: supply, the set's count\n"
"of each tile as uint32 (blank first); rack, the rack's tile numbers (blank 0). The\n"
"common case in one pass; legality.py says what is wrong when it is False.");

static PyObject *py_position_fits(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view, supply, rack;
    int rows, cols, centre, stray;
    if (!PyArg_ParseTuple(args, "y*iiiy*y*", &view, &rows, &cols, &centre, &supply, &rack)) return NULL;
    PyObject *result = NULL;
    long counts[MAX_LETTERS + 1] = {0};
    if (supply.len % 4 || supply.len / 4 > MAX_LETTERS + 1) {
        PyErr_SetString(PyExc_ValueError, "position_fits: supply is at most 64 uint32 counts");
        goto out;
    }
    if (census_args(&view, rows, cols, centre) < 0 || census(view.buf, rows, cols, centre, counts, &stray) < 0)
        goto out;
    const uint8_t *tiles = rack.buf;
    const Py_ssize_t kinds = supply.len / 4;
    int fits = stray == -1;
    for (Py_ssize_t i = 0; i < rack.len && fits; i++) {
        if (tiles[i] >= kinds) fits = 0;
        else counts[tiles[i]]++;
    }
    for (Py_ssize_t t = 0; t <= MAX_LETTERS && fits; t++) {
        uint32_t have = 0;
        if (t < kinds) memcpy(&have, (const char *)supply.buf + 4 * t, 4);
        if (counts[t] > (long)have) fits = 0;
    }
    result = PyBool_FromLong(fits);
out:
    PyBuffer_Release(&view);
    PyBuffer_Release(&supply);
    PyBuffer_Release(&rack);
    return result;
}

static PyMethodDef movegen_methods[] = {
    {"kwg_check", py_kwg_check, METH_VARARGS, kwg_check_doc},
    {"leave_table", py_leave_table, METH_VARARGS, leave_table_doc},
    {"position_fits", py_position_fits, METH_VARARGS, position_fits_doc},
    {"board_census", py_board_census, METH_VARARGS, board_census_doc},
    {"check_rules", (PyCFunction)(void (*)(void))py_check_rules, METH_VARARGS | METH_KEYWORDS,
     check_rules_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef movegen_module = {
    PyModuleDef_HEAD_INIT, "anchor.engine._movegen",
    "Native core of Anchor: KWG checking and move generation.", -1, movegen_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__movegen(void) {
    if (PyType_Ready(&GeneratorType) < 0) return NULL;
    PyObject *m = PyModule_Create(&movegen_module);
    if (!m) return NULL;
    Py_INCREF(&GeneratorType);
    if (PyModule_AddObject(m, "Generator", (PyObject *)&GeneratorType) < 0) {
        Py_DECREF(&GeneratorType);
        Py_DECREF(m);
        return NULL;
    }
    /* The limits rules.py checks ruleset files against: one definition, here. */
    if (PyModule_AddIntConstant(m, "RECORD_SIZE", (long)sizeof(MoveRecord)) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SIDE", MAX_SIDE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_LETTERS", MAX_LETTERS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_RACK", MAX_RACK) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TILE_VALUE", MAX_TILE_VALUE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_BINGO", MAX_BINGO) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SCORE", MAX_SCORE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
