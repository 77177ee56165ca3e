/*
 * anchor.engine._movegen: what every algorithm unit shares, free of Python (no unit that
 * includes only this header needs Python.h; tests/test_layout.py compiles each without it).
 * The move record and the search's state, the lexicon's node accessors (movegen_limits.h)
 * and the one child lookup, the ruleset, `Core` (the lexicon's graph and tables and the
 * rules a search reads), and the functions one unit calls in another.
 *
 * The algorithm units: search.c (LeftPart/ExtendRight), bounds.c (shadow bounds), laid.c
 * (an anchor's plays laid from words, for racks with a blank), board.c
 * (board preparation), tables.c (the lexicon's tables), anagram_file.c (the bingo words'
 * table as a file), rank.c (the move buffer and ranking), playout.c (Monte Carlo playouts
 * and self-played games), endgame.c (the exact endgame), endgame_peers.c (one endgame's
 * table shared by processes), infer.c (rack inference). The
 * CPython glue (glue.h) is in units of its own: glue.c (what the methods share: a board and
 * rack read and checked, failures as exceptions), generator.c (the Generator type),
 * describe.c (plays as Python values), games.c (Generator.selfplay), inferring.c
 * (Generator.infer), rules.c (a ruleset read from Python), leave_table.c (leave values),
 * kwg_check.c (the KWG checker), shuffle.c (a self-played game's bag, as Python's random
 * shuffles it), peers.c (endgame peers' regions from Python) and _movegen.c (the module).
 *
 * KWG node layout (little-endian uint32, the format of wolges/MAGPIE/Macondo):
 *   bits  0..21  arc index: first node of the child sibling list (0 = no children)
 *   bit   22     last sibling of its list
 *   bit   23     accepts: a word ends with this node's tile
 *   bits 24..31  tile (1..N letters; 0 is the GADDAG separator)
 * Node 0's arc is the DAWG root list, node 1's the GADDAG root list (0 if absent).
 */
#ifndef ANCHOR_CORE_H
#define ANCHOR_CORE_H

/* The system interfaces every unit uses (clock_gettime, malloc_trim), as Python.h asks for
 * them in the glue units; core.h comes first in every algorithm unit. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "movegen_limits.h"

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
    float known;          /* keep == 1, by equity: the worth of a play known to exist (a
                           * bingo the shadow bounds placed), so nothing worth less can be
                           * the best; -inf when none is known */
    float enough;         /* by equity, best-first: a play known to be worth more stops the
                           * search with FOUND_ENOUGH (inference asks only whether one
                           * exists); +inf: never */
} MoveBuf;

#define ORDER_ANCHOR_SHIFT 48 /* plays per search < 2^48, and a lay_key (laid.c) too; anchor ordinals < 2 * MAX_CELLS */

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

/* A mask for each sibling-list start: 32-bit when the alphabet has at most 31 letters
 * (half the bytes), else 64-bit; one of the two arrays is NULL. */
typedef struct {
    uint64_t *wide;
    uint32_t *narrow;
} MaskArray;

static inline uint64_t mask_at(const MaskArray *m, uint32_t i) { return m->narrow ? m->narrow[i] : m->wide[i]; }

/* Per sibling-list start: which tiles the list holds (children) and which of them end a
 * word (accepts). Lists are sorted by tile, so the node for tile t is at start +
 * popcount(children below t): O(1) lookups and loops over only the letters that can go
 * on a square. Arrays of their own rather than pairs, and narrow where they can be: the
 * search reads children at every step, so the smaller their array the more of it stays
 * in a core's cache (TWL06: 0.5 MB each, against 2 MB of pairs). */
typedef struct {
    MaskArray children, accepts;
} ListMasks;

/* An anchor's shadow bounds by the length l of the left part from the rack (l = 0 also
 * for a left part on the board): of every play, and of the plays putting down a blank
 * (a blank scores nothing, and by equity the leave it would have been part of is gone). */
typedef struct {
    float any[MAX_RACK + 1];
    float blank[MAX_RACK + 1];
    float two_blanks; /* of the plays putting down two blanks, whatever l (-inf: fewer on the rack) */
    float bingo; /* the best bingo placed at this anchor, exactly (by equity); -inf: none */
    float other; /* the bound of every other play at this anchor */
    uint32_t first, spans; /* its spans refine_bounds may tighten, in the search's SpanBounds */
    int room;
    int16_t row, col; /* the anchor */
    float fixed[MAX_RACK + 1]; /* of `any`, what comes from the other spans */
    float fixed_other;         /* of `other`, the same */
    float whole[MAX_RACK + 1]; /* by l, the bound of the plays putting down the whole rack (exact where its bingos were laid) */
    int lanes;                 /* some span's two blanks make bingos with more than MANY_PAIRS letter pairs */
} AnchorBounds;

/* A span's bound as anchor_bound took it, kept so that refine_bounds can tighten the
 * anchor's bounds when the anchor comes up to be searched: l rack tiles left of the anchor,
 * k in all, board letters whose codes are `with`. The bound is kept as its points and
 * which leave it adds (span_leave), so that a tighter leave is added to the same points
 * as emit() adds a play's: a bound that took the best leave away again could round below
 * the play it bounds. */
typedef struct {
    uint64_t with;
    int32_t points;
    uint8_t l, k;
    uint8_t pairs; /* a bingo span whose two blanks' letter pairs were too many to lay then
                    * (MANY_PAIRS): refine_bounds lays them all */
    uint8_t blank; /* only a blank fits some square: the leave is the best of parts with one */
} SpanBound;
_Static_assert(sizeof(SpanBound) == 16, "SpanBound is 16 bytes");

typedef struct {
    SpanBound *items;
    uint32_t count, capacity;
} SpanBounds;

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

/* A bingo laid on a span by its word (bingo_plays): columns [start, end) of the row, its
 * rack tiles from left to right (BLANK_FLAG on the blank), the first `left` of them left of
 * the anchor, and its running score as ExtendRight would hold it when the word ends. */
typedef struct {
    int start, end, left;
    uint8_t tile[MAX_RACK];
    Tally t;
} BingoPlay;

/* Ruleset constants, fixed for the life of a Generator. */
typedef struct {
    int rows, cols, alphabet, rack_size, bingo, centre_row, centre_col;
    int exchange_min_bag; /* tiles the bag must hold for an exchange (never of more than it holds) */
    int32_t values[MAX_LETTERS + 1]; /* by tile; [0] = 0 for blanks */
    uint8_t lm[2][MAX_CELLS], wm[2][MAX_CELLS]; /* premiums, as read by each pass */
    int mirrored; /* square, its premiums its own transpose, the centre on the diagonal: on an
                   * empty board the down pass's plays mirror the across pass's (Generator_init) */
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
    /* the words themselves, by key: head[slot] the last word added with the slot's key and
     * next[w] the one before it (indices + 1; 0 ends the chain); a word's tiles at
     * tiles[start[w] .. start[w] + length[w] - 1] */
    uint32_t *head, *next, *start;
    uint8_t *length, *tiles;
    size_t words, word_cap, tiles_used, tile_cap;
    int borrowed; /* the arrays lie in a mapped file (anagram_file.c): not this set's to free */
    uint64_t *filter; /* a bit for each key's ANAGRAM_FILTER_BITS-bit hash (always this set's own), or NULL */
    uint64_t *short_of; /* the keys one or two letters short of a word's (anagram_short_of), or NULL */
    int short_bits;     /* log2 of short_of's bits; -1: the set is too large to have it */
    int short_borrowed; /* short_of lies in a mapped file: not this set's to free or build */
} Anagrams;

void anagrams_free(Anagrams *a);

/* Every word of the lexicon by its letters' key (Anagrams.code sums), as a filter: whether
 * some part of the rack spells a word with given board letters. Two bits of one 64-bit word
 * per key (a blocked Bloom filter of WORD_KEY_BITS bits, 256 KiB): for TWL06 about 2% of
 * keys no word has are taken for words, which only leaves a bound where it was, so the
 * filter needs no slots behind it. Built once per Generator (build_anagrams). */
typedef struct {
    uint64_t *bits; /* NULL: none */
} WordKeys;

static inline uint64_t word_key_mask(uint64_t key, size_t *word) {
    const uint64_t h = key * 0xD6E8FEB86659FD93ull;
    *word = (size_t)(h >> (64 - (WORD_KEY_BITS - 6)));
    return ((uint64_t)1 << (h & 63)) | ((uint64_t)1 << (h >> 6 & 63));
}

static inline int word_keys_has(const WordKeys *k, uint64_t key) {
    size_t word;
    const uint64_t m = word_key_mask(key, &word);
    return (k->bits[word] & m) == m;
}

/* The rack's parts (sub-multisets) by size k, each with the leave value of the rest and
 * its letters' codes, for refine_leave: listed when first asked about, the parts of one size
 * sorted, best leave first, when that size is. Its answers are remembered by (board
 * letters, k), direct-mapped. One per search by equity with a limit (rack_parts_init). */
typedef struct {
    uint64_t codes;
    uint64_t tiles; /* its tiles, highest value first, a byte each (the blank is 0); listed when the search lays words (laid.c) */
    float leave;
    int blank; /* the blanks the part holds */
} RackPart;

typedef struct {
    int ready; /* listed (rack_parts_list), on the first question */
    const uint8_t *rack;
    const LeaveTable *leaves;
    int n[PART_RACK + 1];
    uint8_t sorted[PART_RACK + 1];
    RackPart part[PART_RACK + 1][PART_MOST];
    struct {
        uint64_t with;
        int k; /* -1: empty */
        float leave;
    } asked[1 << PART_ANSWER_BITS];
} RackParts;

/* What the search knows of the rack's bingos, shared by both passes (the rack is whole
 * whenever bounds are taken, so one answer per set of board letters serves the whole
 * search): the answers last asked, by the board letters' codes, direct-mapped. */
typedef struct {
    int checked;  /* the rack has rack_size tiles, at most two blanks and a set to ask */
    uint64_t key; /* its letters' codes, blanks left out */
    int alone;    /* it spells a word by itself */
    struct {
        uint64_t with;    /* the board letters' codes */
        uint64_t letters; /* with blanks: bit x when the (first) blank as x spells one (blank_letters) */
        int8_t known, spells, many; /* many: see blank_letters */
        uint8_t pairs;               /* two blanks, not many: the letter pairs (x <= y) with words */
        uint8_t pair[MANY_PAIRS][2];
    } asked[BINGO_ANSWERS];
    /* two blanks: every letter pair with bingos for the board letters `pairs_with` (past
     * MANY_PAIRS, laid only for the anchors that come up; all_pairs), -1: none asked yet.
     * On the heap, BINGO_PAIRS of each, when first asked (bingos_free): on the stack the
     * search's frame grew by 20 KiB and JOSH2's best play took 14% longer. */
    int pairs;
    uint64_t pairs_with;
    uint64_t *pair_key;
    uint8_t (*pair_as)[2];
} Bingos;

/* What a search reads of its Generator, fixed for the Generator's life (attach). */
typedef struct {
    const uint32_t *nodes;
    ListMasks masks;                    /* indexed by list start (every one below the extent) */
    const uint8_t *runs;                /* Runs: the letter runs words hold */
    const uint8_t *before;              /* Reach: letters a word has before a run, at most */
    const Anagrams *anagrams;           /* bingo words by their letters, or NULL */
    const Anagrams *short_words;        /* the shorter words by their letters, or NULL (laid.c) */
    const WordKeys *words;              /* every word's letters, or NULL (needs anagrams' codes) */
    uint32_t root;
    uint32_t gaddag;                    /* GADDAG root list, when the file has one that covers the DAWG; else 0 */
    const Rules *rules;
} Context;

/* The board as one pass sees it (prepare_pass; place_tiles keeps it up to date): the down
 * pass runs on the transposed board, so the search only knows "across". Arrays hold
 * rows * cols squares (anchors: rows); pass_copy copies just those (~6 KiB for 15x15). */
typedef struct {
    int rows, cols, dir;                /* oriented geometry; dir 1 = transposed */
    const uint8_t *lm, *wm;             /* the rules' premiums for this orientation */
    int empty_board;                    /* no tile yet: the centre is the one anchor */
    uint8_t cells[MAX_CELLS];
    uint64_t cross[MAX_CELLS];          /* rack letters the perpendicular word allows */
    int32_t cross_score[MAX_CELLS];     /* value of perpendicular tiles; -1 = none */
    uint8_t anchor[MAX_CELLS];
    uint32_t anchors[MAX_SIDE];         /* the same, a bit per column of each row */
} Pass;

/* Everything LeftPart/ExtendRight read and write, for one pass over one orientation: the
 * Generator's constant context, the board of this pass, and the state of this search
 * (the rack as it is spent, the left part, the bounds, where plays go, the clock). */
typedef struct {
    Context ctx;
    Pass pass;
    Bingos *bingos;                     /* shared by the two passes */
    RackParts *parts;                   /* shared too; NULL: the bounds take every part's leave */
    struct LayMasks *lay_masks;         /* shared too, when a rack with blanks is laid (laid.c) */
    SpanBounds *spans;                  /* shared too, with parts: where anchor_bound keeps spans */
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
    int failed;                         /* FAIL_MEMORY, FAIL_TIME or FOUND_ENOUGH: unwind */
    float extend_bound;                 /* best-first: bound of every play the extension under way can make */
    int halted;                         /* the floor has risen past extend_bound: unwind that extension */
    uint64_t steps;                     /* extend_right calls, for the clock */
    int has_deadline;
    struct timespec deadline;           /* CLOCK_MONOTONIC */
    float blank_leave[MAX_RACK + 1];    /* best_leave when a blank is among the tiles (-inf: no blank) */
    float blank_bound[MAX_RACK + 1];    /* left_bound and deeper_bound of plays putting down a blank */
    float deeper_blank[MAX_RACK + 2];
    float two_leave[MAX_RACK + 1];      /* best_leave when both of two blanks are among the tiles */
    float two_bound;                    /* this anchor's bound of plays putting down two blanks */
    int blanks_held;                    /* the rack's blanks when the search began */
} Search;

/* Whether some play bounded by `bound` whose order key is at least `first` could rank. */
static inline int could_rank(const MoveBuf *b, int by_equity, float bound, uint64_t first) {
    if (bound < b->known) return 0; /* a play known to exist is worth more */
    if (!b->has_floor) return 1;
    float floor = by_equity ? b->floor_equity : (float)b->floor_score;
    return bound > floor || (bound == floor && first < b->floor_order);
}

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

/* Every list the search reaches is the root, 0 (no list: children[0] is empty) or the arc of
 * a node in a list reached before, so the KWG check's walk visited it: it lies below the
 * Generator's `extent` and needs no test here. */
static inline uint64_t list_children(const Search *s, uint32_t list) {
    return mask_at(&s->ctx.masks.children, list);
}

/* The one child lookup: the index of the node for `tile` in the sibling list starting at
 * `list` whose tiles are `children`, for a tile known to be among them (the loops over
 * `children & allowed` call it): the list is sorted by tile, so it is `list` plus the
 * number of tiles below `tile`. */
static inline uint32_t child_at(uint32_t list, uint64_t children, unsigned tile) {
    return list + (uint32_t)__builtin_popcountll(children & (((uint64_t)1 << tile) - 1));
}

/* Which of those end a word there. */
static inline uint64_t list_accepts(const Search *s, uint32_t list) { return mask_at(&s->ctx.masks.accepts, list); }

/* Index of the node for `tile` in the sibling list starting at `list`, or 0. */
static inline uint32_t child_node(const Search *s, uint32_t list, unsigned tile) {
    uint64_t children = list_children(s, list);
    if (tile > MAX_LETTERS || !(children >> tile & 1u)) return 0;
    return child_at(list, children, tile);
}

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

static inline size_t anagram_slot(const Anagrams *a, uint64_t key) {
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & a->mask;
}

/* A key's place in the filter: most keys asked have no word (a blank tried as every
 * letter), and the filter (128 KiB) answers most of them without a probe of the slots
 * (2 MiB for TWL06), which seldom stay in a core's cache. */
#define ANAGRAM_FILTER_BITS 20
static inline uint64_t anagram_filter_bit(uint64_t key) { return (key * 0xD6E8FEB86659FD93ull) >> (64 - ANAGRAM_FILTER_BITS); }

static inline int anagram_has(const Anagrams *a, uint64_t key) {
    if (!key) key = 1; /* 0 marks an empty slot */
    if (a->filter) {
        const uint64_t bit = anagram_filter_bit(key);
        if (!(a->filter[bit >> 6] >> (bit & 63) & 1)) return 0;
    }
    for (size_t i = anagram_slot(a, key);; i = (i + 1) & a->mask) {
        if (a->slots[i] == key) return 1;
        if (!a->slots[i]) return 0;
    }
}

/* Whether some word's key may be `key` plus the codes of `blanks` (1 or 2) letters more:
 * no when no word is. A blocked Bloom filter (two bits of one 64-bit word a key, as
 * WordKeys) of every word's key less each of its letters and less each pair of them, built
 * with the set's filter (anagrams_filter): a blank tried as every letter costs 26 probes, two
 * blanks 351, and most keys a rack's blanks are tried with have no word at all. */
static inline uint64_t short_of_mask(const Anagrams *a, uint64_t key, int blanks, size_t *word) {
    const uint64_t h = (key + (uint64_t)blanks * 0x9E3779B97F4A7C15ull) * 0xD6E8FEB86659FD93ull;
    *word = (size_t)(h >> (64 - (a->short_bits - 6)));
    return ((uint64_t)1 << (h & 63)) | ((uint64_t)1 << (h >> 6 & 63));
}

static inline int anagram_short_of(const Anagrams *a, uint64_t key, int blanks) {
    if (!a->short_of) return 1;
    size_t word;
    const uint64_t m = short_of_mask(a, key, blanks, &word);
    return (a->short_of[word] & m) == m;
}

/* The first of the words under `key` (Anagrams: index + 1, chained by `next`), 0 when
 * there is none. */
static inline uint32_t anagram_words(const Anagrams *set, uint64_t key) {
    if (!key) key = 1;
    size_t slot = anagram_slot(set, key);
    while (set->slots[slot] && set->slots[slot] != key) slot = (slot + 1) & set->mask;
    return set->slots[slot] ? set->head[slot] : 0;
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

/* ------------------------------------------------------------------ Core */
/* The lexicon's graph and tables and the ruleset: everything a search reads of its
 * Generator, built once (generator.c, Generator_init) and constant after. */
typedef struct {
    const uint32_t *nodes;
    uint32_t n_nodes, extent;
    ListMasks masks;   /* extent + 1 entries each */
    uint8_t *runs;     /* the letter runs words hold (build_runs) */
    uint8_t *reach;    /* how far words reach beyond a run (build_reach), or NULL */
    Anagrams anagrams; /* bingo words by their letters (build_anagrams); no slots: none */
    Anagrams short_words; /* the shorter words by their letters (build_short_words); no slots: none */
    WordKeys words;    /* every word by its letters (build_anagrams); no bits: none */
    uint32_t gaddag;   /* the GADDAG's root list when it covers the DAWG (gaddag_covers), else 0 */
    Rules rules;
} Core;

/* What one search is asked for: Generator.generate's arguments, and the playouts'. */
typedef struct {
    int mode;       /* MODE_ACROSS | MODE_DOWN */
    long limit;     /* -1: every play; else the top N, best-first */
    int count_all;  /* with a limit, still search (and count) every play */
    const LeaveTable *leaves; /* NULL: rank by score */
    int has_deadline;
    struct timespec deadline; /* CLOCK_MONOTONIC */
    int prepared;   /* the passes already hold the board (prepare_pass for every letter) */
    const uint32_t *lines; /* best-first: for each pass, a bit for each row searched (NULL: all) */
} SearchArgs;


/* The larger of two bounds: never NaN (leave tables with one are refused), so a plain
 * comparison, which the compiler inlines where fmaxf would be a libm call. */
static inline float max_bound(float a, float b) { return a > b ? a : b; }

/* The rack's distinct tiles (blank 0 first): the digits of its sub-multisets. */
static __attribute__((unused)) int rack_distinct(const Rules *r, const uint8_t *rack, uint8_t tile[MAX_RACK]) {
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

/* The most letters a word can have before the run of board tiles starting at `idx` (a
 * square of row `row`), by its first 2..4 letters; MAX_SIDE when that is not known (no
 * reach table, or a lone tile). */
static inline int letters_before(const Search *s, int row, int idx) {
    const int end = (row + 1) * s->pass.cols;
    unsigned run[4];
    int n = 0;
    while (s->ctx.before && n < 4 && idx + n < end && s->pass.cells[idx + n]) run[n] = s->pass.cells[idx + n] & TILE_MASK, n++;
    return n < 2 ? MAX_SIDE : s->ctx.before[run_index(s->ctx.rules->alphabet, run, n)];
}

/* Empty squares left of an anchor that a left part from the rack may cover: up to the
 * nearest tile or anchor, and leaving at least one tile for the anchor. */
static inline int left_room(const Search *s, int row, int col) {
    int room = 0;
    for (int c = col - 1; c >= 0; c--) {
        int j = row * s->pass.cols + c;
        if (s->pass.cells[j] || s->pass.anchor[j]) break;
        room++;
    }
    if (room > s->rack_left - 1) room = s->rack_left - 1;
    /* tiles just right of the anchor: no word has more letters before their run than
     * letters_before says, the anchor's tile among them */
    if (col + 1 < s->pass.cols) {
        int most = letters_before(s, row, row * s->pass.cols + col + 1) - 1;
        if (room > most) room = most < 0 ? 0 : most;
    }
    return room;
}

/* Resize *array to cap elements of `size` bytes; -1 (array untouched) when memory is out. */
static inline int resize(void **array, size_t cap, size_t size) {
    void *grown = realloc(*array, cap * size);
    if (!grown) return -1;
    *array = grown;
    return 0;
}

/* ------------------------------------------------ what one unit calls in another */
/* tables.c: the lexicon's tables, built once per Generator */
int build_anagrams(const uint32_t *nodes, uint32_t extent, int a, int rack, Anagrams *out, WordKeys *keys);
int build_short_words(const uint32_t *nodes, uint32_t extent, int a, int most, Anagrams *out);
void anagram_codes(Anagrams *set, int a);
int anagrams_filter(Anagrams *a);

/* anagram_file.c: the bingo words as a file every worker maps */
uint64_t digest64(const uint8_t *p, size_t n);
uint64_t digest64_from(uint64_t seed, const uint8_t *p, size_t n);
/* The letter-run tables (build_runs, build_reach) as a file holds them: NULL, none. */
typedef struct {
    const uint8_t *runs, *reach;
} LetterTables;
size_t anagrams_file_size(const Anagrams *set, const Anagrams *short_set, const WordKeys *words,
                          const LetterTables *tables, int alphabet);
void anagrams_file_write(const Anagrams *set, const Anagrams *short_set, const WordKeys *words,
                         const LetterTables *tables, int alphabet, int rack, uint64_t kwg, int gaddag,
                         uint8_t *out);
int anagrams_trust(const uint8_t *buf, size_t len, int alphabet, int rack, uint64_t kwg, Anagrams *view,
                   Anagrams *short_view, WordKeys *view_words, LetterTables *tables, int *gaddag);
int anagrams_file_names(const uint8_t *buf, size_t len, uint64_t kwg);
enum { ANAGRAMS_ADOPTED, ANAGRAMS_OTHER_RULES, ANAGRAMS_REFUSED };
int anagrams_adopt(const uint8_t *buf, size_t len, int alphabet, int rack, uint64_t kwg, const Anagrams *built,
                   const WordKeys *built_words, Anagrams *view, WordKeys *view_words, const char **why);

int build_runs(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out);
int build_reach(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out);
/* Their sizes in bytes for an alphabet of `a` letters (reach: 0 past REACH_LETTERS). */
static inline size_t run_table_bytes(int a) { return (RUN_AT(a, 4) + (size_t)a * a * a * a + 7) / 8; }
static inline size_t reach_table_bytes(int a) {
    return a > REACH_LETTERS ? 0 : RUN_AT(a, 4) + (size_t)a * a * a * a;
}
int gaddag_covers(const uint32_t *nodes, uint32_t root, uint32_t gaddag, uint64_t budget);

/* board.c: a pass's board, prepared whole or a move at a time */
void prepare_pass(Search *s, const Rules *r, const uint8_t *board, int dir, uint64_t letters);
void place_tiles(Search *s, const Rules *r, const uint16_t *square, const uint8_t *cell, int count);
void pass_copy(Pass *to, const Pass *from);
int pass_equal(const Pass *a, const Pass *b);

/* bounds.c: what a search cannot beat, found before searching */
void bingos_init(Bingos *b, const Anagrams *set, const uint8_t *rack, const Rules *r);
void bingos_free(Bingos *b);
int rack_spells(const Search *s, uint64_t with);
int rack_parts_init(RackParts *p, const Rules *r, const uint8_t *rack, const LeaveTable *leaves);
float refine_bounds(Search *s, AnchorBounds *b, float threshold);
float anchor_bound(Search *s, int row, int anchor, AnchorBounds *b);
const RackPart *rack_parts(const Search *s, int k, int *n);

/* laid.c: an anchor's plays laid from words */
/* The letters a part's blanks can stand for, by the part's key (its letters and the span's
 * board letters, the blanks left out) and its blanks, remembered for a search (laid.c),
 * direct-mapped. */
#define LAY_MASK_BITS 9
typedef struct {
    uint64_t key;
    uint64_t mask; /* bit x: a letter the (first) blank can stand for */
    int blanks;    /* 0: an empty entry */
} LayMask;

typedef struct LayMasks {
    LayMask entry[1 << LAY_MASK_BITS];
    /* bit i of alone[k]: part i of k tiles (rack_parts' order) spells a word by itself, its
     * blanks as some letters; asked of every part of k tiles when alone_known[k] is 0 */
    uint64_t alone[PART_RACK + 1][(PART_MOST + 63) / 64];
    uint8_t alone_known[PART_RACK + 1];
} LayMasks;

int can_lay(const Search *s);
void lay_anchor(Search *s, const AnchorBounds *b);
int bingo_plays(Search *s, int row, int anchor, BingoPlay *out, int most);
void rack_bounds(const uint8_t *rack, const Rules *r, const LeaveTable *leaves, int32_t tile_desc[MAX_RACK], float best_leave[MAX_RACK + 1], float blank_leave[MAX_RACK + 1], float two_leave[MAX_RACK + 1]);

/* search.c: every play of a position, unranked */
int time_is_up(const struct timespec *deadline);
void emit_keyed(Search *s, int end_col, Tally t, uint64_t order);
void attach(Search *p, const Core *g);
int search_moves(const Core *g, const uint8_t *board, const uint8_t *rack, int rack_total, const SearchArgs *a, Search s[2], MoveBuf *buf);

/* rank.c: the move buffer, and the plays ranked */
int movebuf_init(MoveBuf *buf, long limit, int by_equity);
void movebuf_seed(MoveBuf *buf, const MoveRecord *m, float equity, uint64_t order);
void movebuf_free(MoveBuf *buf);
MoveRecord *rank_moves(const MoveBuf *buf, long limit, size_t *out_count);
MoveRecord *rank_ordered(const MoveBuf *buf, long limit, int by_equity, size_t *out_count, float **equities, uint64_t **orders);

#endif
