/*
 * The bingo words (Anagrams, core.h) as a file beside the lexicon, `NAME.kwg.anagrams`, so
 * that every worker of a machine maps one copy instead of building its own (~3 MiB for
 * TWL06). `anchor lexicon install` writes it (Lexicon.save); Lexicon.open maps it when it is
 * there, and a Generator uses it only when it holds exactly the set the Generator builds
 * from its own lexicon and rack size: a file from another lexicon, another rack size or
 * another version of Anchor is refused, whatever its header says.
 *
 * The file also holds the word-key filter of the bounds (WordKeys, core.h: every word of
 * the lexicon, of any length, by its letters), which is checked and shared the same way,
 * and the set's keys one or two letters short of a word (Anagrams.short_of), which take
 * 0.08 s to build for TWL06 and are taken from a trusted file as they are.
 *
 * A file written for exactly the KWG a Generator opens (its digest in the header), whose
 * own digest holds and whose tables are sound (every index in range, every chain going
 * back, a free slot to end each probe), is taken as it is: the Generator then neither
 * builds the set nor checks that the GADDAG covers the DAWG (the header says whether it
 * does), 0.08 s of every start on TWL06, nor the letter-run tables (build_runs,
 * build_reach: 0.02 s, 0.5 MiB a process), which follow the words. Any other file is
 * compared with the set built, the tables built.
 *
 * Layout, native byte order (a host of the other order reads a bad version and refuses):
 *   0   char[8]  "ANCHBNGO"
 *   8   uint32   version (ANAGRAM_FILE_VERSION; 4 is read too)
 *   12  uint32   alphabet: letters of the ruleset
 *   16  uint32   rack size: the shortest word held
 *   20  uint32   MAX_SIDE: the longest word held
 *   24  uint64   slots (a power of two: mask + 1)
 *   32  uint64   keys (slots in use)
 *   40  uint64   words
 *   48  uint64   tiles (the words' letters, all told)
 *   56  uint64   word-key words: the filter's 64-bit words (2^(WORD_KEY_BITS-6), or 0: none)
 *   64  uint64   the KWG's digest (digest64 of its bytes)
 *   72  uint64   the file's digest (file_digest: every byte, this field taken as 0)
 *   80  uint32   flags: ANAGRAM_GADDAG_COVERS when the KWG's GADDAG covers its DAWG;
 *                ANAGRAM_RUNS, ANAGRAM_REACH when the tables follow the tiles
 *   84  uint32   short-of bits: log2 of Anagrams.short_of's bits (0: none)
 *   88  uint64   0
 *   96  ...      word keys: uint64[word-key words], short of: uint64[2^(short-of bits - 6)],
 *                slots: uint64[slots],
 *                head: uint32[slots], next: uint32[words], start: uint32[words],
 *                length: uint8[words], tiles: uint8[tiles],
 *                with ANAGRAM_SHORT_WORDS the shorter words (build_short_words: those of 2 to
 *                rack size - 1 letters, what laid.c lays shorter plays from) as a second set:
 *                zeros to the next multiple of 8, a 40-byte header (uint64 slots, keys, words,
 *                tiles; uint32 short-of bits; uint32 0), then short of, slots, head, next,
 *                start, length, tiles as above,
 *                runs: uint8[run_table_bytes] (ANAGRAM_RUNS), reach: uint8[reach_table_bytes]
 *                (ANAGRAM_REACH), their sizes the alphabet's (tables.c)
 * The arrays follow one another with no padding but that one (each begins on a multiple of
 * its size: the headers are 96 and 40 bytes and `slots` a power of two of at least 1024).
 * Version 5 added the shorter words (ANAGRAM_SHORT_WORDS); a version-4 file (written
 * before, without them) is read all the same, its shorter words then built at start (45 M
 * instructions on TWL06), and an Anchor of version 4 refuses a version-5 file by its
 * version rather than calling it damaged. Versions 1 to 3 are refused like any other
 * format.
 */
#include "core.h"

#define ANAGRAM_MAGIC "ANCHBNGO"
enum { ANAGRAM_FILE_VERSION = 5, ANAGRAM_HEADER = 96 };
enum { ANAGRAM_FILE_READ_SINCE = 4 }; /* version 4: no shorter words */
enum { ANAGRAM_GADDAG_COVERS = 1, ANAGRAM_RUNS = 2, ANAGRAM_REACH = 4, ANAGRAM_SHORT_WORDS = 8 };
enum { SHORT_HEADER = 40 };

static const char OTHER_RULES[] = "written for another rack size";
static const char OTHER_LEXICON[] = "built from another lexicon";
/* a file that names this KWG (its digest) yet holds other words: a bit flipped, or written over */
static const char DAMAGED[] = "damaged (it names this lexicon, but its words are not this lexicon's)";
typedef struct {
    char magic[8];
    uint32_t version, alphabet, rack, max_side;
    uint64_t slots, keys, words, tiles, word_keys;
    uint64_t kwg_digest, file_digest;
    uint32_t flags, short_bits;
    uint64_t reserved;
} AnagramHeader;
_Static_assert(sizeof(AnagramHeader) == ANAGRAM_HEADER, "the header is 96 bytes");

/* The shorter words' header (ANAGRAM_SHORT_WORDS). */
typedef struct {
    uint64_t slots, keys, words, tiles;
    uint32_t short_bits, reserved;
} ShortHeader;
_Static_assert(sizeof(ShortHeader) == SHORT_HEADER, "the shorter words' header is 40 bytes");

/* Whether a header's version is one this Anchor reads, with its flags (the shorter words
 * from version 5 on) and a reserved field of 0: else a later format's, not ours to read. */
static int readable(const AnagramHeader *h) {
    const uint32_t known = ANAGRAM_GADDAG_COVERS | ANAGRAM_RUNS | ANAGRAM_REACH |
                           (h->version >= 5 ? ANAGRAM_SHORT_WORDS : 0);
    return h->version >= ANAGRAM_FILE_READ_SINCE && h->version <= ANAGRAM_FILE_VERSION &&
           !(h->flags & ~known) && !h->reserved;
}

/* A 64-bit digest of `n` bytes (not a cryptographic one: it tells a file written for this
 * KWG, intact, from any other; a stranger who can write the lexicon folder can write the
 * KWG too). Eight bytes a step, ~1 ms for TWL06's KWG. */
uint64_t digest64(const uint8_t *p, size_t n) { return digest64_from(0x9E3779B97F4A7C15ull, p, n); }

/* digest64 going on from `seed` (another digest). */
uint64_t digest64_from(uint64_t seed, const uint8_t *p, size_t n) {
    uint64_t h = seed ^ (uint64_t)n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

/* The filter's 64-bit words in the file for `words`: all of them, or 0 when there is none. */
static uint64_t word_key_words(const WordKeys *words) {
    return words->bits ? (uint64_t)1 << (WORD_KEY_BITS - 6) : 0;
}

/* The digest of the file `buf` (len >= ANAGRAM_HEADER bytes) with its own digest field
 * taken as 0: the header's counts and flags are covered as well as the tables. */
static uint64_t file_digest(const uint8_t *buf, size_t len) {
    AnagramHeader h;
    memcpy(&h, buf, ANAGRAM_HEADER);
    h.file_digest = 0;
    const uint64_t head = digest64((const uint8_t *)&h, ANAGRAM_HEADER);
    return digest64_from(head, buf + ANAGRAM_HEADER, len - ANAGRAM_HEADER);
}

/* The short-of filter's 64-bit words for log2 `bits` of it (0: none). */
static size_t short_of_words(uint32_t bits) { return bits ? (size_t)1 << (bits - 6) : 0; }

/* A file's size: a filter word is 8 bytes, a slot a key (8) and a chain head (4), a word
 * its next and start (4 each) and length (1), a tile a byte. */
static size_t sized(size_t word_keys, uint32_t short_bits, size_t slots, size_t words, size_t tiles) {
    return ANAGRAM_HEADER + (word_keys + short_of_words(short_bits)) * 8 + slots * 12 + words * 9 + tiles;
}

/* A set's arrays, from its short-of filter to its tiles. */
static size_t set_bytes(uint32_t short_bits, size_t slots, size_t words, size_t tiles) {
    return short_of_words(short_bits) * 8 + slots * 12 + words * 9 + tiles;
}

static size_t to_eight(size_t n) { return (n + 7) & ~(size_t)7; }

/* The shorter words' section of the file `buf` (len bytes) whose main set ends at `end`:
 * its header into *sh and the section's end, or 0 when the header is cut off or out of
 * range (a later format's, or damaged). */
static size_t short_section(const uint8_t *buf, size_t len, size_t end, ShortHeader *sh) {
    const size_t at = to_eight(end);
    if (at > len || len - at < SHORT_HEADER) return 0;
    memcpy(sh, buf + at, SHORT_HEADER);
    if (sh->slots > len || sh->words > len || sh->tiles > len || sh->keys > sh->slots || sh->slots < 1024 ||
        (sh->slots & (sh->slots - 1)) || sh->words > UINT32_MAX - 1 || sh->reserved ||
        sh->short_bits > SHORT_OF_BITS || (sh->short_bits && sh->short_bits < SHORT_OF_LEAST))
        return 0;
    return at + SHORT_HEADER + set_bytes(sh->short_bits, sh->slots, sh->words, sh->tiles);
}

/* The bytes of the letter-run tables that follow the tiles, by the header's flags. */
static size_t tables_size(uint32_t flags, int alphabet) {
    return (flags & ANAGRAM_RUNS ? run_table_bytes(alphabet) : 0) +
           (flags & ANAGRAM_REACH ? reach_table_bytes(alphabet) : 0);
}

/* The length the header `h` gives the file `buf` (len bytes), with the shorter words'
 * header into *sh (slots 0: none); 0 when that header is cut off or out of range. */
static size_t file_length(const AnagramHeader *h, const uint8_t *buf, size_t len, int alphabet, ShortHeader *sh) {
    size_t end = sized(h->word_keys, h->short_bits, h->slots, h->words, h->tiles);
    memset(sh, 0, sizeof *sh);
    /* the flag means the shorter words from version 5 on, whatever else a header holds */
    if (h->version >= 5 && h->flags & ANAGRAM_SHORT_WORDS && !(end = short_section(buf, len, end, sh))) return 0;
    return end + tables_size(h->flags, alphabet);
}

/* The shorter words' section for `short_set` (none without slots): its bytes, padding
 * from `end` included. */
static size_t short_size(const Anagrams *short_set, size_t end) {
    if (!short_set->slots) return 0;
    return to_eight(end) - end + SHORT_HEADER +
           set_bytes(short_set->short_of ? (uint32_t)short_set->short_bits : 0, short_set->mask + 1,
                     short_set->words, short_set->tiles_used);
}

/* The file's size for `set`, `short_set`, `words` and `tables`; 0 when there is no set to write. */
size_t anagrams_file_size(const Anagrams *set, const Anagrams *short_set, const WordKeys *words,
                          const LetterTables *tables, int alphabet) {
    const uint32_t flags = (tables->runs ? ANAGRAM_RUNS : 0) | (tables->reach ? ANAGRAM_REACH : 0);
    if (!set->slots) return 0;
    const size_t end = sized(word_key_words(words), set->short_of ? (uint32_t)set->short_bits : 0, set->mask + 1,
                             set->words, set->tiles_used);
    return end + short_size(short_set, end) + tables_size(flags, alphabet);
}

/* A set's arrays written at `at`, from its short-of filter to its tiles (point_set reads
 * them back): returns where they end. */
static uint8_t *put_set(uint8_t *at, const Anagrams *set) {
    const size_t slots = set->mask + 1, words = set->words;
    const size_t sizes[] = {set->short_of ? short_of_words((uint32_t)set->short_bits) * 8 : 0,
                            slots * 8, slots * 4, words * 4, words * 4, words, set->tiles_used};
    const void *arrays[] = {set->short_of, set->slots, set->head, set->next, set->start, set->length, set->tiles};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        if (sizes[i]) memcpy(at, arrays[i], sizes[i]);
        at += sizes[i];
    }
    return at;
}

/* The file for `set`, `short_set`, `words` and `tables` into `out`, anagrams_file_size
 * bytes (not 0), for the KWG of digest `kwg` (its GADDAG covering its DAWG when `gaddag`). */
void anagrams_file_write(const Anagrams *set, const Anagrams *short_set, const WordKeys *words,
                         const LetterTables *tables, int alphabet, int rack, uint64_t kwg, int gaddag,
                         uint8_t *out) {
    AnagramHeader h = {.version = ANAGRAM_FILE_VERSION, .alphabet = (uint32_t)alphabet,
                       .rack = (uint32_t)rack, .max_side = MAX_SIDE, .slots = set->mask + 1,
                       .keys = set->count, .words = set->words, .tiles = set->tiles_used,
                       .word_keys = word_key_words(words), .kwg_digest = kwg,
                       .short_bits = set->short_of ? (uint32_t)set->short_bits : 0,
                       .flags = (gaddag ? ANAGRAM_GADDAG_COVERS : 0) |
                                (short_set->slots ? ANAGRAM_SHORT_WORDS : 0) |
                                (tables->runs ? ANAGRAM_RUNS : 0) |
                                (tables->reach ? ANAGRAM_REACH : 0)};
    memcpy(h.magic, ANAGRAM_MAGIC, 8);
    uint8_t *at = out + ANAGRAM_HEADER;
#define PUT(p, n)                                   \
    do {                                            \
        if (n) memcpy(at, (p), (n) * sizeof *(p)); \
        at += (n) * sizeof *(p);                    \
    } while (0)
    PUT(words->bits, h.word_keys);
    at = put_set(at, set);
    if (short_set->slots) {
        const size_t pad = to_eight((size_t)(at - out)) - (size_t)(at - out);
        memset(at, 0, pad);
        at += pad;
        ShortHeader sh = {.slots = short_set->mask + 1, .keys = short_set->count, .words = short_set->words,
                          .tiles = short_set->tiles_used,
                          .short_bits = short_set->short_of ? (uint32_t)short_set->short_bits : 0};
        memcpy(at, &sh, SHORT_HEADER);
        at = put_set(at + SHORT_HEADER, short_set);
    }
    if (tables->runs) PUT(tables->runs, run_table_bytes(alphabet));
    if (tables->reach) PUT(tables->reach, reach_table_bytes(alphabet));
#undef PUT
    memcpy(out, &h, ANAGRAM_HEADER);
    h.file_digest = file_digest(out, (size_t)(at - out));
    memcpy(out, &h, ANAGRAM_HEADER);
}

/* What keeps the file `buf` from being `built` and `built_words` (OTHER_RULES: only its rack
 * size), NULL when nothing does; `view` and `view_words` then point into it. */
static const char *anagrams_differ(const uint8_t *buf, size_t len, int alphabet, int rack,
                                   const Anagrams *built, const WordKeys *built_words,
                                   Anagrams *view, WordKeys *view_words) {
    AnagramHeader h;
    if (len < ANAGRAM_HEADER) return "shorter than its header";
    memcpy(&h, buf, ANAGRAM_HEADER);
    if (memcmp(h.magic, ANAGRAM_MAGIC, 8) != 0) return "not an Anchor bingo-word file";
    if (h.version < ANAGRAM_FILE_READ_SINCE || h.version > ANAGRAM_FILE_VERSION)
        return "a format this version of Anchor does not read (or another byte order)";
    if (h.alphabet != (uint32_t)alphabet || h.max_side != MAX_SIDE)
        return "built for another alphabet";
    if (h.rack != (uint32_t)rack) return OTHER_RULES;
    if (h.short_bits > SHORT_OF_BITS || (h.short_bits && h.short_bits < SHORT_OF_LEAST))
        return "a damaged header (its short-of filter's size is out of range)";
    ShortHeader sh;
    if (h.slots > len || h.words > len || h.tiles > len || h.word_keys > len ||
        len != file_length(&h, buf, len, alphabet, &sh))
        return "not the length its header gives (cut short, grown, or its header damaged?)";
    if (!built->slots) return "this lexicon is too large a graph for a bingo-word set";
    if (h.slots != built->mask + 1 || h.keys != built->count || h.words != built->words ||
        h.tiles != built->tiles_used || h.word_keys != word_key_words(built_words))
        return OTHER_LEXICON;
    *view = *built; /* the letter codes, counts and mask: equal by now */
    const uint8_t *at = buf + ANAGRAM_HEADER;
    const size_t filter = h.word_keys * sizeof *built_words->bits;
    if (filter && memcmp(at, built_words->bits, filter) != 0) return OTHER_LEXICON;
    view_words->bits = filter ? (uint64_t *)(void *)at : NULL;
    at += filter;
    const size_t short_of = short_of_words(h.short_bits) * sizeof *built->short_of;
    if (h.short_bits != (uint32_t)(built->short_of ? built->short_bits : 0) ||
        (short_of && memcmp(at, built->short_of, short_of) != 0))
        return OTHER_LEXICON;
    view->short_of = short_of ? (uint64_t *)(void *)at : NULL;
    view->short_borrowed = 1;
    at += short_of;
#define TAKE(field, n)                                                  \
    do {                                                                \
        size_t bytes = (n) * sizeof *built->field;                      \
        if (bytes && memcmp(at, built->field, bytes) != 0)              \
            return OTHER_LEXICON;                                       \
        view->field = (void *)at;                                       \
        at += bytes;                                                    \
    } while (0)
    TAKE(slots, h.slots);
    TAKE(head, h.slots);
    TAKE(next, h.words);
    TAKE(start, h.words);
    TAKE(length, h.words);
    TAKE(tiles, h.tiles);
#undef TAKE
    view->borrowed = 1;
    view->filter = NULL; /* the built set's own, freed with it: the Generator makes the view its own */
    view->word_cap = view->words;
    view->tile_cap = view->tiles_used;
    return NULL;
}

/* Whether every byte of tiles[0 .. n-1] is a letter, 1 to `alphabet` (at most 127): eight
 * at a time, by the bit tricks that tell whether a word holds a byte below or above a bound
 * (exact, no carry crossing bytes for bounds up to 127), as a trusted file's 1.3 M tiles
 * (TWL06) are read at every start. */
static int letters_within(const uint8_t *tiles, size_t n, unsigned alphabet) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t bad = 0;
    size_t t = 0;
    for (; t + 8 <= n; t += 8) {
        uint64_t x;
        memcpy(&x, tiles + t, 8);
        bad |= ((x - ones) & ~x) | ((x + ones * (127 - alphabet)) | x); /* a 0; one past alphabet */
    }
    bad &= highs;
    for (; t < n; t++) bad |= tiles[t] < 1 || tiles[t] > alphabet;
    return !bad;
}

/* Whether the tables of `view` (pointing into a file) are sound for a lookup: every chain
 * head and link an index in range, each link back to an earlier word (so a chain ends),
 * each word's letters inside the tiles and letters of the ruleset, and the slots in use
 * as the header says, a quarter free (so each probe ends). */
static int anagrams_sound(const Anagrams *v, int alphabet) {
    size_t used = 0;
    for (size_t i = 0; i <= v->mask; i++) {
        used += v->slots[i] != 0;
        if (v->head[i] > v->words || (!v->slots[i] && v->head[i])) return 0;
    }
    if (used != v->count || 4 * used > 3 * (v->mask + 1)) return 0;
    for (size_t w = 0; w < v->words; w++) {
        if (v->next[w] > w || v->length[w] < 1 || v->length[w] > MAX_SIDE ||
            v->start[w] > v->tiles_used || v->length[w] > v->tiles_used - v->start[w])
            return 0;
    }
    return letters_within(v->tiles, v->tiles_used, (unsigned)alphabet);
}

/* The most letters a word of a sound set has (0: none). */
static int longest_word(const Anagrams *v) {
    int most = 0;
    for (size_t w = 0; w < v->words; w++)
        if (v->length[w] > most) most = v->length[w];
    return most;
}

/* Point `view` at a set's arrays in a file, from its short-of filter at `at` on (bits,
 * slots, keys, words and tiles as its header gives them, checked): returns where they end. */
static const uint8_t *point_set(Anagrams *view, const uint8_t *at, uint32_t short_bits, uint64_t slots,
                                uint64_t keys, uint64_t words, uint64_t tiles) {
    view->short_of = short_bits ? (uint64_t *)(void *)at : NULL;
    view->short_bits = (int)short_bits;
    view->short_borrowed = 1;
    at += short_of_words(short_bits) * 8;
    view->slots = (uint64_t *)(void *)at;
    at += slots * 8;
    view->head = (uint32_t *)(void *)at;
    at += slots * 4;
    view->next = (uint32_t *)(void *)at;
    at += words * 4;
    view->start = (uint32_t *)(void *)at;
    at += words * 4;
    view->length = (uint8_t *)(void *)at;
    at += words;
    view->tiles = (uint8_t *)(void *)at;
    at += tiles;
    view->mask = (size_t)slots - 1;
    view->count = (size_t)keys;
    view->words = view->word_cap = (size_t)words;
    view->tiles_used = view->tile_cap = (size_t)tiles;
    view->borrowed = 1;
    view->filter = NULL;
    return at;
}

/* Point `view`, `short_view` and `view_words` into the file `buf` (len bytes) without
 * building the sets, when it was written for the KWG of digest `kwg`, for this alphabet
 * and rack size, and is intact and sound: 1 then, with *gaddag what its header says of the
 * GADDAG, `tables` pointing at the letter-run tables it holds (NULL: none, build them) and
 * `short_view` at its shorter words (no slots: none, build them); else 0 (build the set and
 * compare it, anagrams_adopt). The letter codes are the caller's. */
int anagrams_trust(const uint8_t *buf, size_t len, int alphabet, int rack, uint64_t kwg, Anagrams *view,
                   Anagrams *short_view, WordKeys *view_words, LetterTables *tables, int *gaddag) {
    AnagramHeader h;
    ShortHeader sh;
    short_view->slots = NULL;
    if (len < ANAGRAM_HEADER) return 0;
    memcpy(&h, buf, ANAGRAM_HEADER);
    if (memcmp(h.magic, ANAGRAM_MAGIC, 8) != 0 || !readable(&h) || h.alphabet != (uint32_t)alphabet ||
        h.max_side != MAX_SIDE || h.rack != (uint32_t)rack || h.kwg_digest != kwg ||
        h.short_bits > SHORT_OF_BITS || (h.short_bits && h.short_bits < SHORT_OF_LEAST))
        return 0;
    if (h.slots > len || h.words > len || h.tiles > len || h.word_keys > len || h.keys > h.slots ||
        h.slots < 1024 || (h.slots & (h.slots - 1)) || h.words > UINT32_MAX - 1 ||
        (h.word_keys && h.word_keys != (uint64_t)1 << (WORD_KEY_BITS - 6)) ||
        len != file_length(&h, buf, len, alphabet, &sh) || file_digest(buf, len) != h.file_digest)
        return 0;
    const uint8_t *at = buf + ANAGRAM_HEADER;
    view_words->bits = h.word_keys ? (uint64_t *)(void *)at : NULL;
    at += h.word_keys * 8;
    at = point_set(view, at, h.short_bits, h.slots, h.keys, h.words, h.tiles);
    if (h.flags & ANAGRAM_SHORT_WORDS) {
        at = buf + to_eight((size_t)(at - buf)) + SHORT_HEADER;
        at = point_set(short_view, at, sh.short_bits, sh.slots, sh.keys, sh.words, sh.tiles);
    }
    tables->runs = h.flags & ANAGRAM_RUNS ? (uint8_t *)(void *)at : NULL;
    at += h.flags & ANAGRAM_RUNS ? run_table_bytes(alphabet) : 0;
    tables->reach = h.flags & ANAGRAM_REACH ? (uint8_t *)(void *)at : NULL;
    if (tables->reach)
        for (size_t i = 0; i < reach_table_bytes(alphabet); i++)
            if (tables->reach[i] > MAX_SIDE) return 0; /* a cap on letters a board can hold */
    /* the shorter words hold fewer letters than a rack (laid.c takes a set by a span's length) */
    if (!anagrams_sound(view, alphabet) ||
        (short_view->slots && !(anagrams_sound(short_view, alphabet) && longest_word(short_view) < rack)))
        return 0;
    *gaddag = (h.flags & ANAGRAM_GADDAG_COVERS) != 0;
    return 1;
}

/* Whether the file `buf` (len bytes) says it was written for the KWG of digest `kwg` in a
 * format this Anchor reads (its header's magic, version, flags and digest), whatever else
 * holds: one that says so and is not trusted is damaged. */
int anagrams_file_names(const uint8_t *buf, size_t len, uint64_t kwg) {
    AnagramHeader h;
    if (len < ANAGRAM_HEADER) return 0;
    memcpy(&h, buf, ANAGRAM_HEADER);
    return memcmp(h.magic, ANAGRAM_MAGIC, 8) == 0 && readable(&h) && h.kwg_digest == kwg;
}

/* Point `view` into the file `buf` (len bytes) when it holds exactly `built`, the set this
 * Generator made from its own lexicon (alphabet letters, rack size rack), and `built_words`,
 * its word-key filter (`view_words` then points into the file too): ANAGRAMS_ADOPTED
 * then; ANAGRAMS_OTHER_RULES for a file written for another rack size (it serves other
 * rulesets: this one keeps its own set); else ANAGRAMS_REFUSED with `*why` what is wrong
 * (a file whose header names the KWG of digest `kwg` and holds other words: damaged).
 * Equal contents are all the checking a lookup needs: every chain, index and probe
 * sequence is then the built set's own. */
int anagrams_adopt(const uint8_t *buf, size_t len, int alphabet, int rack, uint64_t kwg, const Anagrams *built,
                   const WordKeys *built_words, Anagrams *view, WordKeys *view_words, const char **why) {
    *why = anagrams_differ(buf, len, alphabet, rack, built, built_words, view, view_words);
    if (*why == OTHER_LEXICON) {
        AnagramHeader h;
        memcpy(&h, buf, ANAGRAM_HEADER); /* anagrams_differ read it: len holds a header */
        if (h.kwg_digest == kwg) *why = DAMAGED;
    }
    if (*why == OTHER_RULES) return ANAGRAMS_OTHER_RULES;
    return *why ? ANAGRAMS_REFUSED : ANAGRAMS_ADOPTED;
}
