/*
 * Leave tables: the value of every sub-rack of a rack, read from a KLV2 graph (a KWG of
 * sorted leaves) and laid out for the generator's equity ranking. Its functions are in
 * leave_table.c; its Python entry point, py_leave_table, is glue.c's.
 */
#ifndef ANCHOR_LEAVE_TABLE_H
#define ANCHOR_LEAVE_TABLE_H

#include "movegen_limits.h"

/* What leave_table returns before the values: each tile's key step, then the best leave
 * value by tiles played (LeaveTable.best and best_blank), so the generator's bounds need not
 * walk every sub-rack again at each call with a cached table (264 bytes). */
typedef struct {
    uint16_t step[MAX_LETTERS + 1];
    float best[MAX_RACK + 1], best_blank[MAX_RACK + 1];
} KeySteps;
_Static_assert(sizeof(KeySteps) == (MAX_LETTERS + 1) * 2 + 2 * (MAX_RACK + 1) * 4, "KeySteps is packed");

/* A KLV2 leave graph as the C code reads it: nodes (checked by kwg_check when loaded),
 * counts[i] = the leaves below node i and its later siblings (at a list's start, every leave
 * below the list), one value per leave. */
typedef struct {
    const uint32_t *nodes, *counts;
    uint32_t n;
    const float *values;
    size_t nvals;
} Klv;

float klv_value(const Klv *k, const uint8_t *leave, int len);
size_t leave_fill(const Klv *k, const uint8_t have[MAX_LETTERS + 1], uint16_t steps[MAX_LETTERS + 1], float *table, float *best, float *best_blank);

#endif
