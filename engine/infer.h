/*
 * Rack inference: the racks the player who just moved could have held, judged by what they
 * did. Every rack the unseen tiles allow (the tiles played plus `size` more) is tried; a
 * rack explains a play when no move from it is worth more, by equity, than the play made
 * plus the margin (MAGPIE's `infer` rule), and explains an exchange of N tiles when its best
 * move is an exchange of N (the tiles it keeps are then known) or when nothing it could do
 * is worth more than the margin. One best-first search a rack, seeded with the play's worth
 * as its floor and stopped as soon as a play beats it; racks spread over threads.
 * engine/inference.py is the Python side; its functions are in infer.c.
 *
 * The rivals of the move made are the plays and, while the bag allows, the exchanges; the
 * pass is not one (it is what is left when nothing can be played or exchanged), as in
 * MAGPIE.
 *
 * Equities are compared in thousandths of a point, each leave value rounded on its own
 * (score * 1000 + round(leave * 1000)), as MAGPIE compares them: a rack on the margin's edge
 * is judged the same by both.
 */
#ifndef ANCHOR_INFER_H
#define ANCHOR_INFER_H

#include "movegen_limits.h"
#include "leave_table.h"

#define INFER_MAX_THREADS 64
#define INFER_CHUNK 16 /* racks a thread takes at a time */

/* What one rack tells (InferResult.verdict). */
enum {
    INFER_NO,       /* some move beats the play by more than the margin */
    INFER_YES,      /* none does */
    INFER_EXCHANGE, /* exchanges: its best move is an exchange of that many tiles */
};

typedef struct {
    const uint8_t *board;
    uint8_t pool[MAX_LETTERS + 1];   /* tiles the racks are completed from (counts, blank 0) */
    uint8_t played[MAX_LETTERS + 1]; /* tiles the play laid (a blank as 0); none for an exchange */
    int size;                        /* tiles each rack holds besides `played` (0..MAX_RACK) */
    int exchanged;                   /* tiles an exchange put back; 0 for a play */
    int32_t score;                   /* the play's score */
    int64_t margin;                  /* thousandths of a point */
    int exchange_most;               /* the most tiles an exchange could put back (0: none) */
    int threads;                     /* 1..INFER_MAX_THREADS */
    int has_deadline;
    struct timespec deadline;        /* CLOCK_MONOTONIC */
    size_t max_racks;                /* more racks to try than this: INFER_TOO_MANY */
    size_t part, parts;              /* try only the racks of chunks c (INFER_CHUNK racks
                                      * each, in lexicographic order) with c % parts == part;
                                      * parts 0 or 1: every rack. The parts' racks, merged in
                                      * lexicographic order, and their tallies, summed, are
                                      * the whole answer. */
} InferArgs;

#define INFER_TOO_MANY 5 /* beside FAIL_MEMORY and FAIL_TIME */

/* What inference tallies (InferResult.hist): the racks' extra tiles (plays) or the tiles kept
 * (exchanges, INFER_EXCHANGE racks), the tiles thrown, and the whole racks (exchanges). */
enum { TALLY_LEAVE, TALLY_THROWN, TALLY_RACK, TALLIES };

/* HIST_AT(alphabet, tally, unique, tile, k): where hist counts the racks holding exactly k of
 * `tile`: weighted by their draws (unique 0) or one each (unique 1). */
#define HIST_AT(a, tally, unique, tile, k) \
    ((((size_t)(tally) * 2 + (unique)) * ((size_t)(a) + 1) + (tile)) * (MAX_RACK + 1) + (k))
#define HIST_SIZE(a) HIST_AT(a, TALLIES, 0, 0, 0)

/* The racks that explain the move, in the order tried (the extra tiles ascending, blank
 * first; racks in lexicographic order of those), and the tallies over them. */
typedef struct {
    size_t tried;      /* racks judged (this part's) */
    size_t count;      /* racks that explain the move: the arrays' length */
    uint8_t *tiles;    /* count * size: each rack's extra tiles */
    uint8_t *verdict;  /* count: INFER_YES or INFER_EXCHANGE */
    uint8_t *thrown;   /* exchanges, count * exchanged: the exchange's tiles (INFER_EXCHANGE: the
                        * rack's best move; INFER_YES: its best exchange of that many tiles) */
    uint64_t *draws;   /* count: the ways the extra tiles are drawn from the pool */
    float *value;      /* count: plays, the extra tiles' leave value; exchanges, the value of what
                        * `thrown` keeps */
    uint64_t *hist;    /* HIST_SIZE(alphabet) counts (HIST_AT) */
    uint64_t searches; /* racks a search had to look at (the rest were settled before it) */
} InferResult;

/* Fill `out` (zeroed by the caller); 0, FAIL_MEMORY, FAIL_TIME or INFER_TOO_MANY. */
int infer_racks(const Core *g, const Klv *klv, const InferArgs *a, InferResult *out);
void infer_free(InferResult *out);

#endif
