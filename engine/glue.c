/*
 * anchor.engine._movegen: what the glue units share (glue.h): a board and racks read from
 * Python buffers and checked once for every method, a search's failure raised as a Python
 * exception, a budget as a deadline, and the module functions over the algorithm units
 * (kwg_check, leave_table). Nothing here is searched: the algorithm units are core.h's.
 */
#include "glue.h"
#include "kwg_check.h"
#include "leave_table.h"

/* A board (rows * cols cell bytes) and `n` racks (alphabet + 1 tile counts each, blanks
 * first) from Python buffers, checked once for every method: the sizes, every cell empty or
 * a tile of the alphabet (not asked when `checked`: the board equals one checked before),
 * every rack `least`..rack_size tiles. Copies the board into `board` (when not NULL) and
 * the racks into `racks`. Returns the first rack's tile count, or -1 with a ValueError
 * naming `who`. */
int read_position(const Rules *r, const char *who, const Py_buffer *cells, int checked,
                  const Py_buffer *rack_views, int n, int least, uint8_t *board,
                  uint8_t racks[][MAX_LETTERS + 1]) {
    const int ncells = r->rows * r->cols;
    if (cells->len != ncells) {
        PyErr_Format(PyExc_ValueError, "%s: the board has %zd cells; %d board cells expected", who,
                     cells->len, ncells);
        return -1;
    }
    const uint8_t *cell = cells->buf;
    for (int i = 0; i < ncells && !checked; i++) {
        unsigned t = cell[i] & TILE_MASK;
        if (cell[i] && (t < 1 || t > (unsigned)r->alphabet)) {
            PyErr_Format(PyExc_ValueError, "%s: board cell %d holds invalid byte %u", who, i, cell[i]);
            return -1;
        }
    }
    if (board) memcpy(board, cell, (size_t)ncells);
    int first = 0;
    for (int k = 0; k < n; k++) {
        if (rack_views[k].len != r->alphabet + 1) {
            PyErr_Format(PyExc_ValueError, "%s: a rack must give %d counts (one a tile)", who, r->alphabet + 1);
            return -1;
        }
        int total = 0;
        memcpy(racks[k], rack_views[k].buf, (size_t)r->alphabet + 1);
        for (int t = 0; t <= r->alphabet; t++) total += racks[k][t];
        if (total < least || total > r->rack_size) {
            PyErr_Format(PyExc_ValueError, "%s: a rack holds %d tiles; at least %d and at most %d", who,
                         total, least, r->rack_size);
            return -1;
        }
        if (k == 0) first = total;
    }
    return first;
}

/* The moment `budget` seconds from now (CLOCK_MONOTONIC); budget 0 means none. */
struct timespec deadline_after(double budget) {
    struct timespec at = {0, 0};
    if (budget <= 0.0) return at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    double whole = (double)(long)budget;
    at.tv_sec += (time_t)whole;
    at.tv_nsec += (long)((budget - whole) * 1e9);
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    return at;
}

/* The Python exception for a search's FAIL_ code: TimeoutError past the budget, else
 * MemoryError. */
void raise_failure(int failed, const char *what, double budget) {
    if (failed == FAIL_TIME)
        PyErr_Format(PyExc_TimeoutError, "%s ran past the budget of %g s", what, budget);
    else if (failed == FAIL_CHECK)
        PyErr_Format(PyExc_AssertionError, "%s: a board laid tile by tile differs from the board prepared whole", what);
    else
        PyErr_NoMemory();
}

/* The leave graph Leaves.graph() gives (nodes, leaves below each list, values) as a Klv,
 * or -1 with a ValueError naming `who` when its buffers do not fit together. */
int klv_from_buffers(Klv *klv, const Py_buffer *graph, const Py_buffer *counts, const Py_buffer *values,
                     const char *who) {
    const uint32_t n = (uint32_t)(graph->len / 4);
    if (graph->len % 4 || n < 2 || counts->len != graph->len || values->len % 4 || (uintptr_t)graph->buf % 4 ||
        (uintptr_t)counts->buf % 4 || (uintptr_t)values->buf % 4) {
        PyErr_Format(PyExc_ValueError, "%s: the leave graph's buffers do not fit together", who);
        return -1;
    }
    *klv = (Klv){graph->buf, counts->buf, n, values->buf, (size_t)values->len / 4};
    return 0;
}

/* kwg_check(buffer, alphabet_size, min_tile=1, counts=False): the module's checker. */
PyObject *py_kwg_check(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    unsigned alphabet;
    unsigned min_tile = 1; /* 0 for leave graphs (KLV), where tile 0 is the blank */
    int want_counts = 0;
    if (!PyArg_ParseTuple(args, "y*I|Ip", &view, &alphabet, &min_tile, &want_counts)) return NULL;
    PyObject *result = NULL;
    uint32_t *owned = NULL;
    KwgReport rep;
    rep.error[0] = 0;
    rep.counts = NULL;
    if (alphabet < 1 || alphabet > 255) {
        PyErr_Format(PyExc_ValueError, "alphabet size %u is outside 1..255", alphabet);
        goto out;
    }
    if (view.len % 4 != 0) {
        PyErr_Format(PyExc_ValueError, "size %zd is not a multiple of 4 bytes (truncated?)", view.len);
        goto out;
    }
    if (view.len < 8) {
        PyErr_Format(PyExc_ValueError, "only %zd bytes: a KWG has at least two nodes", view.len);
        goto out;
    }
    if ((uint64_t)view.len / 4 > KWG_MAX_NODES) {
        PyErr_Format(PyExc_ValueError, "%zd nodes: more than a KWG can address", view.len / 4);
        goto out;
    }
    uint32_t n = (uint32_t)(view.len / 4);
    const uint32_t *nodes = kwg_nodes_view(view.buf, (size_t)view.len, &owned);
    if (!nodes) {
        PyErr_NoMemory();
        goto out;
    }
    if (want_counts && !(rep.counts = calloc(n, sizeof *rep.counts))) {
        PyErr_NoMemory();
        goto out;
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = kwg_check_nodes(nodes, n, alphabet, min_tile, &rep) != 0;
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_SetString(PyExc_ValueError, rep.error);
        goto out;
    }
    if (rep.counts) {
        PyObject *counts = PyBytes_FromStringAndSize((const char *)rep.counts, (Py_ssize_t)n * 4);
        if (counts)
            result = Py_BuildValue("KIIIN", (unsigned long long)rep.words, rep.max_length,
                                   rep.dawg_nodes, n, counts);
    } else {
        result = Py_BuildValue("KIII", (unsigned long long)rep.words, rep.max_length, rep.dawg_nodes, n);
    }
out:
    free(rep.counts);
    free(owned);
    PyBuffer_Release(&view);
    return result;
}

PyObject *py_leave_table(PyObject *self, PyObject *args) {
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
    KeySteps steps;
    float *table = PyMem_Malloc(((size_t)1 << total) * sizeof *table);
    if (!table) {
        PyErr_NoMemory();
        goto out;
    }
    size_t radix = leave_fill(&klv, have, steps.step, table, steps.best, steps.best_blank);
    PyObject *a = PyBytes_FromStringAndSize((const char *)&steps, sizeof steps);
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
