/*
 * anchor.engine._movegen: shadow bounds. The most any play at an anchor can score (or be
 * worth, by equity), by the length of its left part, without searching it: the best
 * tiles of the rack on the best squares of each span, a span that needs the whole rack
 * only when its letters spell a word (bingos by their letters), and the best leave each
 * number of tiles can keep. The search orders anchors by them and skips what cannot rank.
 */
#include "core.h"

/* What rack_spells needs of the rack: its key, and whether it can be asked at all. */
void bingos_init(Bingos *b, const Anagrams *set, const uint8_t *rack, const Rules *r) {
    int tiles = 0;
    b->key = 0;
    b->alone = 0;
    b->pairs = -1;
    b->pair_key = NULL;
    b->pair_as = NULL;
    for (int i = 0; i < BINGO_ANSWERS; i++) b->asked[i].known = 0; /* the rest is written when asked */
    for (int t = 0; t <= r->alphabet; t++) {
        tiles += rack[t];
        if (t && set) b->key += rack[t] * set->code[t];
    }
    b->checked = set != NULL && tiles == r->rack_size && rack[0] <= 2;
}

void bingos_free(Bingos *b) {
    free(b->pair_key);
    b->pair_key = NULL;
    b->pair_as = NULL;
}

/* Whether the whole rack, with board letters whose codes sum to `with`, spells some word:
 * each blank tried as every letter (two blanks: every pair, 351 keys, most of them turned
 * away by the anagram set's filter without a probe). Yes when the rack is not checked
 * (Bingos.checked). */
int rack_spells(const Search *s, uint64_t with) {
    const Bingos *b = s->bingos;
    const Anagrams *set = s->ctx.anagrams;
    const int alphabet = s->ctx.rules->alphabet, blanks = s->rack[0];
    if (!b->checked) return 1;
    const uint64_t key = b->key + with;
    if (blanks == 0) return anagram_has(set, key);
    if (!anagram_short_of(set, key, blanks)) return 0;
    for (int x = 1; x <= alphabet; x++) {
        if (blanks == 1) {
            if (anagram_has(set, key + set->code[x])) return 1;
            continue;
        }
        if (!anagram_short_of(set, key + set->code[x], 1)) continue;
        for (int y = x; y <= alphabet; y++)
            if (anagram_has(set, key + set->code[x] + set->code[y])) return 1;
    }
    return 0;
}

/* The letters x a blank can stand for in a bingo with board letters `with`: with one blank,
 * those that spell a word; with two, those that do with some second letter y >= x, each
 * such pair x <= y kept in pair[*pairs], unless there are more than MANY_PAIRS: then *many
 * is set and the letters found so far are returned (the search stops there: such a span
 * keeps its optimistic bound until its anchor comes up, and refine_bounds lays every pair;
 * see best_bingo). */
static uint64_t blank_letters(const Search *s, uint64_t with, int *many, uint8_t *pairs, uint8_t (*pair)[2]) {
    const Anagrams *set = s->ctx.anagrams;
    const uint64_t key = s->bingos->key + with;
    const int alphabet = s->ctx.rules->alphabet;
    uint64_t letters = 0;
    *many = 0;
    *pairs = 0;
    if (!anagram_short_of(set, key, s->rack[0])) return 0;
    for (int x = 1; x <= alphabet; x++) {
        if (s->rack[0] == 1) {
            if (anagram_has(set, key + set->code[x])) letters |= (uint64_t)1 << x;
            continue;
        }
        if (!anagram_short_of(set, key + set->code[x], 1)) continue;
        for (int y = x; y <= alphabet; y++)
            if (anagram_has(set, key + set->code[x] + set->code[y])) {
                letters |= (uint64_t)1 << x;
                if (*pairs == MANY_PAIRS) {
                    *many = 1;
                    return letters;
                }
                pair[*pairs][0] = (uint8_t)x;
                pair[(*pairs)++][1] = (uint8_t)y;
            }
    }
    return letters;
}

/* The answer remembered for board letters `with` (rack_spells; with blanks, the letters
 * the first can stand for (blank_letters), so that the bingos are laid only for those). */
static int bingo_answer(Search *s, uint64_t with) {
    Bingos *b = s->bingos;
    int i = (int)((with * 0x9E3779B97F4A7C15ull) >> (64 - BINGO_ANSWER_BITS));
    if (!b->asked[i].known || b->asked[i].with != with) {
        int many = 0;
        b->asked[i].pairs = 0;
        const uint64_t letters = s->rack[0] ? blank_letters(s, with, &many, &b->asked[i].pairs, b->asked[i].pair) : 0;
        b->asked[i].with = with;
        b->asked[i].known = 1;
        b->asked[i].many = (int8_t)many;
        b->asked[i].letters = letters;
        b->asked[i].spells = (int8_t)(s->rack[0] ? letters != 0 : rack_spells(s, with));
    }
    return i;
}

/* rack_spells, remembered for the search. By score, two blanks with board letters are
 * taken to spell one (they nearly always do, and by score nothing else is asked of them:
 * the letter pairs would cost more than the spans they drop). */
static int spells_bingo(Search *s, uint64_t with, int board_tiles) {
    Bingos *b = s->bingos;
    if (!board_tiles) return b->alone;
    if (!b->checked || (s->rack[0] >= 2 && !s->leaves)) return 1;
    return b->asked[bingo_answer(s, with)].spells;
}

/* The parts of `rack` (counts) for refine_leave, listed when first asked about; -1, and
 * none, when the rack has more than PART_RACK tiles (its bounds then keep every part's
 * leave). A part with a blank counts as spelling a word; those keeping the blanks, whose
 * leaves are the best, are asked of the filter like any other. */
int rack_parts_init(RackParts *p, const Rules *r, const uint8_t *rack, const LeaveTable *leaves) {
    int tiles = 0;
    for (int t = 0; t <= r->alphabet; t++) tiles += rack[t];
    if (tiles > PART_RACK) return -1;
    p->ready = 0;
    p->rack = rack;
    p->leaves = leaves;
    return 0;
}

/* Every part of the rack (rack_parts_init) by size, counted like an odometer over its
 * distinct tiles (tile[d] taken 0 to rack[tile[d]] times), each step updating the part's
 * size, leave key and letter codes rather than summing them again. */
static void rack_parts_list(RackParts *p, const Rules *r, const uint64_t *code, const int with_tiles) {
    const LeaveTable *leaves = p->leaves;
    memset(p->n, 0, sizeof p->n);
    memset(p->sorted, 0, sizeof p->sorted);
    for (int i = 0; i < 1 << PART_ANSWER_BITS; i++) p->asked[i].k = -1;
    uint8_t tile[MAX_RACK], used[MAX_RACK] = {0}, by_value[MAX_RACK];
    const int distinct = rack_distinct(r, p->rack, tile);
    for (int d = 0; d < distinct && with_tiles; d++) { /* the distinct tiles' places, highest value first */
        int j = d;
        for (; j > 0 && r->values[tile[by_value[j - 1]]] < r->values[tile[d]]; j--) by_value[j] = by_value[j - 1];
        by_value[j] = (uint8_t)d;
    }
    int k = 0;
    size_t key = 0;
    uint64_t codes = 0;
    for (;;) {
        const int blanks = tile[0] == 0 ? used[0] : 0;
        uint64_t tiles = 0; /* lowest first, so that the highest ends in the low byte */
        if (with_tiles)
            for (int i = distinct - 1; i >= 0; i--)
                for (int u = 0; u < used[by_value[i]]; u++) tiles = tiles << 8 | tile[by_value[i]];
        p->part[k][p->n[k]++] = (RackPart){codes, tiles, key < leaves->keys ? leaves->value[key] : 0.0f, blanks}; /* the leave as emit() reads it */
        int d = 0;
        for (; d < distinct && used[d] == p->rack[tile[d]]; d++) { /* back to none of tile[d] */
            k -= used[d];
            key -= (size_t)used[d] * leaves->key_step[tile[d]];
            codes -= used[d] * code[tile[d]];
            used[d] = 0;
        }
        if (d == distinct) break;
        used[d]++;
        k++;
        key += leaves->key_step[tile[d]];
        codes += code[tile[d]];
    }
    p->ready = 1;
}

/* The parts of k tiles, best leave first. */
static void parts_sort(RackParts *p, int k) {
    RackPart *a = p->part[k];
    for (int i = 1; i < p->n[k]; i++) {
        const RackPart x = a[i];
        int j = i;
        for (; j > 0 && a[j - 1].leave < x.leave; j--) a[j] = a[j - 1];
        a[j] = x;
    }
    p->sorted[k] = 1;
}

/* refine_leave when the answer is not remembered: the parts of k tiles, best leave first,
 * until one spells a word with the board letters (one with a blank counts as one). */
static __attribute__((noinline)) float refine_leave_ask(const Search *s, uint64_t with, int k, int slot) {
    RackParts *p = s->parts;
    const WordKeys *words = s->ctx.words;
    if (!p->ready) rack_parts_list(p, s->ctx.rules, s->ctx.anagrams->code, s->lay_masks != NULL);
    if (!p->sorted[k]) parts_sort(p, k);
    float v = -INFINITY;
    for (const RackPart *a = p->part[k], *end = a + p->n[k]; a < end; a++)
        if (a->blank || word_keys_has(words, a->codes + with)) {
            v = a->leave;
            break;
        }
    p->asked[slot].with = with;
    p->asked[slot].k = k;
    p->asked[slot].leave = v;
    return v;
}

/* The best leave of the plays putting down k rack tiles whose main word has board letters
 * with codes `with`: the tiles with those letters spell a word, so the part they are is
 * one whose letters do (by the word-key filter); -inf when no part of k tiles does. */
static inline float refine_leave(const Search *s, uint64_t with, int k) {
    RackParts *p = s->parts;
    const int slot = (int)(((with + (uint64_t)k) * 0x9E3779B97F4A7C15ull) >> (64 - PART_ANSWER_BITS));
    if (p->ready && p->asked[slot].k == k && p->asked[slot].with == with) return p->asked[slot].leave;
    return refine_leave_ask(s, with, k, slot);
}

/* The rack's parts of k tiles, best leave first (listed and sorted when first asked). */
const RackPart *rack_parts(const Search *s, int k, int *n) {
    RackParts *p = s->parts;
    if (!p->ready) rack_parts_list(p, s->ctx.rules, s->ctx.anagrams->code, 1);
    if (!p->sorted[k]) parts_sort(p, k);
    *n = p->n[k];
    return p->part[k];
}

/* A square a play may fill, as the shadow bound sees it. */
typedef struct {
    int32_t lm, wm;
    int32_t cross;     /* cross_score * wm: the cross-word's board tiles, when there is one */
    int32_t has_cross; /* 1 when a cross-word forms there */
} Square;

static inline Square square_at(const Search *s, int idx) {
    int has = s->pass.cross_score[idx] >= 0;
    return (Square){s->pass.lm[idx], s->pass.wm[idx], has ? s->pass.cross_score[idx] * s->pass.wm[idx] : 0, has};
}

/* Squares a play fills, grown one at a time (the longer spans of a shadow bound extend the
 * shorter): each square weighs its tile by letter premium times the word premium, plus
 * letter times word premium again when it makes a cross-word. A square with a word premium
 * changes every weight; any other only adds its own. The rack's highest tiles on the
 * heaviest squares (`dot`) are kept as weights come in: a weight inserted at j moves those
 * below it one tile down, each changing the sum by its weight times the step between the
 * two tiles' values (mostly none: a rack's tiles share few values). */
typedef struct {
    const Square *sq; /* sq[0 .. k-1] */
    const int32_t *tile; /* the rack's tile values, highest first (Search.tile_desc) */
    int k;
    int32_t mult, cross;
    int32_t dot; /* sum of weight[i] * tile[i], i < k */
    int32_t weight[MAX_RACK]; /* heaviest first */
} Span;

static inline void span_weigh(Span *p, int i) {
    const Square *q = &p->sq[i];
    int32_t w = q->lm * (p->mult + q->has_cross * q->wm);
    int j = i;
    for (; j > 0 && p->weight[j - 1] < w; j--) {
        p->weight[j] = p->weight[j - 1];
        p->dot += p->weight[j] * (p->tile[j] - p->tile[j - 1]);
    }
    p->weight[j] = w;
    p->dot += w * p->tile[j];
}

/* Adds square sq[k]. */
static inline void span_grow(Span *p) {
    const Square *q = &p->sq[p->k++];
    p->cross += q->cross;
    if (q->wm == 1) {
        span_weigh(p, p->k - 1);
    } else {
        p->mult *= q->wm;
        p->dot = 0;
        for (int i = 0; i < p->k; i++) span_weigh(p, i);
    }
}

/* Fills the span with its first k squares at once (one weighing, whatever the premiums). */
static inline void span_fill(Span *p, int k) {
    for (int i = 0; i < k; i++) {
        p->mult *= p->sq[i].wm;
        p->cross += p->sq[i].cross;
    }
    p->dot = 0;
    for (int i = 0; i < k; i++) span_weigh(p, i);
    p->k = k;
}

/* The most a play filling exactly the span's k squares could score (or be worth), with
 * `board_sum` points of board tiles in its main word: the rack's highest tiles on the
 * heaviest squares (rearrangement inequality) bound every assignment, whatever the lexicon
 * allows. *with_blank: the same bound for the plays among them that put down a blank;
 * *with_two, those that put down two. Inlined into both of shadow's versions: called out
 * of line, once a span, it cost JOSH2's best play 11 k instructions of 320 k. */
static inline __attribute__((always_inline)) float span_bound(const Search *s, const Span *p, int32_t board_sum,
                                                              int32_t bingo, float *with_blank, float *with_two,
                                                              int32_t *points) {
    const int k = p->k;
    int32_t score = board_sum * p->mult + p->cross + p->dot;
    if (k == s->ctx.rules->rack_size) score += bingo;
    *points = score;
    /* with a blank among the tiles: the k - 1 best others, the blank on the lightest square */
    if (with_blank) *with_blank = (float)(score - p->weight[k - 1] * s->tile_desc[k - 1]) + s->blank_leave[k];
    /* with two: the k - 2 best others, the blanks on the two lightest */
    if (with_two)
        *with_two = k < 2 ? -INFINITY
                          : (float)(score - p->weight[k - 1] * s->tile_desc[k - 1] - p->weight[k - 2] * s->tile_desc[k - 2]) +
                                s->two_leave[k];
    return (float)score + s->best_leave[k]; /* the best leave of k tiles played */
}

/* The letters a rack's blanks stand for in a bingo, x <= y (0: no such blank). */
typedef struct {
    unsigned x, y;
} BlankAs;

/* Whether the `len` letters of `word` lie on the pass's squares from `at` on: each board
 * letter where the word has it, each rack letter where its square's cross-set allows it,
 * the rack's tiles exactly, its blanks as the letters `as` gives. */
static int word_fits(const Search *s, const uint8_t *word, int len, int at, BlankAs as) {
    uint8_t want[MAX_LETTERS + 1];
    memcpy(want, s->rack, sizeof want);
    want[0] = 0;
    want[as.x] += as.x != 0; /* the blanks, as their letters */
    want[as.y] += as.y != 0;
    for (int i = 0; i < len; i++) {
        const uint8_t cell = s->pass.cells[at + i];
        const unsigned x = word[i];
        if (cell ? (cell & TILE_MASK) != x : !want[x]-- || !(s->pass.cross[at + i] >> x & 1)) return 0;
    }
    return 1;
}

/* ExtendRight's running score when `word` (len letters, word_fits) ends on the pass's
 * squares from `at` on: board tiles at their value, each rack tile at its square's
 * premiums, the blanks (if any) on squares `blank[0]` and `blank[1]` (-1: none) worth
 * nothing. */
static Tally bingo_tally(const Search *s, const uint8_t *word, int len, int at, const int8_t blank[2]) {
    const Rules *r = s->ctx.rules;
    Tally t = {0, 1, 0, r->rack_size};
    for (int i = 0; i < len; i++) {
        const uint8_t cell = s->pass.cells[at + i];
        if (cell) {
            t.main += tile_points(r, cell);
            continue;
        }
        const int32_t wm = s->pass.wm[at + i], cs = s->pass.cross_score[at + i];
        const int32_t points = (i == blank[0] || i == blank[1] ? 0 : r->values[word[i]]) * s->pass.lm[at + i];
        t.main += points;
        t.mult *= wm;
        if (cs >= 0) t.cross += (cs + points) * wm;
    }
    return t;
}

/* Where in `word` (laid from `at`) the empty squares of letter x lie. */
static int letter_squares(const Search *s, const uint8_t *word, int len, int at, unsigned x, int8_t *out) {
    int n = 0;
    for (int i = 0; i < len; i++)
        if (!s->pass.cells[at + i] && word[i] == x) out[n++] = (int8_t)i;
    return n;
}

/* Every way the blanks (`as`) can lie on a fitting word's squares, as ways[i] = {the
 * first's square, the second's} (-1: no such blank): each on every square of its letter,
 * two of one letter on every pair of its squares (the rack's own tiles of that letter take
 * the rest). Returns the count, 1 (no blank anywhere) without blanks. */
static int blank_ways(const Search *s, const uint8_t *word, int len, int at, BlankAs as, int8_t ways[][2]) {
    int8_t xs[MAX_SIDE], ys[MAX_SIDE];
    int nx = 1, ny = 1, n = 0;
    xs[0] = ys[0] = -1;
    if (as.x) nx = letter_squares(s, word, len, at, as.x, xs);
    if (as.y) ny = letter_squares(s, word, len, at, as.y, ys);
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++)
            if (!as.y || as.y != as.x || ys[j] > xs[i]) {
                ways[n][0] = xs[i];
                ways[n++][1] = ys[j];
            }
    return n;
}

/* The most ways blank_ways can give: a blank on each of a rack's tiles' squares, times the
 * second's. */
#define BLANK_WAYS (MAX_RACK * MAX_RACK)

/* The best score of the bingos under `key` placed on columns [start, end) of `row` (as
 * many empty squares as the rack has tiles, the others holding board tiles), the blanks
 * standing for `as`, or -1 when none fits (word_fits): every square the blanks can take
 * tried. Scored as extend_right scores a play. */
static int32_t place_bingos(const Search *s, uint64_t key, int row, int start, int end, BlankAs as) {
    const Anagrams *set = s->ctx.anagrams;
    const int at = row * s->pass.cols + start, len = end - start;
    int32_t best = -1;
    for (uint32_t w = anagram_words(set, key); w; w = set->next[w - 1]) {
        const uint8_t *word = set->tiles + set->start[w - 1];
        if (set->length[w - 1] != len || !word_fits(s, word, len, at, as)) continue;
        int8_t ways[BLANK_WAYS][2];
        const int n = blank_ways(s, word, len, at, as, ways);
        for (int i = 0; i < n; i++) {
            const Tally t = bingo_tally(s, word, len, at, ways[i]);
            const int32_t score = t.main * t.mult + t.cross + s->ctx.rules->bingo;
            if (score > best) best = score;
        }
    }
    return best;
}

/* The keys of the bingos the rack may make with board letters whose codes sum to `with`,
 * each with the letters its blanks stand for (BLANK_KEYS at most): without a blank the
 * rack's own key; with blanks those the remembered answer holds (one: each letter that
 * spells; two: each pair kept). -1 when they are not known (no anagram set, a rack that is
 * not whole), -2 when two blanks make words with more than MANY_PAIRS pairs (an open lane,
 * where laying every bingo of every anchor costs more than the walk finding the best:
 * only_pairs lays them for the anchors that come up). */
#define BLANK_KEYS (MAX_LETTERS > MANY_PAIRS ? MAX_LETTERS : MANY_PAIRS)
static int bingo_keys(Search *s, uint64_t with, uint64_t key[BLANK_KEYS], BlankAs as[BLANK_KEYS]) {
    const Bingos *b = s->bingos;
    const Anagrams *set = s->ctx.anagrams;
    if (!set || !b->checked) return -1;
    const uint64_t base = b->key + with;
    if (!s->rack[0]) {
        key[0] = base;
        as[0] = (BlankAs){0, 0};
        return 1;
    }
    const int answer = bingo_answer(s, with);
    if (b->asked[answer].many) return -2;
    int n = 0;
    if (s->rack[0] == 2) {
        for (; n < b->asked[answer].pairs; n++) {
            const unsigned x = b->asked[answer].pair[n][0], y = b->asked[answer].pair[n][1];
            key[n] = base + set->code[x] + set->code[y];
            as[n] = (BlankAs){x, y};
        }
        return n;
    }
    for (uint64_t x = b->asked[answer].letters; x; x &= x - 1, n++) {
        const unsigned t = (unsigned)__builtin_ctzll(x);
        key[n] = base + set->code[t];
        as[n] = (BlankAs){t, 0};
    }
    return n;
}

/* The best bingo that fits columns [start, end) of `row`, the span holding board letters
 * whose codes sum to `with`: -1 when none does; -2 when it is not known, -3 when there are
 * too many letter pairs to lay now (bingo_keys). */
static int32_t best_bingo(Search *s, int row, int start, int end, uint64_t with) {
    uint64_t key[BLANK_KEYS];
    BlankAs as[BLANK_KEYS];
    const int n = bingo_keys(s, with, key, as);
    if (n < 0) return n - 1;
    int32_t best = -1;
    for (int i = 0; i < n; i++) {
        const int32_t got = place_bingos(s, key[i], row, start, end, as[i]);
        if (got > best) best = got;
    }
    return best;
}

/* Every letter pair x <= y for a rack's two blanks whose bingo key, with board letters
 * `with`, the anagram set holds, in the order blank_letters tries them (Bingos.pair_key and
 * pair_as, remembered for the last `with` asked): the count, or -1 when memory is out. */
static int all_pairs(Search *s, uint64_t with) {
    Bingos *b = s->bingos;
    if (b->pairs >= 0 && b->pairs_with == with) return b->pairs;
    if (!b->pair_key) {
        void *room = malloc(BINGO_PAIRS * (sizeof *b->pair_key + sizeof *b->pair_as));
        if (!room) return -1;
        b->pair_key = room;
        b->pair_as = (uint8_t (*)[2])(b->pair_key + BINGO_PAIRS);
    }
    const Anagrams *set = s->ctx.anagrams;
    const uint64_t base = b->key + with;
    const int alphabet = s->ctx.rules->alphabet;
    int n = 0;
    for (int x = 1; x <= alphabet; x++) {
        if (!anagram_short_of(set, base + set->code[x], 1)) continue;
        for (int y = x; y <= alphabet; y++) {
            const uint64_t k = base + set->code[x] + set->code[y];
            if (anagram_has(set, k)) {
                b->pair_key[n] = k;
                b->pair_as[n][0] = (uint8_t)x;
                b->pair_as[n++][1] = (uint8_t)y;
            }
        }
    }
    b->pairs_with = with;
    return b->pairs = n;
}

/* Columns [*start, end) of the span of l rack tiles left of anchor b and k in all (as
 * shadow walks them: the empty squares from the anchor on, then the board tiles just after
 * the last); returns end. */
static int span_end(const Search *s, const AnchorBounds *b, int l, int k, int *start) {
    const int base = b->row * s->pass.cols, cols = s->pass.cols;
    int left_len = 0;
    if (!b->room)
        while (left_len < b->col && s->pass.cells[base + b->col - 1 - left_len]) left_len++;
    *start = b->col - l - left_len;
    int c = b->col, r = k - l;
    for (; c < cols; c++)
        if (!s->pass.cells[base + c] && r-- == 0) break;
    return c;
}

/* The best bingo of a span whose two blanks' letter pairs were too many to lay when its
 * anchor was bounded (SpanBound.pairs): every pair laid now. -1 when none fits, -2 when
 * memory is out (the span keeps its bound). */
static int32_t pair_bingos(Search *s, const AnchorBounds *b, const SpanBound *p) {
    int start;
    const int end = span_end(s, b, p->l, p->k, &start);
    const int n = all_pairs(s, p->with);
    if (n < 0) return -2;
    const Bingos *pairs = s->bingos;
    int32_t best = -1;
    for (int i = 0; i < n; i++) {
        const BlankAs as = {pairs->pair_as[i][0], pairs->pair_as[i][1]};
        const int32_t got = place_bingos(s, pairs->pair_key[i], b->row, start, end, as);
        if (got > best) best = got;
    }
    return best;
}

/* Shadow bound (MAGPIE's "shadow playing"): the span bound above, taken over every span of
 * squares a play at this anchor could cover. Every term of it grows with the span, so for
 * each length l of the left part only the longest span counts: l squares left of the
 * anchor, then rightwards until the rack is spent or a square bars every rack tile (with
 * the board tiles just after the last one). b->any[l] bounds the plays whose left part has
 * l tiles from the rack (index 0 only when the left part is on the board), b->blank[l] those
 * of them with a blank, b->two_blanks every play with two; returns the largest, -INFINITY
 * when no play fits. Made twice, for racks with two blanks (`pair`) and the rest, so that
 * the rest pay nothing per span for the bound of two. */
static inline __attribute__((always_inline)) float shadow(Search *s, int row, int anchor, AnchorBounds *b,
                                                          const int pair) {
    const int base = row * s->pass.cols;
    const uint64_t can = playable(s);
    int32_t on_left = 0; /* points of a left part already on the board */
    int left_len = 0, room = 0;
    const Anagrams *set = s->ctx.anagrams;
    uint64_t left_codes = 0; /* the letters of a left part already on the board */
    if (anchor > 0 && s->pass.cells[base + anchor - 1]) {
        for (int c = anchor - 1; c >= 0 && s->pass.cells[base + c]; c--, left_len++) {
            on_left += tile_points(s->ctx.rules, s->pass.cells[base + c]);
            if (set) left_codes += set->code[s->pass.cells[base + c] & TILE_MASK];
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
    int empty_col[MAX_RACK + 1]; /* the column of each empty square the span reaches */
    /* of the first r empty squares, those only a blank can fill (no rack letter fits the
     * cross-set: the squares left of the anchor have none): a span with more of them than
     * the rack has blanks holds no play, and one with any holds only plays with a blank */
    int blank_only[MAX_RACK + 1];
    const uint64_t letters = s->rack_mask & every_letter(s->ctx.rules);
    int right = 0, tiles = 0, most_left = MAX_SIDE;
    int32_t points = 0;
    uint64_t codes = left_codes;
    for (int c = anchor; c < s->pass.cols; c++) {
        int idx = base + c;
        if (s->pass.cells[idx]) {
            points += tile_points(s->ctx.rules, s->pass.cells[idx]);
            tiles++;
            if (set) codes += set->code[s->pass.cells[idx] & TILE_MASK];
            if (s->ctx.before && !s->pass.cells[idx - 1]) { /* a run of tiles starts here */
                int most = letters_before(s, row, idx) - left_len - (c - anchor);
                if (most < most_left) most_left = most;
            }
            continue;
        }
        board_upto[right] = points;
        tiles_upto[right] = tiles;
        left_upto[right] = most_left;
        codes_upto[right] = codes;
        if (right == s->rack_left || !(s->pass.cross[idx] & can)) break;
        empty_col[right] = c;
        blank_only[right + 1] = (right ? blank_only[right] : 0) + !(s->pass.cross[idx] & letters);
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
    b->bingo = b->other = b->fixed_other = b->two_blanks = -INFINITY;
    b->lanes = 0;
    SpanBounds *kept = s->spans;
    b->first = kept ? kept->count : 0;
    b->room = room;
    b->row = (int16_t)row;
    b->col = (int16_t)anchor;
    for (int l = 0; l <= room; l++) {
        int most = s->rack_left - l < right ? s->rack_left - l : right;
        b->any[l] = b->blank[l] = b->fixed[l] = b->whole[l] = -INFINITY;
        /* spans of l left squares and r right ones. By score the longest that can hold a
         * play bounds the shorter ones; by equity each length has its own best leave (and
         * only the rack's length its bingo): every r, shortest first, each growing the last */
        /* a span taking the whole rack holds a play only when some word has exactly the
         * rack's letters and the span's board letters (spells_bingo): else it is skipped */
#define HOLDS_NO_PLAY(r)                                                                                   \
    (left_len + l + (r) + tiles_upto[r] < 2 || l > left_upto[r] ||                                        \
     (l + (r) == s->ctx.rules->rack_size && !spells_bingo(s, codes_upto[r], left_len + tiles_upto[r])))
        int r = s->leaves ? 1 : most;
        while (!s->leaves && r >= 1 && HOLDS_NO_PLAY(r)) r--;
        if (r < 1) continue;
        Span span; /* weights written as the squares come: not zeroed */
        span.sq = line + MAX_RACK - l;
        span.tile = s->tile_desc;
        span.mult = 1;
        span.cross = 0;
        span_fill(&span, s->leaves ? l : l + r);
        for (; r >= 1 && r <= most; r++) {
            if (s->leaves) span_grow(&span);
            if (s->leaves && (blank_only[r] > s->rack[0] || HOLDS_NO_PLAY(r))) continue;
#undef HOLDS_NO_PLAY
            float blank = -INFINITY, two = -INFINITY;
            int32_t bingo = l + r == s->ctx.rules->rack_size ? s->ctx.rules->bingo : 0;
            int32_t points;
            float any = span_bound(s, &span, on_left + board_upto[r], bingo, s->rack[0] ? &blank : NULL,
                                   pair ? &two : NULL, &points);
            if (s->leaves && blank_only[r]) { /* by equity only: by score one span stands for the shorter */
                any = blank;
                points -= span.weight[span.k - 1] * s->tile_desc[span.k - 1];
            }
            int exact = 0, pairs = 0; /* the span's bound is its best bingo; its pairs are left to refine_bounds */
            if (bingo && s->leaves) {
                /* the span takes the whole rack: its plays are the bingos that fit it, so
                 * its bound is the best of them, exactly (each puts down the blank, when
                 * the rack has one) */
                int end = empty_col[r - 1] + 1;
                while (end < s->pass.cols && s->pass.cells[base + end]) end++;
                int32_t best = best_bingo(s, row, anchor - l - left_len, end, codes_upto[r]);
                if (best == -1) continue;
                pairs = best == -3;
                b->lanes |= pairs;
                if (best >= 0) {
                    any = (float)best + s->best_leave[l + r];
                    blank = s->rack[0] ? any : -INFINITY;
                    two = pair ? any : -INFINITY;
                    b->bingo = max_bound(b->bingo, any);
                    exact = 1;
                }
            }
            if (kept && !exact && (pairs || (!blank_only[r] && l + r >= PART_LEAST))) {
                if (kept->count < kept->capacity)
                    kept->items[kept->count++] = (SpanBound){codes_upto[r], points, (uint8_t)l, (uint8_t)(l + r), (uint8_t)pairs,
                                                             (uint8_t)(blank_only[r] != 0)};
                else
                    kept = NULL; /* no room left: this anchor keeps none */
            } else {
                b->fixed[l] = max_bound(b->fixed[l], any);
                if (!exact) b->fixed_other = max_bound(b->fixed_other, any);
            }
            if (!exact) b->other = max_bound(b->other, any);
            if (l + r == s->ctx.rules->rack_size) b->whole[l] = any;
            b->any[l] = max_bound(b->any[l], any);
            b->blank[l] = max_bound(b->blank[l], blank);
            if (pair) b->two_blanks = max_bound(b->two_blanks, two);
            if (!s->leaves) break;
        }
        if (b->any[l] > top) top = b->any[l];
    }
    b->spans = kept ? kept->count - b->first : 0;
    if (!kept && s->spans) s->spans->count = b->first;
    return top;
}

float anchor_bound(Search *s, int row, int anchor, AnchorBounds *b) {
    return s->rack[0] >= 2 ? shadow(s, row, anchor, b, 1) : shadow(s, row, anchor, b, 0);
}

/* A kept span's bound as shadow took it: its points and the best leave of its k tiles (of
 * those with a blank, where only a blank fits some square), summed as span_bound sums them. */
static inline float span_any(const Search *s, const SpanBound *p) {
    return (float)p->points + (p->blank ? s->blank_leave[p->k] : s->best_leave[p->k]);
}

/* An anchor's bounds again from its kept spans (anchor_bound), each that could beat
 * `threshold` keeping only the leaves of the rack's parts that spell a word there
 * (refine_leave): the k tiles a play puts down spell its main word with the span's board
 * letters, so the part they are is such a part, and a span with none holds no play. (A span
 * needing a blank has only parts with one, which count as spelling one.) The bounds of
 * plays with a blank only come down to the new ones. Returns the anchor's new bound. */
float refine_bounds(Search *s, AnchorBounds *b, float threshold) {
    float any[MAX_RACK + 1];
    for (int l = 0; l <= b->room; l++) any[l] = b->fixed[l];
    b->other = b->fixed_other;
    const int size = s->ctx.rules->rack_size;
    float top = -INFINITY;
    /* the spans whose bingos are laid now (SpanBound.pairs), highest bound first: one whose
     * bound is below a bingo laid already cannot raise the anchor's, and keeps it */
    const SpanBound *pairs[MAX_RACK + 1];
    int n = 0;
    for (const SpanBound *p = s->spans->items + b->first, *end = p + b->spans; p < end; p++) {
        float v = span_any(s, p);
        if (p->pairs && n <= MAX_RACK) {
            int j = n++;
            for (; j > 0 && span_any(s, pairs[j - 1]) < v; j--) pairs[j] = pairs[j - 1];
            pairs[j] = p;
            continue;
        }
        if (v > threshold && !p->blank) {
            const float leave = refine_leave(s, p->with, p->k);
            if (leave == -INFINITY) continue;
            if (leave < s->best_leave[p->k]) v = (float)p->points + leave;
        }
        b->other = max_bound(b->other, v);
        any[p->l] = max_bound(any[p->l], v);
        if (p->k == size) b->whole[p->l] = v;
    }
    for (int i = 0; i < n; i++) {
        const SpanBound *p = pairs[i];
        float v = span_any(s, p);
        if (v > threshold && v >= b->bingo) { /* its bingos, exactly: none is another play */
            const int32_t best = pair_bingos(s, b, p);
            if (best == -1) continue;
            if (best < 0) { /* not laid: as it was */
                b->other = max_bound(b->other, v);
                any[p->l] = max_bound(any[p->l], v);
                continue;
            }
            v = (float)best + s->best_leave[p->k];
            b->bingo = max_bound(b->bingo, v);
        } else {
            b->other = max_bound(b->other, v);
        }
        any[p->l] = max_bound(any[p->l], v);
        b->whole[p->l] = v;
    }
    for (int l = 0; l <= b->room; l++) {
        b->any[l] = any[l];
        if (b->blank[l] > any[l]) b->blank[l] = any[l];
        top = max_bound(top, any[l]);
    }
    if (b->two_blanks > top) b->two_blanks = top;
    return top;
}

/* Every way the words under `key` (the rack's letters, its blanks as the letters `as` gives,
 * and the span's board letters) lie on columns [start, end) of `row`, anchor `anchor`:
 * each board letter where the word has it, each rack letter where its square's cross-set
 * allows it, the rack's tiles exactly, and the blanks on every square (blank_ways) in turn.
 * Appends to out[*n]; -1 when more than `most`. */
static int lay_bingos(const Search *s, uint64_t key, int row, int start, int end, int anchor, BlankAs as,
                      BingoPlay *out, int *n, int most) {
    const Anagrams *set = s->ctx.anagrams;
    const int base = row * s->pass.cols, at = base + start, len = end - start;
    for (uint32_t w = anagram_words(set, key); w; w = set->next[w - 1]) {
        const uint8_t *word = set->tiles + set->start[w - 1];
        if (set->length[w - 1] != len || !word_fits(s, word, len, at, as)) continue;
        int8_t ways[BLANK_WAYS][2];
        const int count = blank_ways(s, word, len, at, as, ways);
        for (int b = 0; b < count; b++) {
            if (*n == most) return -1;
            BingoPlay *p = &out[(*n)++];
            int k = 0, left = 0;
            for (int i = 0; i < len; i++) {
                if (s->pass.cells[at + i]) continue;
                p->tile[k++] = (uint8_t)(i == ways[b][0] || i == ways[b][1] ? (word[i] | BLANK_FLAG) : word[i]);
                left += start + i < anchor;
            }
            p->start = start;
            p->end = end;
            p->left = left;
            p->t = bingo_tally(s, word, len, at, ways[b]);
        }
    }
    return 0;
}

/* Every bingo at this anchor (the plays bingo spans hold, as anchor_bound finds the spans),
 * each laid from the words of the rack's letters, its blanks as the letters bingo_keys
 * gives (or, past MANY_PAIRS, all_pairs): the count, or -1 when that is not known
 * (bingo_keys) or there are more than `most`. */
int bingo_plays(Search *s, int row, int anchor, BingoPlay *out, int most) {
    const Bingos *b = s->bingos;
    const Anagrams *set = s->ctx.anagrams;
    if (!set || !b->checked) return -1;
    const int base = row * s->pass.cols, size = s->ctx.rules->rack_size, cols = s->pass.cols;
    int left_len = 0, room = 0;
    if (anchor > 0 && s->pass.cells[base + anchor - 1])
        while (left_len < anchor && s->pass.cells[base + anchor - 1 - left_len]) left_len++;
    else
        room = left_room(s, row, anchor);
    const uint64_t can = playable(s);
    int empty[MAX_RACK], right = 0;
    for (int c = anchor; c < cols && right < size; c++) {
        if (s->pass.cells[base + c]) continue;
        if (!(s->pass.cross[base + c] & can)) break;
        empty[right++] = c;
    }
    int n = 0;
    for (int l = 0; l <= room; l++) {
        const int r = size - l;
        if (r < 1 || r > right) continue;
        const int start = anchor - l - left_len;
        int end = empty[r - 1] + 1;
        while (end < cols && s->pass.cells[base + end]) end++;
        uint64_t with = 0;
        for (int c = start; c < end; c++)
            if (s->pass.cells[base + c]) with += set->code[s->pass.cells[base + c] & TILE_MASK];
        uint64_t key[BLANK_KEYS];
        BlankAs as[BLANK_KEYS];
        const int keys = bingo_keys(s, with, key, as);
        if (keys == -2) { /* too many pairs to keep: every one */
            const int pairs = all_pairs(s, with);
            if (pairs < 0) return -1;
            for (int i = 0; i < pairs; i++) {
                const BlankAs two = {b->pair_as[i][0], b->pair_as[i][1]};
                if (lay_bingos(s, b->pair_key[i], row, start, end, anchor, two, out, &n, most) < 0) return -1;
            }
            continue;
        }
        if (keys < 0) return -1;
        for (int i = 0; i < keys; i++)
            if (lay_bingos(s, key[i], row, start, end, anchor, as[i], out, &n, most) < 0) return -1;
    }
    return n;
}

/* What the bounds need from the rack: its tile values, highest first (blanks 0), and, when
 * ranking by equity, the best leave value left after playing k tiles, over every part of
 * the rack of size k, keyed exactly as emit() keys it; blank_leave the same over the
 * parts with a blank, two_leave over those with two (by score 0, and -inf for every k on
 * a rack without them). */
void rack_bounds(const uint8_t *rack, const Rules *r, const LeaveTable *leaves,
                        int32_t tile_desc[MAX_RACK], float best_leave[MAX_RACK + 1],
                        float blank_leave[MAX_RACK + 1], float two_leave[MAX_RACK + 1]) {
    int n = 0;
    for (int t = 0; t <= r->alphabet; t++)
        for (int c = 0; c < rack[t] && n < MAX_RACK; c++) {
            int32_t v = r->values[t];
            int j = n++;
            for (; j > 0 && tile_desc[j - 1] < v; j--) tile_desc[j] = tile_desc[j - 1];
            tile_desc[j] = v;
        }
    for (int k = 0; k <= MAX_RACK; k++) {
        blank_leave[k] = rack[0] && k ? 0.0f : -INFINITY;
        two_leave[k] = rack[0] >= 2 && k >= 2 ? 0.0f : -INFINITY;
    }
    if (!leaves) return;
    if (leaves->best) { /* the table's walk kept the best and the blank's: two blanks need a walk here */
        memcpy(best_leave, leaves->best, (MAX_RACK + 1) * sizeof *best_leave);
        memcpy(blank_leave, leaves->best_blank, (MAX_RACK + 1) * sizeof *blank_leave);
        if (rack[0] < 2) return;
    } else {
        for (int k = 0; k <= MAX_RACK; k++) best_leave[k] = blank_leave[k] = -INFINITY;
    }
    for (int k = 0; k <= MAX_RACK; k++) two_leave[k] = -INFINITY;
    uint8_t tile[MAX_RACK], used[MAX_RACK] = {0};
    int distinct = rack_distinct(r, rack, tile);
    do { /* every sub-multiset of the rack, the empty one first */
        int k;
        size_t key = subrack_key(used, tile, distinct, leaves->key_step, &k);
        float v = key < leaves->keys ? leaves->value[key] : 0.0f;
        if (k > MAX_RACK) continue;
        const int blanks = tile[0] == 0 ? used[0] : 0;
        if (!leaves->best) {
            if (v > best_leave[k]) best_leave[k] = v;
            if (blanks && v > blank_leave[k]) blank_leave[k] = v;
        }
        if (blanks >= 2 && v > two_leave[k]) two_leave[k] = v;
    } while (next_subrack(used, tile, distinct, rack));
}
