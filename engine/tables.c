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
int build_anagrams(const uint32_t *nodes, uint32_t extent, int a, int rack, Anagrams *out) {
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
int build_reach(const uint32_t *nodes, uint32_t extent, int a, uint8_t **out) {
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
