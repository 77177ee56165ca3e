/*
 * anchor.engine._movegen: the module. Its functions (check_rules, kwg_check, leave_table,
 * board_census, position_fits; kwg_check and leave_table are glue.c's) and the Generator
 * type (generator.c). The C core they call is in the algorithm units core.h lists, which
 * know nothing of Python, so the GIL is released around it.
 */
#include "glue.h"
#include "endgame_peers.h"
#include "endgame.h"
#include "kwg_check.h"
#include "leave_table.h"

PyDoc_STRVAR(check_rules_doc,
"check_rules(rows, cols, values, letter_mult, word_mult, centre_row, centre_col, rack_size,\n"
"            bingo) -> float\n\n"
"Check ruleset constants against the generator's limits, as Generator() does; returns\n"
"an upper bound on any play's score, or raises ValueError naming what is out of range.");

PyDoc_STRVAR(kwg_check_doc,
"kwg_check(buffer, alphabet_size, min_tile=1, counts=False)\n"
"    -> (words, max_length, dawg_nodes, node_count[, counts])\n\n"
"counts: bytes of uint32 per node, the words below each sibling-list start (for\n"
"looking up a word's index, as leave files need).\n"
"Check a KWG buffer: size, every arc index in range, sibling lists terminated,\n"
"DAWG tiles within 1..alphabet_size, GADDAG tiles within 0..alphabet_size, no\n"
"cycles. Raises ValueError naming the first problem found.");
PyDoc_STRVAR(leave_table_doc,
"leave_table(graph, counts, values, rack) -> (key_steps, leave_values)\n\n"
"graph: KLV2 leave nodes (u32, checked by kwg_check); counts: u32 per node, leaves below\n"
"each list start; values: f32 per leave; rack: 64 tile counts (blank first). Returns the\n"
"mixed-radix key step of each tile (64 u16), followed by the best leave value left after\n"
"playing k tiles and the same over the plays with a blank among them, for k = 0..16\n"
"(2 x 17 f32, -inf where none), and, for every sub-multiset the rack can play, the value\n"
"of the leave it keeps (0 for a leave the file lacks).");

PyDoc_STRVAR(board_census_doc,
"board_census(cells, rows, cols, centre) -> (counts, stray)\n\n"
"The tiles on a board and whether they hang together: counts[t] tiles of each letter t\n"
"(1..63, blanks counted at 0 whatever they stand for), and stray: -1 when the board is\n"
"empty or its tiles are one group through square `centre` (row * cols + col), -2 when\n"
"there are tiles but none on the centre, else the first square whose tile is cut off.");

/* Tiles on the board by tile number (blanks at 0) and where connection fails: -1 when
 * every tile hangs together through the centre (or there is none), -2 when the centre is
 * empty under other tiles, else the first square not connected. -1 with a ValueError
 * when a cell holds no tile of MAX_LETTERS. */
static int census(const uint8_t *cells, int rows, int cols, int centre, long counts[MAX_LETTERS + 1], int *stray) {
    int any = 0;
    for (int i = 0; i < rows * cols; i++) {
        if (!cells[i]) continue;
        if ((cells[i] & TILE_MASK) == 0 || (cells[i] & TILE_MASK) > MAX_LETTERS) {
            PyErr_Format(PyExc_ValueError, "board_census: cell %d holds invalid byte %u", i, cells[i]);
            return -1;
        }
        any = 1;
        counts[(cells[i] & BLANK_FLAG) ? 0 : cells[i]]++;
    }
    *stray = -1;
    if (any && !cells[centre]) {
        *stray = -2;
    } else if (any) { /* flood fill from the centre over occupied squares */
        uint8_t seen[MAX_CELLS] = {0};
        int stack[MAX_CELLS], top = 0;
        seen[centre] = 1;
        stack[top++] = centre;
        while (top) {
            int at = stack[--top], r = at / cols, c = at % cols;
            int next[4] = {r > 0 ? at - cols : -1, r + 1 < rows ? at + cols : -1, c > 0 ? at - 1 : -1,
                           c + 1 < cols ? at + 1 : -1};
            for (int k = 0; k < 4; k++)
                if (next[k] >= 0 && cells[next[k]] && !seen[next[k]]) {
                    seen[next[k]] = 1;
                    stack[top++] = next[k];
                }
        }
        for (int i = 0; i < rows * cols && *stray == -1; i++)
            if (cells[i] && !seen[i]) *stray = i;
    }
    return 0;
}

static int census_args(const Py_buffer *view, int rows, int cols, int centre) {
    if (rows < 1 || cols < 1 || rows > MAX_SIDE || cols > MAX_SIDE || view->len != rows * cols ||
        centre < 0 || centre >= rows * cols) {
        PyErr_SetString(PyExc_ValueError, "board_census: rows x cols cells (at most 21 a side), centre on the board");
        return -1;
    }
    return 0;
}

static PyObject *py_board_census(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    int rows, cols, centre, stray;
    if (!PyArg_ParseTuple(args, "y*iii", &view, &rows, &cols, &centre)) return NULL;
    PyObject *result = NULL;
    long counts[MAX_LETTERS + 1] = {0};
    if (census_args(&view, rows, cols, centre) < 0 || census(view.buf, rows, cols, centre, counts, &stray) < 0)
        goto out;
    PyObject *list = PyList_New(MAX_LETTERS + 1);
    for (int t = 0; list && t <= MAX_LETTERS; t++) {
        PyObject *n = PyLong_FromLong(counts[t]);
        if (!n) Py_CLEAR(list);
        else PyList_SET_ITEM(list, t, n);
    }
    if (list) result = Py_BuildValue("Ni", list, stray);
out:
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(position_fits_doc,
"position_fits(cells, rows, cols, centre, supply, rack) -> bool\n\n"
"Whether the board's tiles hang together through the centre (or there are none) and the\n"
"board and rack together hold no more of any tile than the set: supply, the set's count\n"
"of each tile as uint32 (blank first); rack, the rack's tile numbers (blank 0). The\n"
"common case in one pass; legality.py says what is wrong when it is False.");

static PyObject *py_position_fits(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view, supply, rack;
    int rows, cols, centre, stray;
    if (!PyArg_ParseTuple(args, "y*iiiy*y*", &view, &rows, &cols, &centre, &supply, &rack)) return NULL;
    PyObject *result = NULL;
    long counts[MAX_LETTERS + 1] = {0};
    if (supply.len % 4 || supply.len / 4 > MAX_LETTERS + 1) {
        PyErr_SetString(PyExc_ValueError, "position_fits: supply is at most 64 uint32 counts");
        goto out;
    }
    if (census_args(&view, rows, cols, centre) < 0 || census(view.buf, rows, cols, centre, counts, &stray) < 0)
        goto out;
    const uint8_t *tiles = rack.buf;
    const Py_ssize_t kinds = supply.len / 4;
    int fits = stray == -1;
    for (Py_ssize_t i = 0; i < rack.len && fits; i++) {
        if (tiles[i] >= kinds) fits = 0;
        else counts[tiles[i]]++;
    }
    for (Py_ssize_t t = 0; t <= MAX_LETTERS && fits; t++) {
        uint32_t have = 0;
        if (t < kinds) memcpy(&have, (const char *)supply.buf + 4 * t, 4);
        if (counts[t] > (long)have) fits = 0;
    }
    result = PyBool_FromLong(fits);
out:
    PyBuffer_Release(&view);
    PyBuffer_Release(&supply);
    PyBuffer_Release(&rack);
    return result;
}

PyDoc_STRVAR(shuffled_doc,
"shuffled(key, items) -> bytes\n\n"
"items (at most 65535 bytes) in the order random.Random(seed).shuffle leaves them, key being\n"
"abs(seed) as little-endian 32-bit words (at least one), as CPython seeds from an int.");

static PyMethodDef movegen_methods[] = {
    {"shuffled", py_shuffled, METH_VARARGS, shuffled_doc},
    {"kwg_check", py_kwg_check, METH_VARARGS, kwg_check_doc},
    {"leave_table", py_leave_table, METH_VARARGS, leave_table_doc},
    {"position_fits", py_position_fits, METH_VARARGS, position_fits_doc},
    {"board_census", py_board_census, METH_VARARGS, board_census_doc},
    {"peers_bytes", py_peers_bytes, METH_VARARGS,
     "peers_bytes(slots, table_bits) -> the bytes of an endgame peers' region"},
    {"peers_init", py_peers_init, METH_VARARGS,
     "peers_init(region, slots, table_bits): lay out a zeroed writable buffer as a peers' region"},
    {"peers_claim", py_peers_claim, METH_VARARGS,
     "peers_claim(region, key, process) -> the slot of endgame `key` for process 0..63, or -1"},
    {"peers_release", py_peers_release, METH_VARARGS,
     "peers_release(region, slot, process): the process is done with the slot (slot -1: with\n"
     "every slot, as when it was killed)"},
    {"check_rules", (PyCFunction)(void (*)(void))py_check_rules, METH_VARARGS | METH_KEYWORDS,
     check_rules_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef movegen_module = {
    PyModuleDef_HEAD_INIT, "anchor.engine._movegen",
    "Native core of Anchor: KWG checking and move generation.", -1, movegen_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__movegen(void) {
    if (PyType_Ready(&GeneratorType) < 0) return NULL;
    PyObject *m = PyModule_Create(&movegen_module);
    if (!m) return NULL;
    Py_INCREF(&GeneratorType);
    if (PyModule_AddObject(m, "Generator", (PyObject *)&GeneratorType) < 0) {
        Py_DECREF(&GeneratorType);
        Py_DECREF(m);
        return NULL;
    }
    /* The limits rules.py checks ruleset files against: one definition, here. */
    if (PyModule_AddIntConstant(m, "RECORD_SIZE", (long)sizeof(MoveRecord)) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SIDE", MAX_SIDE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_LETTERS", MAX_LETTERS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_RACK", MAX_RACK) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TILE_VALUE", MAX_TILE_VALUE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TILES", MAX_TILES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_BINGO", MAX_BINGO) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SCORE", MAX_SCORE) < 0 ||
        PyModule_AddIntConstant(m, "ENDGAME_MAX_PLIES", ENDGAME_MAX_PLIES) < 0 ||
        PyModule_AddIntConstant(m, "ENDGAME_MIN_TABLE", ENDGAME_MIN_TABLE) < 0 ||
        PyModule_AddIntConstant(m, "ENDGAME_MAX_TABLE", ENDGAME_MAX_TABLE) < 0 ||
        PyModule_AddIntConstant(m, "PEERS_MAX_PROCESSES", PEERS_MAX_PROCESSES) < 0 ||
        PyModule_AddIntConstant(m, "PEERS_MAX_SLOTS", PEERS_MAX_SLOTS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
