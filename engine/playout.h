/*
 * Monte Carlo playouts: engine/simulate.py's _playout (the reference, and the tests'
 * oracle) without a Python object per ply. A playout makes a candidate move, then both
 * sides take turns with their best play by equity (an exchange or the pass when worth
 * more, exchanges only while the bag holds a rack), drawing from a given tile order.
 * Once the bag is empty a side plays its best by score plus the going-out adjustment (no
 * leave values). Its value: the spread over those moves plus, while tiles are still to be
 * drawn, the leave each side kept last (ours minus theirs); when a side goes out, the
 * spread with `out_factor` times the other rack's tiles.
 * Its functions are in playout.c.
 */
#ifndef ANCHOR_PLAYOUT_H
#define ANCHOR_PLAYOUT_H

#include "movegen_limits.h"
#include "leave_table.h"

/* The opponent's first replies on the position kept for every candidate (Playout.base):
 * a candidate changes a few lines, so the best play off them is nearly always among these. */
#define BASE_PLAYS 8

enum { TURN_PLAY, TURN_EXCHANGE, TURN_PASS };

/* One move of a playout: tiles laid on squares, tiles put back, or nothing. */
typedef struct {
    int kind;
    int32_t score;
    int count;                     /* tiles laid */
    uint16_t square[MAX_RACK];     /* row * cols + col */
    uint8_t cell[MAX_RACK];        /* the tile, | BLANK_FLAG for a blank */
    uint8_t back[MAX_LETTERS + 1]; /* exchange: tiles put back, by tile (blank 0) */
} Turn;

/* Everything one playout changes, and the work buffers its searches reuse. */
typedef struct {
    const Core *g;
    const Klv *klv;
    Search *passes;                   /* two: across and down, holding the board as it stands */
    const Search *start;              /* the same for the position itself (prepared once) */
    Search *scratch;                  /* check: the board prepared whole, to compare */
    MoveBuf buf;                      /* best-first, keep 1, by equity (or end_values) */
    int out_factor;                   /* the going-out adjustment, times the other rack */
    float *table;                     /* leave tables: 1 << rack_size values for each side */
    /* the rack whose leave table each side's part of `table` holds (best_turn), kept for
     * the next search from the same rack: a playout's opponent holds the same rack for
     * every candidate of an iteration. 0 in table_valid: the part holds something else. */
    uint8_t table_rack[2][MAX_LETTERS + 1];
    int table_valid[2];
    size_t table_keys[2];
    uint16_t table_steps[2][MAX_LETTERS + 1];
    float table_best[2][MAX_RACK + 1], table_best_blank[2][MAX_RACK + 1]; /* by tiles played */
    SearchArgs args;
    /* The opponent's first reply is searched from one rack for every candidate of an
     * iteration (Generator.playouts sets share_replies): its best BASE_PLAYS plays on the
     * position itself are found once, and a candidate's board is searched only on the
     * lines the candidate changed, the best base play on the other lines to beat
     * (reply_search). base_state: 0 not found yet, 1 found, -1 not to be used. */
    int share_replies, replying, base_state, base_complete;
    const uint8_t *position;          /* the position's board (playout's `board`) */
    uint8_t base_rack[MAX_LETTERS + 1];
    MoveBuf base;                     /* keep BASE_PLAYS, by equity */
    size_t base_rank[BASE_PLAYS];     /* base's plays, best first */
    uint8_t board[MAX_CELLS];
    uint8_t rack[2][MAX_LETTERS + 1]; /* tile counts, blank 0 */
    int held[2];
    uint8_t kept[2][MAX_LETTERS + 1]; /* what each side kept after its last move */
    int has_kept[2];
    uint8_t *bag;                     /* drawn from head, exchanges return at tail */
    uint64_t generated;               /* plays the searches made (self-play counts them) */
    size_t head, tail;
} Playout;

/* One move of a self-played game (selfplay_game): the rack it was made from, the turn,
 * the play's record (for its notation), the plays the search generated, its time. */
typedef struct {
    Turn turn;
    MoveRecord record;
    uint8_t rack[MAX_LETTERS + 1];
    uint64_t generated;
    double seconds;
} GameMove;

/* Free what a Playout was given (its passes, table, bag and move buffers). */
void playout_release(Playout *p);

int selfplay_game(Playout *p, const uint8_t *order, size_t n, int scoreless, int by_score, GameMove *moves,
                  size_t room, size_t *count, int *out);

int playout(Playout *p, const uint8_t *board, const uint8_t *mine, const Turn *candidate, const uint8_t *order, size_t n, int plies, double *value, long *unplayed);

#endif
