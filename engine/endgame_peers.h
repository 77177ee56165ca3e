/*
 * Endgame peers: searches of one endgame in several processes that share memory (workers
 * forked from one parent), all on one transposition table, as the threads of one solve
 * are. The parent maps a region before it forks: a header, then `slots` slots, each an
 * endgame's table, its busy keys and its proven value. A solve claims the slot of its
 * endgame (by a key naming the lexicon, the rules and the position, which the caller
 * makes), joining the searches already in it, or a free one; the first search to prove
 * the value writes it there, and every search of the slot stops and answers it (each
 * walks the canonical line itself, the table warm). A slot keeps its table and value when
 * its searches end, so the same endgame asked again is answered from it, until a claim
 * for another needs the slot (the least recently claimed of those nobody searches): its
 * table is not emptied then, but every key of the new endgame is salted anew, so that the
 * old entries never match (as a 64-bit key collision, 2^-64 a probe).
 *
 * Region layout (every offset a multiple of 4096; endgame_peers_bytes gives the size):
 *   PeersHeader, then slots at header_bytes + i * slot_bytes, each:
 *   PeerSlot (the bookkeeping, 4096 bytes), busy keys (2^PEER_BUSY_BITS x 8 bytes),
 *   table entries (2^bits x 16 bytes).
 * Nothing here is trusted past the header's checks: the region is the processes' own.
 */
#ifndef ANCHOR_ENDGAME_PEERS_H
#define ANCHOR_ENDGAME_PEERS_H

#include "endgame.h" /* core.h first */

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PEERS_MAGIC 0x3173726565506e41ULL /* "AnPeers1" */
#define PEERS_MAX_SLOTS 1024
#define PEERS_MAX_PROCESSES 64 /* one bit each in a slot's holders */
#define PEER_BUSY_BITS 14       /* the busy keys of a slot: as a solve's own (endgame.c) */
#define PEER_FREE 0ULL          /* a slot's owner: never claimed */
/* ... being taken for another endgame by process p: PEER_RESETTING - p (a process killed
 * there leaves a mark endgame_peers_forget can read) */
#define PEER_RESETTING (~0ULL)
#define PEER_MAX_KEY (PEER_RESETTING - PEERS_MAX_PROCESSES) /* keys are 1..PEER_MAX_KEY */

typedef struct {
    uint64_t magic;
    uint32_t slots; /* slots in the region */
    uint32_t bits;  /* log2 of each slot's table entries */
    uint64_t header_bytes, slot_bytes;
    _Atomic uint64_t clock; /* claims so far: a slot's `used` is the clock at its last claim */
} PeersHeader;

struct PeerSlot {
    _Atomic uint64_t owner;   /* the endgame's key; PEER_FREE; PEER_RESETTING - process */
    _Atomic uint64_t holders; /* bit i: process i searches with this slot now */
    _Atomic uint64_t used;    /* the header's clock at the last claim */
    uint64_t salt;            /* mixed into every key of the slot's endgame: the entries of
                               * the endgame before never match, so a slot is taken at once */
    atomic_int proven;        /* 1 once value and depth hold a proven value */
    int32_t value;            /* the proven value (the side to move's spread), */
    int32_t depth;            /* ... by an iteration this deep */
};

/* The region's size for `slots` slots of 2^bits entries; 0 when out of range. */
size_t endgame_peers_bytes(int slots, int bits);

/* Lay out a zeroed region of endgame_peers_bytes(slots, bits) bytes. */
void endgame_peers_init(void *region, int slots, int bits);

/* The region's header when `region` of `bytes` bytes is one endgame_peers_init laid out
 * (magic, sizes and layout checked), else NULL. */
const PeersHeader *endgame_peers_check(const void *region, size_t bytes);

/* Claim a slot for the endgame `key` (1..PEER_MAX_KEY) for process
 * `process` (0..PEERS_MAX_PROCESSES-1): the slot already searching or holding it, else one
 * nobody searches (never claimed first, then the least recently claimed), salted anew. The
 * slot's number, or -1 when every slot is searched by others (solve alone then). */
int endgame_peers_claim(void *region, uint64_t key, int process);

/* Process `process` is done with slot `slot` (its table and value stay for a later claim). */
void endgame_peers_release(void *region, int slot, int process);

/* Process `process` ended without releasing its slots (killed): release every one, and
 * free one it was killed taking. */
void endgame_peers_forget(void *region, int process);

/* Slot `slot`'s bookkeeping, busy keys and table. */
PeerSlot *endgame_peers_slot(void *region, int slot);
_Atomic uint64_t *endgame_peers_busy(void *region, int slot);
EndgameTable endgame_peers_table(void *region, int slot);

#endif
