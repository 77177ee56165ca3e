/*
 * The KWG checker: walks a graph read from a file before anything trusts it (every arc in
 * range, tiles within the alphabet, sibling lists terminated, no cycles or runaway word
 * counts). Its functions are in kwg_check.c; its Python entry point, py_kwg_check, is
 * glue.c's.
 */
#ifndef ANCHOR_KWG_CHECK_H
#define ANCHOR_KWG_CHECK_H

#include "movegen_limits.h"

/* Outcome of walking the DAWG: filled by kwg_walk, or an error message. */
typedef struct {
    uint64_t words;
    unsigned max_length;
    uint32_t dawg_nodes; /* nodes visited from the DAWG root (shared lists counted again) */
    uint32_t extent;     /* one past the highest node index reachable from the DAWG root */
    uint32_t *counts;    /* optional, n entries: the words below a node and its later siblings
                          * (at a list's start, every word below the list) */
    char error[160];
} KwgReport;

int kwg_walk(const uint32_t *nodes, uint32_t n, unsigned alphabet, unsigned min_tile, KwgReport *rep);
const uint32_t *kwg_nodes_view(const void *buf, size_t len, uint32_t **owned);
int kwg_check_nodes(const uint32_t *nodes, uint32_t n, unsigned alphabet, unsigned min_tile, KwgReport *rep);

#endif
