/*
 * Constants of the native core, in one place: the KWG node layout, the generator's
 * limits (exported to Python by PyInit__movegen, where rules.py reads them) and its
 * buffer sizes. Included by _movegen.c only.
 */
#ifndef ANCHOR_MOVEGEN_LIMITS_H
#define ANCHOR_MOVEGEN_LIMITS_H

#include <stdint.h>

#define KWG_ARC_MASK 0x3FFFFFu
#define KWG_END_FLAG 0x400000u
#define KWG_ACCEPTS_FLAG 0x800000u
#define KWG_TILE_SHIFT 24
#define KWG_MAX_NODES (KWG_ARC_MASK + 1u) /* arcs cannot address more */
#define KWG_MAX_WORDS 4000000000ull        /* more means a corrupt or hostile graph */

static inline uint32_t kwg_arc(uint32_t node) { return node & KWG_ARC_MASK; }
static inline int kwg_is_end(uint32_t node) { return (node & KWG_END_FLAG) != 0; }
static inline int kwg_accepts(uint32_t node) { return (node & KWG_ACCEPTS_FLAG) != 0; }
static inline unsigned kwg_tile(uint32_t node) { return node >> KWG_TILE_SHIFT; }

static inline uint32_t load_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* For a small function on a hot path that is called from more than one place (gcc then
 * stops inlining it on its own). */
#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif

#define MAX_SIDE 21                 /* rules.MAX_SIDE: fixed buffers below */
#define MAX_CELLS (MAX_SIDE * MAX_SIDE)
#define MAX_LETTERS 63              /* cross-sets are 64-bit masks, bit 0 unused */
#define MAX_RACK 16
#define MAX_TILE_VALUE 1000
#define MAX_TILES 65535            /* tiles in a set: a self-played game's bag is shuffled in C (shuffle.c) */
#define MAX_BINGO 100000
#define BLANK_FLAG 0x80u
#define TILE_MASK 0x7Fu
#define RECORD_TILES 24             /* >= MAX_SIDE */
#define MODE_ACROSS 1
#define MODE_DOWN 2
#define INITIAL_RECORDS 4096        /* grows by doubling; most positions fit */
#define LOCAL_SPANS 2048            /* span bounds a best-first search by equity keeps (32 KiB); past it, none */
#define LOCAL_ANCHORS 128           /* anchors whose bounds a best-first search keeps on the stack */
#define LOCAL_LEFT_PARTS 512        /* rack prefixes a search keeps on the stack (16 KiB) */
#define REACH_LETTERS 40            /* alphabets up to this size get build_reach's table (A^4 bytes) */
#define ANAGRAM_KEYS 4              /* bingo words a DAWG node at most (English: about 1.1) */
#define GADDAG_LEFTS 256            /* prefixes a GADDAG-led anchor collects (2 KiB); more: the prefix walk */
#define GADDAG_MIN_ROOM 3           /* fewer squares left of an anchor: the prefix walk is as quick */
#define GADDAG_MAX_ROOM 8           /* more: the prefix walk (a key holds 7 bits a tile) */
#define GADDAG_BLANKS 2             /* racks with more blanks (Эрудит has three): the prefix walk */
#define GADDAG_MIN_RUN 2            /* fewer board tiles after the anchor: the prefix walk */
#define GADDAG_CHECK_STEPS 32000000ull /* list lookups gaddag_covers may make (TWL06: 3.3M, ~60 ms) */
#define RUN_AFTER 3                 /* board tiles after an anchor a prefix is checked against */
#define KNOWN_BINGO_PLAYS 64        /* bingos of one anchor laid from their words at most; more: the anchor is searched */
#define MANY_PAIRS 16               /* two blanks: letter pairs with bingos past which a span's are laid only when its anchor comes up */
#define BINGO_PAIRS (MAX_LETTERS * (MAX_LETTERS + 1) / 2) /* letter pairs x <= y two blanks can stand for */
#define SHORT_OF_BITS 26            /* the most bits of a set's keys short of a word (Anagrams.short_of): 8 MiB */
#define SHORT_OF_LEAST 12           /* the fewest: 512 bytes */
#define WORD_KEY_BITS 21            /* the word-key filter's bits (256 KiB): ~2% false "yes" for TWL06 */
#define PART_RACK 8                 /* racks of up to this many tiles have their parts' words checked */
#define PART_MOST 70                /* parts of one size such a rack has at most: C(8, 4) */
#define PART_ANSWER_BITS 8          /* a search remembers 2^this answers of refine_leave */
#define LAY_DIGITS 8                /* lay_key (laid.c): a digit per tile and one for the mark, so racks of up to 7 tiles */
#define LAY_DIGIT_BITS 6            /* ... of 6 bits: alphabets of up to 30 letters (a blank's digit is 1 + 2 x letters at most) */
#define PART_LEAST 3                /* spans of fewer rack tiles keep every part's leave (few words fail there) */
#define BINGO_ANSWER_BITS 6         /* a search remembers 2^this answers of which bingos its rack spells */
#define BINGO_ANSWERS (1 << BINGO_ANSWER_BITS)
#define RUN_STEPS 64                /* list entries build_runs reads per DAWG node before it gives up */
#define CLOCK_EVERY 0x3FFF          /* recursion steps between looks at the clock (~0.1 ms) */
#define MAX_SCORE (1 << 24)         /* every score exact as a float: bounds compare exactly */
#define MAX_PLAYOUT_PLIES 64         /* moves after the candidate in one playout */
#define MAX_PLAYOUT_TILES 4096       /* unseen tiles a playout may be given */
#define MAX_PLAYOUT_CANDIDATES 1024  /* candidates per playouts() call */
#define FAIL_MEMORY 1
#define FAIL_TIME 2
#define FAIL_CHECK 3               /* playouts(check=True): an incremental board went wrong */
#define FOUND_ENOUGH 4             /* a play worth more than MoveBuf.enough exists: the search stops (infer.c) */

#endif
