/*
 * Leave tables: the value of every sub-rack of a rack, read from a KLV2 graph (a KWG of
 * sorted leaves) and laid out for the generator's equity ranking; py_leave_table is the
 * Python entry point. Included by _movegen.c only.
 */
#ifndef ANCHOR_LEAVE_TABLE_H
#define ANCHOR_LEAVE_TABLE_H

#include "movegen_limits.h"

/* Index of a sorted leave in a KLV graph (DAWG order: a word before its extensions),
 * or -1. counts[i] = leaves below the sibling list starting at node i. */
static long klv_index(const uint32_t *nodes, uint32_t n, const uint32_t *counts,
                      const uint8_t *leave, int len) {
    long idx = 0;
    uint32_t list = kwg_arc(nodes[0]);
    for (int k = 0; k < len; k++) {
        if (!list) return -1;
        uint32_t i = list;
        for (;; i++) {
            if (i >= n) return -1;
            uint32_t node = nodes[i];
            if (kwg_tile(node) == leave[k]) break;
            idx += kwg_accepts(node) + (kwg_arc(node) ? counts[kwg_arc(node)] : 0);
            if (kwg_is_end(node)) return -1;
        }
        uint32_t node = nodes[i];
        if (k == len - 1) return kwg_accepts(node) ? idx : -1;
        idx += kwg_accepts(node);
        list = kwg_arc(node);
    }
    return -1;
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
    const uint32_t *nodes = graph.buf, *cnt = counts.buf;
    const float *vals = values.buf;
    size_t nvals = (size_t)values.len / 4;
    const uint8_t *have = rack.buf;
    uint16_t steps[MAX_LETTERS + 1] = {0};
    uint8_t distinct[MAX_RACK];
    int nd = 0, total = 0;
    size_t radix = 1;
    for (int t = 0; t <= MAX_LETTERS; t++) {
        if (!have[t]) continue;
        total += have[t];
        if (nd == MAX_RACK || total > MAX_RACK) {
            PyErr_SetString(PyExc_ValueError, "leave_table: rack too large");
            goto out;
        }
        distinct[nd++] = (uint8_t)t;
        steps[t] = (uint16_t)radix;
        radix *= (size_t)have[t] + 1;
    }
    for (uint32_t i = 0; i < n; i++)
        if (kwg_arc(nodes[i]) >= n) {
            PyErr_SetString(PyExc_ValueError, "leave_table: graph arc out of range");
            goto out;
        }
    float *table = PyMem_Malloc(radix * sizeof *table);
    if (!table) {
        PyErr_NoMemory();
        goto out;
    }
    for (size_t key = 0; key < radix; key++) {
        uint8_t leave[MAX_RACK];
        int len = 0;
        size_t rest = key;
        for (int d = 0; d < nd; d++) {
            int t = distinct[d], used = (int)(rest % ((size_t)have[t] + 1));
            rest /= (size_t)have[t] + 1;
            for (int k = 0; k < have[t] - used; k++) leave[len++] = (uint8_t)t;
        }
        long idx = len ? klv_index(nodes, n, cnt, leave, len) : -1;
        table[key] = (idx >= 0 && (size_t)idx < nvals) ? vals[idx] : 0.0f;
    }
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
