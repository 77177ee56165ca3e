/*
 * Leave tables: the value of every sub-rack of a rack, read from a KLV2 graph (a KWG of
 * sorted leaves) and laid out for the generator's equity ranking; py_leave_table is the
 * Python entry point. Included by _movegen.c only.
 */
#ifndef ANCHOR_LEAVE_TABLE_H
#define ANCHOR_LEAVE_TABLE_H

#include "movegen_limits.h"

/* A KLV2 leave graph as the C code reads it: nodes (checked by kwg_check when loaded),
 * counts[i] = leaves below the sibling list starting at node i, one value per leave. */
typedef struct {
    const uint32_t *nodes, *counts;
    uint32_t n;
    const float *values;
    size_t nvals;
} Klv;

/* Index of a sorted leave in a KLV graph (DAWG order: a word before its extensions), or
 * -1. Every index it follows is checked, so a graph it was not given checked is safe. */
static long klv_index(const Klv *k, const uint8_t *leave, int len) {
    long idx = 0;
    uint32_t list = k->n ? kwg_arc(k->nodes[0]) : 0;
    for (int d = 0; d < len; d++) {
        if (!list) return -1;
        uint32_t i = list;
        for (;; i++) {
            if (i >= k->n) return -1;
            uint32_t node = k->nodes[i], arc = kwg_arc(node);
            if (kwg_tile(node) == leave[d]) break;
            idx += kwg_accepts(node) + (arc && arc < k->n ? k->counts[arc] : 0);
            if (kwg_is_end(node)) return -1;
        }
        uint32_t node = k->nodes[i];
        if (d == len - 1) return kwg_accepts(node) ? idx : -1;
        idx += kwg_accepts(node);
        list = kwg_arc(node);
    }
    return -1;
}

/* The value of keeping `leave` (sorted tiles, blank 0 first): 0 when the graph lacks it. */
static float klv_value(const Klv *k, const uint8_t *leave, int len) {
    long idx = len ? klv_index(k, leave, len) : -1;
    return idx >= 0 && (size_t)idx < k->nvals ? k->values[idx] : 0.0f;
}

/* The leave table of a rack (tile counts `have`, at most MAX_RACK tiles): steps[t] is
 * tile t's mixed-radix key step, table[key] the value of what is left when the tiles of
 * that key are used. table needs room for 1 << (tiles on the rack) values (the largest
 * radix a rack of that many tiles has). Returns the number of keys. */
static size_t leave_fill(const Klv *k, const uint8_t have[MAX_LETTERS + 1],
                         uint16_t steps[MAX_LETTERS + 1], float *table) {
    uint8_t distinct[MAX_RACK];
    int nd = 0;
    size_t radix = 1;
    memset(steps, 0, (MAX_LETTERS + 1) * sizeof *steps);
    for (int t = 0; t <= MAX_LETTERS && nd < MAX_RACK; t++) {
        if (!have[t]) continue;
        distinct[nd++] = (uint8_t)t;
        steps[t] = (uint16_t)radix;
        radix *= (size_t)have[t] + 1;
    }
    for (size_t key = 0; key < radix; key++) {
        uint8_t leave[MAX_RACK];
        int len = 0;
        size_t rest = key;
        for (int d = 0; d < nd; d++) {
            int t = distinct[d], used = (int)(rest % ((size_t)have[t] + 1));
            rest /= (size_t)have[t] + 1;
            for (int c = 0; c < have[t] - used; c++) leave[len++] = (uint8_t)t;
        }
        table[key] = klv_value(k, leave, len);
    }
    return radix;
}

PyDoc_STRVAR(leave_table_doc,
"leave_table(graph, counts, values, rack) -> (key_steps, leave_values)\n\n"
"graph: KLV2 leave nodes (u32, checked by kwg_check); counts: u32 per node, leaves below\n"
"each list start; values: f32 per leave; rack: 64 tile counts (blank first). Returns the\n"
"mixed-radix key step of each tile and, for every sub-multiset the rack can play, the\n"
"value of the leave it keeps (0 for a leave the file lacks).");

static PyObject *py_leave_table(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer graph, counts, values, rack;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &graph, &counts, &values, &rack)) return NULL;
    PyObject *result = NULL;
    uint32_t n = (uint32_t)(graph.len / 4);
    if (graph.len % 4 || n < 2 || counts.len != graph.len || values.len % 4 ||
        rack.len != MAX_LETTERS + 1 || (uintptr_t)graph.buf % 4 || (uintptr_t)counts.buf % 4 ||
        (uintptr_t)values.buf % 4) {
        PyErr_SetString(PyExc_ValueError, "leave_table: bad buffer sizes");
        goto out;
    }
    Klv klv = {graph.buf, counts.buf, n, values.buf, (size_t)values.len / 4};
    const uint8_t *have = rack.buf;
    int total = 0;
    for (int t = 0; t <= MAX_LETTERS; t++) total += have[t];
    if (total > MAX_RACK) {
        PyErr_SetString(PyExc_ValueError, "leave_table: rack too large");
        goto out;
    }
    uint16_t steps[MAX_LETTERS + 1];
    float *table = PyMem_Malloc(((size_t)1 << total) * sizeof *table);
    if (!table) {
        PyErr_NoMemory();
        goto out;
    }
    size_t radix = leave_fill(&klv, have, steps, table);
    PyObject *a = PyBytes_FromStringAndSize((const char *)steps, sizeof steps);
    PyObject *b = PyBytes_FromStringAndSize((const char *)table, (Py_ssize_t)(radix * sizeof *table));
    PyMem_Free(table);
    if (a && b) result = Py_BuildValue("NN", a, b);
    else {
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
out:
    PyBuffer_Release(&graph);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&values);
    PyBuffer_Release(&rack);
    return result;
}

#endif
