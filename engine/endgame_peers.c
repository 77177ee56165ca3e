/*
 * anchor.engine._movegen: endgame peers, one table for the searches of one endgame in
 * several processes (endgame_peers.h).
 *
 * Claiming and releasing are lock-free, so that a process killed at any point leaves no
 * lock behind (endgame_peers_forget clears its holder bit, and its mark on a slot it was
 * taking). A slot is joined by setting one's bit in `holders` and then reading `owner`
 * again; it is taken for another endgame by moving `owner` to the taker's resetting mark and
 * then reading `holders` again. Both are sequentially consistent, so of a joiner and a taker
 * racing on one slot at least one sees the other's write and backs off: a slot is never
 * given to another endgame while someone searches it.
 */
#include "endgame_peers.h"

#include <sched.h>

#define PEER_PAGE 4096u
#define SLOT_ALIGN (2u << 20) /* a slot starts on a huge page where the kernel gives them */

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static size_t slot_bytes(int bits) {
    return round_up(PEER_PAGE + (sizeof(uint64_t) << PEER_BUSY_BITS) + (sizeof(TableEntry) << bits), SLOT_ALIGN);
}

size_t endgame_peers_bytes(int slots, int bits) {
    if (slots < 1 || slots > PEERS_MAX_SLOTS || bits < ENDGAME_MIN_TABLE || bits > ENDGAME_MAX_TABLE) return 0;
    return SLOT_ALIGN + (size_t)slots * slot_bytes(bits);
}

void endgame_peers_init(void *region, int slots, int bits) {
    PeersHeader *h = region;
    h->magic = PEERS_MAGIC;
    h->slots = (uint32_t)slots;
    h->bits = (uint32_t)bits;
    h->header_bytes = SLOT_ALIGN;
    h->slot_bytes = slot_bytes(bits);
    atomic_store(&h->clock, 0);
}

const PeersHeader *endgame_peers_check(const void *region, size_t bytes) {
    const PeersHeader *h = region;
    if (!region || bytes < sizeof *h || h->magic != PEERS_MAGIC || h->slots < 1 || h->slots > PEERS_MAX_SLOTS ||
        h->bits < ENDGAME_MIN_TABLE || h->bits > ENDGAME_MAX_TABLE || h->header_bytes != SLOT_ALIGN ||
        h->slot_bytes != slot_bytes((int)h->bits) || endgame_peers_bytes((int)h->slots, (int)h->bits) > bytes)
        return NULL;
    return h;
}

PeerSlot *endgame_peers_slot(void *region, int slot) {
    const PeersHeader *h = region;
    return (PeerSlot *)((char *)region + h->header_bytes + (size_t)slot * h->slot_bytes);
}

_Atomic uint64_t *endgame_peers_busy(void *region, int slot) {
    return (_Atomic uint64_t *)((char *)endgame_peers_slot(region, slot) + PEER_PAGE);
}

EndgameTable endgame_peers_table(void *region, int slot) {
    const PeersHeader *h = region;
    char *busy = (char *)endgame_peers_busy(region, slot);
    return (EndgameTable){(TableEntry *)(busy + (sizeof(uint64_t) << PEER_BUSY_BITS)), (int)h->bits};
}

/* Join slot `s` when it is `key`'s: 1 when joined. */
static int join(PeerSlot *s, uint64_t key, uint64_t bit) {
    if (atomic_load(&s->owner) != key) return 0;
    atomic_fetch_or(&s->holders, bit);
    if (atomic_load(&s->owner) == key) return 1;
    atomic_fetch_and(&s->holders, ~bit); /* emptied under us: look elsewhere */
    return 0;
}

/* splitmix64's finaliser: a salt from the claim clock. */
static uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Take slot `s` (whose owner was `was`, nobody searching it) for `key`: 1 when taken. */
static int take(void *region, int slot, uint64_t was, uint64_t key, int process) {
    PeersHeader *h = region;
    PeerSlot *s = endgame_peers_slot(region, slot);
    const uint64_t bit = 1ULL << process;
    if (!atomic_compare_exchange_strong(&s->owner, &was, PEER_RESETTING - (uint64_t)process)) return 0;
    if (atomic_load(&s->holders)) { /* a joiner of `was` came in between: it keeps the slot */
        atomic_store(&s->owner, was);
        return 0;
    }
    s->salt = mix(atomic_fetch_add(&h->clock, 1) ^ key);
    atomic_store(&s->proven, 0);
    s->value = s->depth = 0;
    atomic_fetch_or(&s->holders, bit);
    atomic_store(&s->owner, key);
    return 1;
}

int endgame_peers_claim(void *region, uint64_t key, int process) {
    PeersHeader *h = region;
    if (key == PEER_FREE || key > PEER_MAX_KEY || process < 0 || process >= PEERS_MAX_PROCESSES) return -1;
    const uint64_t bit = 1ULL << process;
    const int slots = (int)h->slots;
    for (int attempt = 0; attempt < 64; attempt++) {
        /* a slot being taken is taken in a few stores: wait, it may be for this endgame */
        for (int i = 0, spins = 0; i < slots && spins < 100000; i++)
            if (atomic_load(&endgame_peers_slot(region, i)->owner) > PEER_MAX_KEY) {
                sched_yield();
                spins++;
                i--;
            }
        for (int i = 0; i < slots; i++)
            if (join(endgame_peers_slot(region, i), key, bit)) {
                atomic_store(&endgame_peers_slot(region, i)->used, atomic_fetch_add(&h->clock, 1) + 1);
                return i;
            }
        /* nobody holds this endgame: a slot never claimed, else the least recently claimed */
        int best = -1;
        uint64_t oldest = UINT64_MAX;
        for (int i = 0; i < slots; i++) {
            PeerSlot *s = endgame_peers_slot(region, i);
            const uint64_t owner = atomic_load(&s->owner);
            if (owner > PEER_MAX_KEY || atomic_load(&s->holders)) continue;
            const uint64_t used = owner == PEER_FREE ? 0 : atomic_load(&s->used);
            if (used < oldest) {
                oldest = used;
                best = i;
            }
        }
        if (best < 0) return -1;
        PeerSlot *s = endgame_peers_slot(region, best);
        if (take(region, best, atomic_load(&s->owner), key, process)) {
            atomic_store(&s->used, atomic_fetch_add(&h->clock, 1) + 1);
            return best;
        }
    }
    return -1; /* lost every race for a slot: solve alone */
}

void endgame_peers_release(void *region, int slot, int process) {
    const PeersHeader *h = region;
    if (slot < 0 || (uint32_t)slot >= h->slots || process < 0 || process >= PEERS_MAX_PROCESSES) return;
    atomic_fetch_and(&endgame_peers_slot(region, slot)->holders, ~(1ULL << process));
}

void endgame_peers_forget(void *region, int process) {
    const PeersHeader *h = region;
    if (process < 0 || process >= PEERS_MAX_PROCESSES) return;
    for (uint32_t i = 0; i < h->slots; i++) {
        endgame_peers_release(region, (int)i, process);
        uint64_t mark = PEER_RESETTING - (uint64_t)process; /* killed while taking it */
        atomic_compare_exchange_strong(&endgame_peers_slot(region, (int)i)->owner, &mark, PEER_FREE);
    }
}
