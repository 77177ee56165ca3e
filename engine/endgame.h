/*
 * The exact endgame solver: with the bag empty both racks are known, and the play to
 * make is found by search. Negamax with alpha-beta (principal variation search),
 * iterative deepening and a transposition table, over the plays the generator finds for
 * each rack. Its functions are in endgame.c; DESIGN-NOTES.md ("Endgame") gives the
 * argument for the two-pass rule below.
 *
 * Values are spreads: what the side to move gains over the other from here to the end
 * of the game, the end-of-game adjustments included (MAGPIE's V).
 *
 * The game ends when a side plays its last tile (it gains `going_out` times the value of
 * the other rack, and `stuck_loses_own` that value once more) or after consecutive
 * scoreless turns; with the bag empty those are passes, which leave the position as it
 * was, so after two in a row the side to move faces what it faced two turns before. A
 * limit of N scoreless turns then gives the same value as ending the game at the second
 * pass in a row, starting from "the last turn was a pass" when N minus the turns already
 * scoreless is odd (argued in DESIGN-NOTES.md and checked against a reference that plays
 * the N-turn rule as written). At that end each side loses its own tiles' value when
 * `scoreless_loses_own`.
 */
#ifndef ANCHOR_ENDGAME_H
#define ANCHOR_ENDGAME_H

#include "core.h"

#define ENDGAME_MAX_PLIES 64       /* deepest line: 2 x 16 tiles played one at a time, passes between */
#define ENDGAME_MIN_TABLE 10       /* log2 of the fewest table entries (16 KiB) */
#define ENDGAME_MAX_TABLE 32       /* log2 of the most (64 GiB: the server's cap is far below) */
#define ENDGAME_CLOCK_EVERY 0xFF   /* nodes between looks at the clock */
#define ENDGAME_MAX_THREADS 64

/* The end-of-game rules (Ruleset.end). */
typedef struct {
    int going_out;        /* the other rack's value, times this, to the side going out */
    int stuck_loses_own;  /* the side left with tiles loses their value too */
    int scoreless_loses_own; /* at a scoreless end each side loses its own tiles' value */
} EndRules;

/* A transposition table entry, 16 bytes: two words, `data` holding the value (bits 0-31),
 * the best play's 16-bit fingerprint (32-47; 0: none), the bound kind (48-55) and the
 * depth searched below (56-63; ENDGAME_COMPLETE: to the end of the game on every line),
 * and `check` the position's key XOR data. Threads read and write entries without locks;
 * the two words of different writes read together give back the key only when their data
 * words are equal, so a torn entry is a miss, never a wrong value. */
typedef struct {
    uint64_t check;
    uint64_t data;
} TableEntry;
_Static_assert(sizeof(TableEntry) == 16, "TableEntry is 16 bytes");

#define ENDGAME_COMPLETE 255

/* The table a solve reads and writes: 2^bits entries, zeroed when new. Its keys are the
 * positions' (board and both racks, by role: to move or waiting), so one table may be
 * kept across solves with one Core and one EndRules (one game's turns, a pre-endgame's
 * draws); one solve at a time uses it. */
typedef struct {
    TableEntry *entries;
    int bits;
} EndgameTable;

/* Zeroed entries for a table of 2^bits, on huge pages where the kernel gives them (a probe
 * lands anywhere in the table: with 4 KiB pages nearly every one missed the TLB; 12% of a
 * solve's time), or NULL. Released with endgame_table_free. */
TableEntry *endgame_table_new(int bits);
void endgame_table_free(TableEntry *entries, int bits);

/* Write every page of the table once. A table's first touch of a page is a probe (a read),
 * which maps the kernel's shared zero page; the write that follows replaces it, and while
 * other threads of the process run on other CPUs that costs a TLB flush on each (under a
 * hypervisor an interrupt each): with two threads 40% of a solve's time went there and two
 * threads were no faster than one. solve_endgame does this before its helpers start. */
void endgame_table_write_pages(const EndgameTable *table);

/* A slot of endgame peers (endgame_peers.h) a solve searches with: its table is the
 * solve's, its busy keys the solve's, and a value any peer proves ends the solve. */
typedef struct PeerSlot PeerSlot;
typedef struct {
    PeerSlot *slot;
    _Atomic uint64_t *busy; /* 2^PEER_BUSY_BITS keys */
} EndgamePeer;

/* Which of the root's plays one search looks at, for a hard endgame split over workers:
 * the plays are numbered in the root's canonical order (order_plays without a table move:
 * a function of the position alone; the pass last), and number i is searched when
 * first <= i < last (last < 0: no end) and (i - first) % parts == part. With a floor, a
 * value another part already reached: plays worth less are only bounded. */
typedef struct {
    int first, last, parts, part;
    int has_floor;
    int32_t floor;
} RootSplit;

/* What solve_endgame answers. */
typedef struct {
    int32_t value;
    int root;         /* the line's first play, by its number in the root's canonical order */
    int below_floor;  /* every play searched is worth less than the floor: value bounds them */
    int no_plays;     /* the split left this search no play to look at */
    int depth;        /* plies of the deepest iteration completed */
    int exact;        /* that iteration reached the end of the game on every line */
    uint64_t nodes;
    int line_len;
    MoveRecord line[ENDGAME_MAX_PLIES]; /* len 0: a pass */
} EndgameAnswer;

/* How far a solve may go. */
typedef struct {
    int plies;          /* the deepest iteration */
    int passed;         /* the last turn was a pass */
    int threads;        /* searches at once on one table, 1..ENDGAME_MAX_THREADS */
    int has_deadline;
    struct timespec deadline;
    uint64_t max_nodes; /* 0: none; with one thread the same stop on every machine */
} EndgameLimits;

/* Solve the endgame on `board` with racks[0] to move (tile counts, blank 0): iterations
 * 1, 3, .. up to limits->plies until one is exact, with `table`, the root's plays as `split`
 * says. With more than one thread, helpers search the same iterations on the same table,
 * each putting off plays another is searching; the first iteration in any thread to reach
 * the end of the game on every line gives the value. An exact answer's line is canonical:
 * at each turn the first play in canonical order that keeps the value, so that it is the
 * same whatever the threads, the depth schedule, the table's size and the split (an
 * unproven answer, cut by the depth, the time or the nodes, may differ with threads).
 * Returns 0 with the answer, FAIL_MEMORY, FAIL_TIME when not even the first iteration
 * finished by the deadline or within the nodes, or FAIL_CHECK when no play keeps the value
 * the search found (a bug). */
int solve_endgame(const Core *g, const uint8_t *board, const uint8_t racks[2][MAX_LETTERS + 1],
                  const EndRules *end, const RootSplit *split, const EndgameTable *table,
                  const EndgamePeer *peer, const EndgameLimits *limits, EndgameAnswer *answer);

#endif
