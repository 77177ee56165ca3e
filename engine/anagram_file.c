/*
 * The bingo words (Anagrams, core.h) as a file beside the lexicon, `NAME.kwg.anagrams`, so
 * that every worker of a machine maps one copy instead of building its own (~3 MiB for
 * TWL06). `anchor lexicon install` writes it (Lexicon.save); Lexicon.open maps it when it is
 * there, and a Generator uses it only when it holds exactly the set the Generator builds
 * from its own lexicon and rack size: a file from another lexicon, another rack size or
 * another version of Anchor is refused, whatever its header says.
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
 *   56  ...      slots: uint64[slots], head: uint32[slots], next: uint32[words],
 *                start: uint32[words], length: uint8[words], tiles: uint8[tiles]
 * The arrays follow one another with no padding (each begins on a multiple of its size:
 * the header is 56 bytes and `slots` a power of two of at least 1024).
 */
#include "core.h"

#define ANAGRAM_MAGIC "ANCHBNGO"
enum { ANAGRAM_FILE_VERSION = 1, ANAGRAM_HEADER = 56 };

static const char OTHER_RULES[] = "written for another rack size";
typedef struct {
    char magic[8];
    uint32_t version, alphabet, rack, max_side;
    uint64_t slots, keys, words, tiles;
} AnagramHeader;

/* A file's size: a slot is a key (8 bytes) and a chain head (4), a word its next and start
 * (4 each) and length (1), a tile a byte. */
static size_t sized(size_t slots, size_t words, size_t tiles) {
    return ANAGRAM_HEADER + slots * 12 + words * 9 + tiles;
}

/* The file's size for `set`; 0 when there is no set to write. */
static size_t file_size(const Anagrams *set) {
    return set->slots ? sized(set->mask + 1, set->words, set->tiles_used) : 0;
}

PyObject *anagrams_to_bytes(const Anagrams *set, int alphabet, int rack) {
    size_t size = file_size(set);
    if (!size) {
        PyErr_SetString(PyExc_ValueError,
                        "this lexicon has no bingo-word set to write (too large a graph)");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out) return NULL;
    uint8_t *at = (uint8_t *)PyBytes_AS_STRING(out);
    AnagramHeader h = {.version = ANAGRAM_FILE_VERSION, .alphabet = (uint32_t)alphabet,
                       .rack = (uint32_t)rack, .max_side = MAX_SIDE, .slots = set->mask + 1,
                       .keys = set->count, .words = set->words, .tiles = set->tiles_used};
    memcpy(h.magic, ANAGRAM_MAGIC, 8);
    memcpy(at, &h, ANAGRAM_HEADER);
    at += ANAGRAM_HEADER;
#define PUT(p, n)                                   \
    do {                                            \
        if (n) memcpy(at, (p), (n) * sizeof *(p)); \
        at += (n) * sizeof *(p);                    \
    } while (0)
    PUT(set->slots, h.slots);
    PUT(set->head, h.slots);
    PUT(set->next, h.words);
    PUT(set->start, h.words);
    PUT(set->length, h.words);
    PUT(set->tiles, h.tiles);
#undef PUT
    return out;
}

/* What keeps the file `buf` from being `built` (OTHER_RULES: only its rack size), NULL when
 * nothing does; `view` then points into it. */
static const char *anagrams_differ(const uint8_t *buf, size_t len, int alphabet, int rack,
                                   const Anagrams *built, Anagrams *view) {
    AnagramHeader h;
    if (len < ANAGRAM_HEADER) return "shorter than its header";
    memcpy(&h, buf, ANAGRAM_HEADER);
    if (memcmp(h.magic, ANAGRAM_MAGIC, 8) != 0) return "not an Anchor bingo-word file";
    if (h.version != ANAGRAM_FILE_VERSION)
        return "a format this version of Anchor does not read (or another byte order)";
    if (h.alphabet != (uint32_t)alphabet || h.max_side != MAX_SIDE)
        return "built for another alphabet";
    if (h.rack != (uint32_t)rack) return OTHER_RULES;
    if (h.slots > len || h.words > len || h.tiles > len || len != sized(h.slots, h.words, h.tiles))
        return "not the length its header gives (cut short?)";
    if (!built->slots) return "this lexicon is too large a graph for a bingo-word set";
    if (h.slots != built->mask + 1 || h.keys != built->count || h.words != built->words ||
        h.tiles != built->tiles_used)
        return "built from another lexicon";
    *view = *built; /* the letter codes, counts and mask: equal by now */
    const uint8_t *at = buf + ANAGRAM_HEADER;
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
 * Generator made from its own lexicon (alphabet letters, rack size rack): ANAGRAMS_ADOPTED
 * then; ANAGRAMS_OTHER_RULES for a file written for another rack size (it serves other
 * rulesets: this one keeps its own set); else ANAGRAMS_REFUSED with `*why` what is wrong.
 * Equal contents are all the checking a lookup needs: every chain, index and probe
 * sequence is then the built set's own. */
int anagrams_adopt(const uint8_t *buf, size_t len, int alphabet, int rack, const Anagrams *built,
                   Anagrams *view, const char **why) {
    *why = anagrams_differ(buf, len, alphabet, rack, built, view);
    if (*why == OTHER_RULES) return ANAGRAMS_OTHER_RULES;
    return *why ? ANAGRAMS_REFUSED : ANAGRAMS_ADOPTED;
}
