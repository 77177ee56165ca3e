/*
 * anchor.engine._movegen: Generator.describe, plays as Python values (notation, words,
 * the tiles placed), made from the generator's move records.
 */
#include "glue.h"


/* The text of cell byte b (borrowed), or NULL with a ValueError when the table has none. */
static PyObject *cell_str(PyObject *text, uint8_t b) {
    PyObject *s = PyTuple_GET_ITEM(text, b);
    if (!PyUnicode_Check(s) || PyUnicode_GET_LENGTH(s) == 0) {
        PyErr_Format(PyExc_ValueError, "describe: no text for cell byte %u", b);
        return NULL;
    }
    return s;
}

PyObject *Generator_describe(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"records", "cells", "text", "lists", NULL};
    Py_buffer rec, cells;
    PyObject *text, *out = NULL, *across = NULL, *down = NULL, *open_ = NULL, *close_ = NULL,
             *empty = NULL;
    int lists = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*O!|p", names, &rec, &cells, &PyTuple_Type, &text,
                                     &lists))
        return NULL;
    const Rules *r = &self->core.rules;
    if (rec.len % (Py_ssize_t)sizeof(MoveRecord) || cells.len != r->rows * r->cols ||
        PyTuple_GET_SIZE(text) != 256) {
        PyErr_SetString(PyExc_ValueError, "describe: records of 32 bytes, the board's cells, 256 texts");
        goto done;
    }
    Py_ssize_t n = rec.len / (Py_ssize_t)sizeof(MoveRecord);
    const uint8_t *board = cells.buf;
    across = PyUnicode_FromString("across");
    down = PyUnicode_FromString("down");
    open_ = PyUnicode_FromString("(");
    close_ = PyUnicode_FromString(")");
    empty = PyUnicode_FromString("");
    out = PyList_New(n);
    if (!across || !down || !open_ || !close_ || !empty || !out) goto fail;
    for (Py_ssize_t k = 0; k < n; k++) {
        MoveRecord m;
        memcpy(&m, (const uint8_t *)rec.buf + k * (Py_ssize_t)sizeof m, sizeof m);
        int step = m.dir ? r->cols : 1;
        if (m.dir > 1 || m.len < 1 || m.len > RECORD_TILES || m.row >= r->rows || m.col >= r->cols ||
            (m.dir ? m.row : m.col) + m.len > (m.dir ? r->rows : r->cols)) {
            PyErr_Format(PyExc_ValueError, "describe: record %zd is not a play on this board", k);
            goto fail;
        }
        /* notation: the coordinate, then each letter, board letters in parentheses */
        char coord[16];
        int n = m.dir ? snprintf(coord, sizeof coord, "%c%d ", 'A' + m.col, m.row + 1)
                      : snprintf(coord, sizeof coord, "%d%c ", m.row + 1, 'A' + m.col);
        PyObject *word = PyList_New(m.len), *notation = PyList_New(0), *placed = PyList_New(0);
        PyObject *head = PyUnicode_FromStringAndSize(coord, n), *entry = NULL;
        int ok = word && notation && placed && head && PyList_Append(notation, head) == 0;
        int through = 0;
        for (int i = 0; ok && i < m.len; i++) {
            int at = m.row * r->cols + m.col + i * step;
            uint8_t tile = m.tiles[i];
            PyObject *letter = cell_str(text, tile ? tile : board[at]);
            if (!letter) {
                ok = 0;
                break;
            }
            Py_INCREF(letter);
            PyList_SET_ITEM(word, i, letter);
            if (tile) {
                int row = m.dir ? m.row + i : m.row, col = m.dir ? m.col : m.col + i;
                PyObject *square = lists ? PyList_New(3) : PyTuple_New(3);
                PyObject *y = PyLong_FromLong(row), *x = PyLong_FromLong(col);
                ok = square && y && x;
                if (ok) {
                    Py_INCREF(letter);
                    if (lists) {
                        PyList_SET_ITEM(square, 0, y);
                        PyList_SET_ITEM(square, 1, x);
                        PyList_SET_ITEM(square, 2, letter);
                    } else {
                        PyTuple_SET_ITEM(square, 0, y);
                        PyTuple_SET_ITEM(square, 1, x);
                        PyTuple_SET_ITEM(square, 2, letter);
                    }
                    ok = PyList_Append(placed, square) == 0;
                } else {
                    Py_XDECREF(y);
                    Py_XDECREF(x);
                }
                Py_XDECREF(square);
                if (ok && through) ok = PyList_Append(notation, close_) == 0;
                through = 0;
            } else {
                if (!through) ok = PyList_Append(notation, open_) == 0;
                through = 1;
            }
            if (ok) ok = PyList_Append(notation, letter) == 0;
        }
        if (ok && through) ok = PyList_Append(notation, close_) == 0;
        if (ok) {
            PyObject *items[7] = {PyUnicode_Join(empty, notation), PyLong_FromLong(m.score),
                                  PyLong_FromLong(m.row), PyLong_FromLong(m.col),
                                  m.dir ? down : across, PyUnicode_Join(empty, word),
                                  lists ? placed : PyList_AsTuple(placed)};
            Py_INCREF(items[4]);
            if (lists) Py_INCREF(placed);
            int complete = 1;
            for (int j = 0; j < 7; j++) complete &= items[j] != NULL;
            entry = complete ? (lists ? PyList_New(7) : PyTuple_New(7)) : NULL;
            for (int j = 0; j < 7; j++) {
                if (entry && lists) PyList_SET_ITEM(entry, j, items[j]);
                else if (entry) PyTuple_SET_ITEM(entry, j, items[j]);
                else Py_XDECREF(items[j]);
            }
        }
        Py_XDECREF(head);
        Py_XDECREF(word);
        Py_XDECREF(notation);
        Py_XDECREF(placed);
        if (!entry) goto fail;
        PyList_SET_ITEM(out, k, entry);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    Py_XDECREF(across);
    Py_XDECREF(down);
    Py_XDECREF(open_);
    Py_XDECREF(close_);
    Py_XDECREF(empty);
    PyBuffer_Release(&rec);
    PyBuffer_Release(&cells);
    return out;
}
