/*
 * The bingo words (Anagrams, core.h) as a file beside the lexicon, `NAME.kwg.anagrams`, so
 * that every worker of a machine maps one copy instead of building its own (~3 MiB for
 * TWL06). `anchor lexicon install` writes it (Lexicon.save); Lexicon.open maps it when it is
 * there, and a Generator uses it only when it holds exactly the set the Generator builds
 * from its own lexicon and rack size: a file from another lexicon, another rack size or
 * another version of Anchor is refused, whatever its header says.
 *
 * The file also holds the word-key filter of the bounds (WordKeys, core.h: every word of
 * the lexicon, of any length, by its letters), which is checked and shared the same way.
 *
 * Layout, native byte order (a host of the other order reads a bad version and refuses):
 *   0   char[8]  "ANCHBNGO"
 *   8   uint32   version (ANAGRAM_FILE_VERSION)
 *   12  uint32   alphabet: letters of the ruleset
 *   16  uint32   rack size: the shortest word held
 *   20  uint32   MAX_SIDE: the longest word held
 *   24  uint64   slots (a power of two: mask + 1)
 *   32  uint64   keys (slots in use)
 *   40  uint64   words
 *   48  uint64   tiles (the words' letters, all told)
 *   56  uint64   word-key words: the filter's 64-bit words (2^(WORD_KEY_BITS-6), or 0: none)
 *   64  ...      word keys: uint64[word-key words], slots: uint64[slots],
 *                head: uint32[slots], next: uint32[words], start: uint32[words],
 *                length: uint8[words], tiles: uint8[tiles]
 * The arrays follow one another with no padding (each begins on a multiple of its size:
 * the header is 64 bytes and `slots` a power of two of at least 1024). Version 1, without
 * the filter, is refused like any other format.
 */
#include "core.h"

#define ANAGRAM_MAGIC "ANCHBNGO"
enum { ANAGRAM_FILE_VERSION = 2, ANAGRAM_HEADER = 64 };

static const char OTHER_RULES[] = "written for another rack size";
typedef struct {
    char magic[8];
    uint32_t version, alphabet, rack, max_side;
    uint64_t slots, keys, words, tiles, word_keys;
} AnagramHeader;
_Static_assert(sizeof(AnagramHeader) == ANAGRAM_HEADER, "the header is 64 bytes");

/* The filter's 64-bit words in the file for `words`: all of them, or 0 when there is none. */
static uint64_t word_key_words(const WordKeys *words) {
    return words->bits ? (uint64_t)1 << (WORD_KEY_BITS - 6) : 0;
}

/* A file's size: a filter word is 8 bytes, a slot a key (8) and a chain head (4), a word
 * its next and start (4 each) and length (1), a tile a byte. */
static size_t sized(size_t word_keys, size_t slots, size_t words, size_t tiles) {
    return ANAGRAM_HEADER + word_keys * 8 + slots * 12 + words * 9 + tiles;
}

/* The file's size for `set` and `words`; 0 when there is no set to write. */
size_t anagrams_file_size(const Anagrams *set, const WordKeys *words) {
    return set->slots ? sized(word_key_words(words), set->mask + 1, set->words, set->tiles_used) : 0;
}

/* The file for `set` and `words` into `at`, anagrams_file_size bytes (not 0). */
void anagrams_file_write(const Anagrams *set, const WordKeys *words, int alphabet, int rack, uint8_t *at) {
    AnagramHeader h = {.version = ANAGRAM_FILE_VERSION, .alphabet = (uint32_t)alphabet,
                       .rack = (uint32_t)rack, .max_side = MAX_SIDE, .slots = set->mask + 1,
                       .keys = set->count, .words = set->words, .tiles = set->tiles_used,
                       .word_keys = word_key_words(words)};
    memcpy(h.magic, ANAGRAM_MAGIC, 8);
    memcpy(at, &h, ANAGRAM_HEADER);
    at += ANAGRAM_HEADER;
#define PUT(p, n)                                   \
    do {                                            \
        if (n) memcpy(at, (p), (n) * sizeof *(p)); \
        at += (n) * sizeof *(p);                    \
    } while (0)
    PUT(words->bits, h.word_keys);
    PUT(set->slots, h.slots);
    PUT(set->head, h.slots);
    PUT(set->next, h.words);
    PUT(set->start, h.words);
    PUT(set->length, h.words);
    PUT(set->tiles, h.tiles);
#undef PUT
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
    if (h.version != ANAGRAM_FILE_VERSION)
        return "a format this version of Anchor does not read (or another byte order)";
    if (h.alphabet != (uint32_t)alphabet || h.max_side != MAX_SIDE)
        return "built for another alphabet";
    if (h.rack != (uint32_t)rack) return OTHER_RULES;
    if (h.slots > len || h.words > len || h.tiles > len || h.word_keys > len ||
        len != sized(h.word_keys, h.slots, h.words, h.tiles))
        return "not the length its header gives (cut short?)";
    if (!built->slots) return "this lexicon is too large a graph for a bingo-word set";
    if (h.slots != built->mask + 1 || h.keys != built->count || h.words != built->words ||
        h.tiles != built->tiles_used || h.word_keys != word_key_words(built_words))
        return "built from another lexicon";
    *view = *built; /* the letter codes, counts and mask: equal by now */
    const uint8_t *at = buf + ANAGRAM_HEADER;
    const size_t filter = h.word_keys * sizeof *built_words->bits;
    if (filter && memcmp(at, built_words->bits, filter) != 0) return "built from another lexicon";
    view_words->bits = filter ? (uint64_t *)(void *)at : NULL;
    at += filter;
#define TAKE(field, n)                                                  \
    do {                                                                \
        size_t bytes = (n) * sizeof *built->field;                      \
        if (bytes && memcmp(at, built->field, bytes) != 0)              \
            return "built from another lexicon";                        \
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

/* Point `view` into the file `buf` (len bytes) when it holds exactly `built`, the set this
 * Generator made from its own lexicon (alphabet letters, rack size rack), and `built_words`,
 * its word-key filter (`view_words` then points into the file too): ANAGRAMS_ADOPTED
 * then; ANAGRAMS_OTHER_RULES for a file written for another rack size (it serves other
 * rulesets: this one keeps its own set); else ANAGRAMS_REFUSED with `*why` what is wrong.
 * Equal contents are all the checking a lookup needs: every chain, index and probe
 * sequence is then the built set's own. */
int anagrams_adopt(const uint8_t *buf, size_t len, int alphabet, int rack, const Anagrams *built,
                   const WordKeys *built_words, Anagrams *view, WordKeys *view_words, const char **why) {
    *why = anagrams_differ(buf, len, alphabet, rack, built, built_words, view, view_words);
    if (*why == OTHER_RULES) return ANAGRAMS_OTHER_RULES;
    return *why ? ANAGRAMS_REFUSED : ANAGRAMS_ADOPTED;
}
