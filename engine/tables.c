/*
 * anchor.engine._movegen: The lexicon's tables, built once per Generator: bingo words by their letters, the
 * letter runs words hold and how far words reach before them, and the check that a
 * GADDAG covers the DAWG.
 */
#include "core.h"

/* Whether the GADDAG at `gaddag` holds the backwards path of every prefix of every word of
 * the DAWG at `root` (words of up to MAX_SIDE letters, which is all a board can hold). 0 too
 * when that takes more than `budget` steps: the GADDAG is then left unused. */
int gaddag_covers(const uint32_t *nodes, uint32_t root, uint32_t gaddag, uint64_t budget) {
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

/* The slot of `key`, added when new; -1 when memory is out. Keeps the set at most 3/4
 * full (TWL06's 138,625 keys: 2^18 slots, 3 MiB with their chain heads, where half full
 * took twice that), the words' chains moving with their keys. */
static long anagram_add(Anagrams *a, uint64_t key) {
    if (!key) key = 1;
    if (4 * (a->count + 1) > 3 * (a->mask + 1)) {
        size_t size = 2 * (a->mask + 1);
        uint64_t *old = a->slots, old_mask = a->mask;
        uint32_t *old_head = a->head;
        a->slots = calloc(size, sizeof *a->slots);
        a->head = calloc(size, sizeof *a->head);
        if (!a->slots || !a->head) {
            free(a->slots);
            free(a->head);
            a->slots = old;
            a->head = old_head;
            return -1;
        }
        a->mask = size - 1;
        a->count = 0;
        for (size_t i = 0; i <= old_mask; i++)
            if (old[i]) a->head[anagram_add(a, old[i])] = old_head[i];
        free(old);
        free(old_head);
    }
    size_t i = anagram_slot(a, key);
    while (a->slots[i] && a->slots[i] != key) i = (i + 1) & a->mask;
    if (!a->slots[i]) {
        a->slots[i] = key;
        a->count++;
    }
    return (long)i;
}

/* A word of `len` tiles, under `key`; -1 when memory is out. */
static int anagram_add_word(Anagrams *a, uint64_t key, const unsigned *tile, int len) {
    long slot = anagram_add(a, key);
    if (slot < 0) return -1;
    if (a->words == a->word_cap) {
        size_t cap = a->word_cap ? 2 * a->word_cap : 4096;
        if (resize((void **)&a->next, cap, sizeof *a->next) < 0 ||
            resize((void **)&a->start, cap, sizeof *a->start) < 0 ||
            resize((void **)&a->length, cap, sizeof *a->length) < 0)
            return -1;
        a->word_cap = cap;
    }
    if (a->tiles_used + (size_t)len > a->tile_cap) {
        size_t cap = a->tile_cap ? 2 * a->tile_cap : 65536;
        while (cap < a->tiles_used + (size_t)len) cap *= 2;
        if (resize((void **)&a->tiles, cap, 1) < 0) return -1;
        a->tile_cap = cap;
    }
    size_t w = a->words++;
    a->next[w] = a->head[slot];
    a->head[slot] = (uint32_t)(w + 1);
    a->start[w] = (uint32_t)a->tiles_used;
    a->length[w] = (uint8_t)len;
    for (int i = 0; i < len; i++) a->tiles[a->tiles_used++] = (uint8_t)tile[i];
    return 0;
}

/* Each key one or two letters short of `word`'s (its letters' codes summing to `key`), into
 * Anagrams.short_of; or, when `bits` is NULL, only counted. */
static size_t short_of_add(Anagrams *a, const uint8_t *word, int len, uint64_t *bits) {
    uint8_t count[MAX_LETTERS + 1] = {0}, letter[MAX_SIDE];
    uint64_t key = 0;
    int n = 0;
    for (int i = 0; i < len; i++) {
        key += a->code[word[i]];
        if (!count[word[i]]++) letter[n++] = word[i];
    }
    size_t added = 0;
    for (int i = 0; i < n; i++)
        for (int j = i - 1; j < n; j++) { /* j == i - 1: letter i alone */
            if (j == i && count[letter[i]] < 2) continue;
            const int blanks = j < i ? 1 : 2;
            const uint64_t short_key = key - a->code[letter[i]] - (j < i ? 0 : a->code[letter[j]]);
            added++;
            if (!bits) continue;
            size_t word;
            const uint64_t m = short_of_mask(a, short_key, blanks, &word);
            bits[word] |= m;
        }
    return added;
}

/* The keys one or two letters short of a word's (anagram_short_of): a bit array of at least
 * two bits a key (TWL06's bingo words: 5.3 M keys, some shared, in 2 MiB, 29% of its bits
 * set), none past SHORT_OF_BITS (a set too large goes without: each key is then
 * probed). Words longer than MAX_SIDE (a file's, checked before) are left out of it and of
 * the search alike. Kept as it is when it lies in a file. -1 when memory is out. */
static int anagrams_short_of(Anagrams *a) {
    if (a->short_borrowed) return 0;
    size_t keys = 0;
    for (size_t w = 0; w < a->words; w++)
        if (a->length[w] <= MAX_SIDE) keys += short_of_add(a, a->tiles + a->start[w], a->length[w], NULL);
    int bits = SHORT_OF_LEAST;
    while (bits < SHORT_OF_BITS && ((size_t)1 << bits) < 2 * keys) bits++;
    if (((size_t)1 << bits) < 2 * keys) {
        a->short_bits = -1; /* none: not counted again */
        return 0;
    }
    a->short_bits = bits;
    uint64_t *filter = calloc((size_t)1 << (bits - 6), sizeof *filter);
    if (!filter) return -1;
    for (size_t w = 0; w < a->words; w++)
        if (a->length[w] <= MAX_SIDE) short_of_add(a, a->tiles + a->start[w], a->length[w], filter);
    a->short_of = filter;
    return 0;
}

/* The set's filters (Anagrams.filter, from its slots, and Anagrams.short_of, from its
 * words), each unless it has it: -1 when memory is out. */
int anagrams_filter(Anagrams *a) {
    if (a->filter) return a->short_of || a->short_bits < 0 ? 0 : anagrams_short_of(a);
    a->filter = calloc((size_t)1 << (ANAGRAM_FILTER_BITS - 6), sizeof *a->filter);
    if (!a->filter) return -1;
    for (size_t i = 0; i <= a->mask; i++)
        if (a->slots[i]) {
            const uint64_t bit = anagram_filter_bit(a->slots[i]);
            a->filter[bit >> 6] |= (uint64_t)1 << (bit & 63);
        }
    return anagrams_short_of(a);
}

void anagrams_free(Anagrams *a) {
    free(a->filter);
    if (!a->short_borrowed) free(a->short_of);
    a->filter = NULL;
    a->short_of = NULL;
    if (a->borrowed) {
        memset(a, 0, sizeof *a);
        return;
    }
    free(a->slots);
    free(a->head);
    free(a->next);
    free(a->start);
    free(a->length);
    free(a->tiles);
    a->slots = NULL;
}

/* A letter's code for Anagrams keys: splitmix64 of the letter, fixed so that keys are
 * the same in every process. */
static uint64_t letter_code(unsigned letter) {
    uint64_t z = (letter + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The one depth-first walk of the DAWG's prefixes the table builders share: every path
 * from the root of up to MAX_SIDE letters (no board holds a longer word), parents before
 * children, calling visit(ctx, tile, len, node) with the prefix's tiles; a node whose tile
 * is not a letter of the alphabet is skipped with what lies below it. visit returns 0 to
 * go on, WALK_STOP to give up (no table) or -1 when memory is out; more than `budget`
 * steps also gives up. Returns 0 when every prefix was visited, else what stopped it.
 * Always inlined, so each builder's visit is a direct call the compiler inlines too. */
enum { WALK_STOP = 1 };
typedef int (*PrefixVisit)(void *ctx, const unsigned *tile, int len, uint32_t node);

HOT_INLINE int walk_prefixes(const uint32_t *nodes, int a, size_t budget, PrefixVisit visit, void *ctx) {
    uint32_t at[MAX_SIDE]; /* at[d]: the node of the prefix's letter d */
    unsigned tile[MAX_SIDE];
    int depth = 0;
    at[0] = kwg_arc(nodes[0]);
    if (!at[0]) return 0;
    for (;;) {
        if (budget-- == 0) return WALK_STOP;
        uint32_t node = nodes[at[depth]];
        tile[depth] = kwg_tile(node);
        int valid = tile[depth] >= 1 && tile[depth] <= (unsigned)a;
        if (valid) {
            int stop = visit(ctx, tile, depth + 1, node);
            if (stop) return stop;
        }
        if (valid && kwg_arc(node) && depth + 1 < MAX_SIDE) {
            at[++depth] = kwg_arc(node); /* down to the first letter after this prefix */
            continue;
        }
        /* on to the next letter at this depth, or back up to one that has a next */
        while (kwg_is_end(nodes[at[depth]])) {
            if (depth-- == 0) return 0;
        }
        at[depth]++;
    }
}

/* build_anagrams' walk: each prefix's key from its parent's, every word's key put in the
 * word-key filter, and a word of `rack` letters or more added to the set. */
typedef struct {
    Anagrams *set;
    WordKeys *keys;
    uint64_t key[MAX_SIDE + 1]; /* key[d]: the codes of the prefix's first d letters */
    int rack;
    size_t most;
} AnagramWalk;

static int anagram_visit(void *ctx, const unsigned *tile, int len, uint32_t node) {
    AnagramWalk *w = ctx;
    w->key[len] = w->key[len - 1] + w->set->code[tile[len - 1]];
    if (!kwg_accepts(node)) return 0;
    size_t word;
    const uint64_t m = word_key_mask(w->key[len], &word);
    w->keys->bits[word] |= m;
    if (len < w->rack) return 0;
    if (w->set->count >= w->most) return WALK_STOP;
    return anagram_add_word(w->set, w->key[len], tile, len) < 0 ? -1 : 0;
}

/* An empty set of `a` letters' keys, with its first slots: -1 when memory is out. */
static int anagrams_start(Anagrams *set, int a) {
    memset(set, 0, sizeof *set);
    anagram_codes(set, a);
    set->slots = calloc(1024, sizeof *set->slots);
    set->head = calloc(1024, sizeof *set->head);
    set->mask = 1023;
    return set->slots && set->head ? 0 : -1;
}

/* No slack past a built set's last word: each worker keeps these for its life. */
static void anagrams_trim(Anagrams *set) {
    if (!set->words) return;
    resize((void **)&set->next, set->words, sizeof *set->next);
    resize((void **)&set->start, set->words, sizeof *set->start);
    resize((void **)&set->length, set->words, sizeof *set->length);
    resize((void **)&set->tiles, set->tiles_used, 1);
}

/* build_short_words' walk below `list`, the prefix so far tile[0 .. depth-1] with codes
 * `key`: every word of 2 to `most` letters into `set`. */
static int short_words_below(const uint32_t *nodes, uint32_t list, int depth, int most, int a, unsigned *tile,
                             uint64_t key, Anagrams *set, size_t *budget) {
    for (uint32_t i = list;; i++) {
        if ((*budget)-- == 0) return WALK_STOP;
        const uint32_t node = nodes[i];
        const unsigned t = kwg_tile(node);
        if (t >= 1 && t <= (unsigned)a) {
            tile[depth] = t;
            const uint64_t with = key + set->code[t];
            if (kwg_accepts(node) && depth + 1 >= 2 && anagram_add_word(set, with, tile, depth + 1) < 0) return -1;
            if (kwg_arc(node) && depth + 1 < most) {
                const int stop = short_words_below(nodes, kwg_arc(node), depth + 1, most, a, tile, with, set, budget);
                if (stop) return stop;
            }
        }
        if (kwg_is_end(node)) return 0;
    }
}

/* The words of 2 to `most` letters by their letters, as Anagrams (the bingo set holds those
 * of a rack's length and more): what laid.c lays the shorter plays from. A graph that takes
 * more than RUN_STEPS steps a node to walk gets none. Returns -1 when memory is out. */
int build_short_words(const uint32_t *nodes, uint32_t extent, int a, int most, Anagrams *out) {
    memset(out, 0, sizeof *out);
    Anagrams set;
    if (anagrams_start(&set, a) < 0) {
        anagrams_free(&set);
        return -1;
    }
    unsigned tile[MAX_SIDE];
    size_t budget = RUN_STEPS * (size_t)extent;
    const uint32_t root = kwg_arc(nodes[0]);
    const int stop = root && most >= 2 ? short_words_below(nodes, root, 0, most, a, tile, 0, &set, &budget) : 0;
    if (stop) {
        anagrams_free(&set);
        return stop < 0 ? -1 : 0;
    }
    anagrams_trim(&set);
    *out = set;
    return anagrams_filter(out);
}

/* The letters' codes a set's keys sum (the same for every set: a file's keys are ours). */
void anagram_codes(Anagrams *set, int a) {
    for (int t = 0; t <= a; t++) set->code[t] = letter_code((unsigned)t);
}

/* Every word of `rack` to MAX_SIDE letters, by its letters (Anagrams), and every word of
 * the DAWG in the word-key filter (WordKeys), in one walk. A graph that takes more than
 * RUN_STEPS steps a node below its extent to walk, or holds more than ANAGRAM_KEYS keys a
 * node, gets neither (a made-up graph can hold far more words than nodes), and the search
 * then keeps the bingo and every part's leave in every bound. Returns -1 when memory is
 * out. */
int build_anagrams(const uint32_t *nodes, uint32_t extent, int a, int rack, Anagrams *out, WordKeys *keys) {
    memset(out, 0, sizeof *out);
    keys->bits = NULL;
    anagram_codes(out, a);
    Anagrams set;
    WordKeys filter = {calloc((size_t)1 << (WORD_KEY_BITS - 6), sizeof *filter.bits)};
    if (anagrams_start(&set, a) < 0 || !filter.bits) {
        anagrams_free(&set);
        free(filter.bits);
        return -1;
    }
    AnagramWalk w = {.set = &set, .keys = &filter, .rack = rack, .most = ANAGRAM_KEYS * (size_t)extent + 1024};
    int stop = walk_prefixes(nodes, a, RUN_STEPS * (size_t)extent, anagram_visit, &w);
    if (stop) {
        anagrams_free(&set);
        free(filter.bits);
        return stop < 0 ? -1 : 0;
    }
    *keys = filter;
    anagrams_trim(&set);
    *out = set;
    return 0;
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
int build_runs(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out) {
    size_t budget = RUN_STEPS * (size_t)extent;
    uint8_t *runs = calloc(run_table_bytes(a), 1);
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

/* build_reach's walk: for each run of 2..4 letters ending a prefix, the letters before it. */
typedef struct {
    uint8_t *before;
    int a;
} ReachWalk;

static int reach_visit(void *ctx, const unsigned *tile, int len, uint32_t node) {
    (void)node;
    ReachWalk *w = ctx;
    for (int n = 2; n <= 4 && n <= len; n++) { /* the letters above are valid */
        size_t g = run_index(w->a, tile + len - n, n);
        if (w->before[g] < len - n) w->before[g] = (uint8_t)(len - n);
    }
    return 0;
}

/* The most letters any word of up to MAX_SIDE letters has before each run of 2..4 letters
 * (indexed as in build_runs; 0 where no such word holds it): a play's main word holds the
 * runs of the board tiles in it, so no more of its letters than that can stand before
 * them. Read off every path of the DAWG from the root, one step per prefix; longer words
 * fit on no board. Only for alphabets of up to REACH_LETTERS letters (English 464 KiB);
 * a graph with more than RUN_STEPS prefixes a node, or out of room, gets no table (NULL),
 * and the search no such cap. Returns -1 when memory is out. */
int build_reach(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out) {
    *out = NULL;
    if (a > REACH_LETTERS) return 0;
    uint8_t *before = calloc(reach_table_bytes(a), 1);
    if (!before) return -1;
    ReachWalk w = {before, a};
    if (walk_prefixes(nodes, a, RUN_STEPS * (size_t)extent, reach_visit, &w)) {
        free(before);
        return 0;
    }
    *out = before;
    return 0;
}
