/*
 * anchor.engine._movegen: a ruleset's numbers, read from Python and checked (board size,
 * tile values, premiums, the highest score a play could make), for the Generator and for
 * check_rules, which Ruleset.load runs so a bad file fails at load.
 */
#include "glue.h"

static int read_grid(PyObject *obj, uint8_t *dst, int cells, const char *what, int max_value) {
    Py_buffer v;
    if (PyObject_GetBuffer(obj, &v, PyBUF_SIMPLE) < 0) return -1;
    int ok = v.len == cells;
    if (ok) {
        memcpy(dst, v.buf, (size_t)cells);
        for (int i = 0; i < cells; i++)
            if (dst[i] < 1 || dst[i] > max_value) ok = 0;
    }
    PyBuffer_Release(&v);
    if (!ok) PyErr_Format(PyExc_ValueError, "%s must be %d bytes, each 1..%d", what, cells, max_value);
    return ok ? 0 : -1;
}

/* An upper bound on any play's score under these rules: on the line with the largest
 * product of rack_size word premiums, every square at the highest tile value and letter
 * premium, and every placed tile making the longest possible cross-word; bingo added. */
double max_score(const Rules *r) {
    int32_t top = 0;
    for (int t = 1; t <= r->alphabet; t++)
        if (r->values[t] > top) top = r->values[t];
    double word = 1.0;
    for (int dir = 0; dir < 2; dir++) {
        int rows = dir ? r->cols : r->rows, cols = dir ? r->rows : r->cols;
        for (int row = 0; row < rows; row++) {
            uint8_t wm[MAX_SIDE];
            for (int col = 0; col < cols; col++) { /* sorted, highest first */
                int j = col;
                for (; j > 0 && wm[j - 1] < r->wm[dir][row * cols + col]; j--) wm[j] = wm[j - 1];
                wm[j] = r->wm[dir][row * cols + col];
            }
            double product = 1.0;
            for (int k = 0; k < r->rack_size && k < cols; k++) product *= wm[k];
            if (product > word) word = product;
        }
    }
    int side = r->rows > r->cols ? r->rows : r->cols;
    double main = word * side * top * 4;
    double cross = (double)r->rack_size * (side * top + top * 4) * 4;
    return main + cross + r->bingo;
}

/* Checks the ruleset constants (r->rows .. r->bingo already set) and reads the tile values
 * and premium grids into r. The same checks serve Generator() and check_rules(), so the
 * limits a ruleset file is held to are the generator's own. -1 with ValueError. */
int rules_load(Rules *r, PyObject *values, PyObject *lm, PyObject *wm) {
    if (r->rows < 2 || r->rows > MAX_SIDE || r->cols < 2 || r->cols > MAX_SIDE) {
        PyErr_Format(PyExc_ValueError, "board %dx%d: each side must be 2..%d", r->rows, r->cols, MAX_SIDE);
        return -1;
    }
    if (r->centre_row < 0 || r->centre_row >= r->rows || r->centre_col < 0 || r->centre_col >= r->cols) {
        PyErr_SetString(PyExc_ValueError, "centre square is off the board");
        return -1;
    }
    if (r->rack_size < 1 || r->rack_size > MAX_RACK) {
        PyErr_Format(PyExc_ValueError, "rack size %d: it must be 1..%d", r->rack_size, MAX_RACK);
        return -1;
    }
    if (r->bingo < 0 || r->bingo > MAX_BINGO) {
        PyErr_Format(PyExc_ValueError, "bingo bonus %d: it must be 0..%d", r->bingo, MAX_BINGO);
        return -1;
    }
    PyObject *seq = PySequence_Fast(values, "values must be a sequence of ints");
    if (!seq) return -1;
    Py_ssize_t nv = PySequence_Fast_GET_SIZE(seq);
    if (nv < 2 || nv > MAX_LETTERS + 1) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "values must list 2..%d entries (blank first)", MAX_LETTERS + 1);
        return -1;
    }
    r->alphabet = (int)nv - 1;
    memset(r->values, 0, sizeof r->values);
    for (Py_ssize_t i = 0; i < nv; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0 || v > MAX_TILE_VALUE || (i == 0 && v != 0)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "tile %zd is worth %ld points; values must be 0..%d",
                         i, v, MAX_TILE_VALUE);
            return -1;
        }
        r->values[i] = (int32_t)v;
    }
    Py_DECREF(seq);
    int cells = r->rows * r->cols;
    if (read_grid(lm, r->lm[0], cells, "letter_mult", 4) < 0) return -1;
    if (read_grid(wm, r->wm[0], cells, "word_mult", 4) < 0) return -1;
    for (int row = 0; row < r->cols; row++) /* the down pass reads the board transposed */
        for (int col = 0; col < r->rows; col++) {
            r->lm[1][row * r->rows + col] = r->lm[0][col * r->cols + row];
            r->wm[1][row * r->rows + col] = r->wm[0][col * r->cols + row];
        }
    double most = max_score(r);
    if (most >= MAX_SCORE) {
        PyErr_Format(PyExc_ValueError,
                     "tile values and premiums allow a play of up to %lld points; scores must stay "
                     "below %d (they are ranked as exact 32-bit floats)", (long long)most, MAX_SCORE);
        return -1;
    }
    return 0;
}


static char *rules_names[] = {"rows", "cols", "values", "letter_mult", "word_mult",
                              "centre_row", "centre_col", "rack_size", "bingo", NULL};

PyObject *py_check_rules(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    PyObject *values, *lm, *wm;
    Rules *r = malloc(sizeof *r);
    if (!r) return PyErr_NoMemory();
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iiOOOiiii", rules_names, &r->rows, &r->cols,
                                     &values, &lm, &wm, &r->centre_row, &r->centre_col,
                                     &r->rack_size, &r->bingo) ||
        rules_load(r, values, lm, wm) < 0) {
        free(r);
        return NULL;
    }
    double most = max_score(r);
    free(r);
    return PyFloat_FromDouble(most);
}

