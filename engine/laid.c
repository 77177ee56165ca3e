/*
 * anchor.engine._movegen: an anchor's plays laid from words (MAGPIE's word map, our way).
 * By equity, searching best-first, a rack with a blank makes the prefix walk try every
 * letter the blank can be at every step, and most of those prefixes lead nowhere. Here
 * each span of the anchor (l squares left of it from the rack, then r empty squares from
 * it rightwards, with the board tiles among and just after them) takes the rack's parts of
 * l + r tiles, best leave first, each bounded by its own tiles on the span's heaviest
 * squares and its own leave; the words of a part that could rank (its letters, each blank
 * as every letter, and the span's board letters, by the Anagrams key) are laid on the span:
 * board letters where they stand, each rack letter where its square's cross-set allows
 * it, a blank on each square its letter takes. These are exactly the plays the walk finds
 * at the anchor that could rank, and each carries the key of the walk's order (lay_key),
 * so ties rank as they did.
 */
#include "core.h"

/* A square of a span. */
typedef struct {
    int32_t lm, wm, cross_score; /* cross_score -1: no cross-word */
    int col, left;               /* left of the anchor (the left part's squares) */
} LaySquare;

/* A span of the anchor, as lay_part reads it. */
typedef struct {
    LaySquare sq[MAX_RACK]; /* its empty squares, left to right */
    int k, l;               /* squares, of them left of the anchor */
    int start, end;         /* the main word's columns [start, end) */
    int32_t board;          /* the board tiles' points in the main word */
    uint64_t with;          /* their letters' codes */
    int letters;            /* the main word's length */
    int32_t fixed;          /* what every play here scores besides its tiles' values */
    int32_t weight[MAX_RACK]; /* its squares' weights, heaviest first (as anchor_bound weighs them) */
} LaySpan;

/* A tile's digit in the walk's order: left of the anchor the rack's letters, then the blank
 * as each letter (the prefix tree's order); from the anchor on each letter and then the
 * blank as it (ExtendRight's). 0 is the mark between the two sides, and the end. */
static inline unsigned lay_digit(uint8_t tile, int left, int alphabet) {
    const unsigned letter = tile & TILE_MASK, blank = (tile & BLANK_FLAG) != 0;
    return left ? 1u + letter + blank * (unsigned)alphabet : 2u * letter + 1u + blank;
}

/* The order the walk finds an anchor's plays in, as a number: the left tiles from the
 * leftmost, the mark, then the right tiles, a digit each (lay_digit), then zeros. A shorter
 * left part comes before those extending it, and a word before those extending it. */
static inline uint64_t lay_key(const uint8_t *tile, int left, int k, int alphabet) {
    uint64_t key = 0;
    for (int i = 0, slot = 0; slot < LAY_DIGITS; slot++) {
        unsigned digit = 0;
        if (slot != left && i < k) {
            digit = lay_digit(tile[i], i < left, alphabet);
            i++;
        }
        key = key << LAY_DIGIT_BITS | digit;
    }
    return key;
}

/* A play laid: the span's squares take `letter`, those marked in `blank` as blanks. */
static void lay_play(Search *s, const LaySpan *p, const uint8_t *letter, unsigned blank) {
    const Rules *r = s->ctx.rules;
    Tally t = {p->board, 1, 0, p->k};
    uint8_t tile[MAX_RACK];
    for (int i = 0; i < p->k; i++) {
        const LaySquare *q = &p->sq[i];
        const int is_blank = blank >> i & 1;
        const int32_t points = is_blank ? 0 : r->values[letter[i]] * q->lm;
        tile[i] = (uint8_t)(letter[i] | (is_blank ? BLANK_FLAG : 0));
        t.main += points;
        t.mult *= q->wm;
        if (!q->left && q->cross_score >= 0) t.cross += (q->cross_score + points) * q->wm;
        s->placed[q->col] = tile[i];
    }
    s->start_col = p->start;
    emit_keyed(s, p->end, t, s->order_base | lay_key(tile, p->l, p->k, r->alphabet));
    for (int i = 0; i < p->k; i++) s->placed[p->sq[i].col] = 0;
}

/* The words under `key` of span p's length laid on it: the rack tiles exactly those of
 * `count` (by letter) and `blanks` blanks as the letters `as` (x <= y). Each set of squares
 * the blanks can take is a play of its own. */
static void lay_words(Search *s, const LaySpan *p, const Anagrams *set, uint64_t key, const uint8_t *count,
                      int blanks, const unsigned *as) {
    const Rules *r = s->ctx.rules;
    const int base = s->row * s->pass.cols, k = p->k;
    for (uint32_t w = anagram_words(set, key); w && !s->failed; w = set->next[w - 1]) {
        if (set->length[w - 1] != p->letters) continue;
        const uint8_t *word = set->tiles + set->start[w - 1];
        uint8_t letter[MAX_RACK];
        int fits = 1, j = 0;
        for (int c = p->start; c < p->end && fits; c++) {
            const uint8_t cell = s->pass.cells[base + c];
            const unsigned x = word[c - p->start];
            if (cell)
                fits = (cell & TILE_MASK) == x;
            else if (j < k)
                fits = x <= (unsigned)r->alphabet && (p->sq[j].left || (s->pass.cross[base + c] >> x & 1)),
                letter[j++] = (uint8_t)x;
            else
                fits = 0;
        }
        if (!fits || j != k) continue;
        /* the word's letters on the squares are the part's and the blanks' (keys can be
         * shared by other letters) */
        uint8_t have[MAX_LETTERS + 1];
        for (int i = 0; i < k; i++) have[letter[i]] = 0;
        for (int b = 0; b < blanks; b++) have[as[b]] = 0;
        for (int i = 0; i < k; i++) have[letter[i]]++;
        int same = 1;
        for (int b = 0; b < blanks && same; b++) same = have[as[b]]-- > 0;
        for (int i = 0; i < k && same; i++) same = have[letter[i]] == count[letter[i]];
        if (!same) continue;
        if (blanks == 0) {
            lay_play(s, p, letter, 0);
        } else if (blanks == 1) {
            for (int i = 0; i < k && !s->failed; i++)
                if (letter[i] == as[0]) lay_play(s, p, letter, 1u << i);
        } else {
            for (int i = 0; i < k && !s->failed; i++)
                for (int m = i + 1; m < k && !s->failed; m++)
                    if ((letter[i] == as[0] && letter[m] == as[1]) || (letter[i] == as[1] && letter[m] == as[0]))
                        lay_play(s, p, letter, 1u << i | 1u << m);
        }
    }
}

/* The letters x (bit x) the first blank of `blanks` can stand for in some word of `set`
 * whose letters are `key`'s and the blanks' (two blanks: with some second letter y >= x),
 * remembered for the search (LayMasks). */
static uint64_t blank_mask(Search *s, const Anagrams *set, uint64_t key, int blanks) {
    uint64_t h = key ^ (uint64_t)blanks << 62; /* the keys share low bits: mixed first (murmur's finaliser) */
    h = (h ^ h >> 33) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    LayMask *m = &s->lay_masks->entry[(size_t)(h >> (64 - LAY_MASK_BITS))];
    if (m->blanks == blanks && m->key == key) return m->mask;
    const unsigned alphabet = (unsigned)s->ctx.rules->alphabet;
    uint64_t mask = 0;
    const unsigned last = anagram_short_of(set, key, blanks) ? alphabet : 0;
    for (unsigned x = 1; x <= last; x++) {
        if (blanks == 1) {
            if (anagram_has(set, key + set->code[x])) mask |= (uint64_t)1 << x;
            continue;
        }
        if (!anagram_short_of(set, key + set->code[x], 1)) continue;
        for (unsigned y = x; y <= alphabet; y++)
            if (anagram_has(set, key + set->code[x] + set->code[y])) {
                mask |= (uint64_t)1 << x;
                break;
            }
    }
    m->key = key;
    m->blanks = blanks;
    m->mask = mask;
    return mask;
}

/* The plays of one part (a RackPart of span p's size) that could rank. */
static void lay_part(Search *s, const LaySpan *p, const RackPart *a) {
    const Rules *r = s->ctx.rules;
    const Anagrams *set = p->letters >= r->rack_size ? s->ctx.anagrams : s->ctx.short_words;
    const uint64_t key = a->codes + p->with - (uint64_t)a->blank * set->code[0];
    uint64_t letters = 0; /* the blanks' first letters with words (blank_mask) */
    if (a->blank == 0 ? !anagram_has(set, key) : !(letters = blank_mask(s, set, key, a->blank))) return;
    uint8_t count[MAX_LETTERS + 1];
    memset(count, 0, (size_t)r->alphabet + 1);
    uint64_t tiles = a->tiles;
    for (int i = 0; i < p->k; i++, tiles >>= 8) count[tiles & 0xFF]++;
    count[0] = 0;
    unsigned as[2] = {0, 0};
    if (a->blank == 0) {
        lay_words(s, p, set, key, count, 0, as);
        return;
    }
    for (; letters && !s->failed; letters &= letters - 1) {
        as[0] = (unsigned)__builtin_ctzll(letters);
        if (a->blank == 1) {
            lay_words(s, p, set, key + set->code[as[0]], count, 1, as);
            continue;
        }
        for (unsigned y = as[0]; y <= (unsigned)r->alphabet && !s->failed; y++) {
            as[1] = y;
            const uint64_t both = key + set->code[as[0]] + set->code[y];
            if (anagram_has(set, both)) lay_words(s, p, set, both, count, 2, as);
        }
    }
}

/* Which parts of k tiles spell a word by themselves (LayMasks.alone), asked once a search
 * (a part with a blank is taken to: its letters are looked up when it is laid): a span
 * with no board letter in its word holds no play of any other part. */
static const uint64_t *parts_alone(Search *s, int k, const RackPart *part, int n) {
    LayMasks *m = s->lay_masks;
    if (!m->alone_known[k]) {
        const Anagrams *set = k >= s->ctx.rules->rack_size ? s->ctx.anagrams : s->ctx.short_words;
        memset(m->alone[k], 0, sizeof m->alone[k]);
        for (int i = 0; i < n; i++) {
            const RackPart *a = &part[i];
            const uint64_t key = a->codes - (uint64_t)a->blank * set->code[0];
            if (a->blank || anagram_has(set, key)) /* one with a blank: looked up when laid */
                m->alone[k][i / 64] |= (uint64_t)1 << (i % 64);
        }
        m->alone_known[k] = 1;
    }
    return m->alone[k];
}

/* Whether the anchors of this search can be laid (lay_anchor): by equity, best-first, the
 * rack's parts listed (PART_RACK), a key's digits for every tile (LAY_DIGITS), both word
 * sets at hand. */
int can_lay(const Search *s) { /* lay_masks: only for a rack with a blank (search_moves) */
    return s->prune && s->leaves && s->parts && s->lay_masks && s->ctx.anagrams && s->ctx.short_words &&
           s->ctx.short_words->slots && s->rack_left < LAY_DIGITS && 2 * s->ctx.rules->alphabet + 2 < (1 << LAY_DIGIT_BITS) &&
           s->rack[0] <= 2;
}

/* Every play at the anchor of bounds b that could rank, laid from the words (can_lay must
 * hold): what search_anchor would find there, each with the key of the walk's order. */
void lay_anchor(Search *s, const AnchorBounds *b) {
    const Rules *r = s->ctx.rules;
    const int row = b->row, col = b->col;
    if (s->has_deadline && time_is_up(&s->deadline)) { /* the walk's clock is in ExtendRight */
        s->failed = FAIL_TIME;
        return;
    }
    const int cols = s->pass.cols, base = row * cols;
    MoveBuf *out = s->out;
    s->row = row;
    s->anchor_col = col;
    s->order_base = (uint64_t)(s->pass.dir * MAX_CELLS + base + col) << ORDER_ANCHOR_SHIFT;
    s->left_len = 0;
    s->extend_bound = INFINITY; /* no play stops the others */
    memset(s->placed, 0, sizeof s->placed);
    const uint64_t *code = s->ctx.anagrams->code, can = playable(s);
    int left_len = 0, room = 0;
    int32_t on_left = 0;
    uint64_t left_codes = 0;
    if (col > 0 && s->pass.cells[base + col - 1]) {
        for (int c = col - 1; c >= 0 && s->pass.cells[base + c]; c--, left_len++) {
            on_left += tile_points(r, s->pass.cells[base + c]);
            left_codes += code[s->pass.cells[base + c] & TILE_MASK];
        }
    } else {
        room = left_room(s, row, col);
    }
    for (int l = 0; l <= room && !s->failed; l++) {
        LaySpan p;
        p.l = l;
        int n = 0;
        for (int c = col - l; c < col; c++, n++)
            p.sq[n] = (LaySquare){s->pass.lm[base + c], s->pass.wm[base + c], s->pass.cross_score[base + c], c, 1};
        int32_t board = on_left;
        uint64_t with = left_codes;
        int tiles = left_len, c = col;
        for (int rr = 1; l + rr <= s->rack_left && !s->failed; rr++) {
            /* the next empty square, and the board tiles up to it */
            for (; c < cols && s->pass.cells[base + c]; c++) {
                board += tile_points(r, s->pass.cells[base + c]);
                with += code[s->pass.cells[base + c] & TILE_MASK];
                tiles++;
            }
            if (c >= cols || !(s->pass.cross[base + c] & can)) break;
            p.sq[n++] = (LaySquare){s->pass.lm[base + c], s->pass.wm[base + c], s->pass.cross_score[base + c], c, 0};
            c++;
            /* the span ends here: the board tiles just after it are in its word */
            p.board = board;
            p.with = with;
            int end = c, after = 0;
            for (; end < cols && s->pass.cells[base + end]; end++) {
                p.board += tile_points(r, s->pass.cells[base + end]);
                p.with += code[s->pass.cells[base + end] & TILE_MASK];
                after++;
            }
            p.k = n;
            p.start = col - l - left_len;
            p.end = end;
            p.letters = n + tiles + after;
            if (p.letters < 2) continue;
            int32_t mult = 1, cross = 0;
            for (int i = 0; i < n; i++) {
                mult *= p.sq[i].wm;
                if (!p.sq[i].left && p.sq[i].cross_score >= 0) cross += p.sq[i].cross_score * p.sq[i].wm;
            }
            for (int i = 0; i < n; i++) {
                const LaySquare *q = &p.sq[i];
                const int32_t w = q->lm * (mult + (!q->left && q->cross_score >= 0 ? q->wm : 0));
                int j = i;
                for (; j > 0 && p.weight[j - 1] < w; j--) p.weight[j] = p.weight[j - 1];
                p.weight[j] = w;
            }
            p.fixed = p.board * mult + cross + (n == r->rack_size ? r->bingo : 0);
            /* the whole rack's plays: the anchor's bound of them, its bingos laid exactly */
            if (n == r->rack_size && !could_rank(out, 1, b->whole[l], s->order_base)) {
                out->pruned = 1;
                continue;
            }
            int32_t most = p.fixed; /* the rack's best tiles here: every part's points at most */
            for (int i = 0; i < n; i++) most += p.weight[i] * s->tile_desc[i];
            int parts;
            const RackPart *a = rack_parts(s, n, &parts);
            const uint64_t *alone = p.letters == n ? parts_alone(s, n, a, parts) : NULL;
            for (const RackPart *first = a, *end_part = a + parts; a < end_part && !s->failed; a++) {
                if (!could_rank(out, 1, (float)most + a->leave, s->order_base)) {
                    out->pruned = 1; /* nor any part after it: their leaves are no better */
                    break;
                }
                const int i = (int)(a - first);
                if (alone && !(alone[i / 64] >> (i % 64) & 1)) continue; /* its letters alone make no word */
                int32_t points = p.fixed;
                uint64_t t = a->tiles;
                for (int j = 0; j < n; j++, t >>= 8) points += p.weight[j] * r->values[t & 0xFF];
                if (!could_rank(out, 1, (float)points + a->leave, s->order_base)) {
                    out->pruned = 1;
                    continue;
                }
                lay_part(s, &p, a);
            }
        }
    }
    memset(s->placed, 0, sizeof s->placed);
}

