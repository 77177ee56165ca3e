/*
 * anchor.engine._movegen: Generator.selfplay, a whole self-played game in C (playout.c's
 * selfplay_game), for engine/selfplay.py's equity players when nothing is checked.
 */
#include "glue.h"
#include "playout.h"

/* Moves a game may take: every tile laid one at a time, and each side's scoreless turns
 * between them, is far below this. */
#define MAX_GAME_MOVES 1024


const char selfplay_doc[] =
    "selfplay(order, graph, counts, values, out_factor, scoreless, budget=0.0, score=False)\n"
    "    -> (moves, went_out, cells, rack0, rack1)\n\n"
    "A two-player game from the empty board, both sides by equity with the leave graph\n"
    "(Leaves.graph()); the empty bag by score plus out_factor times the other rack. With\n"
    "score, both by score alone (Greedy; the graph is not read). order:\n"
    "every tile of the set (tile numbers, blank 0), the first rack first, then the second,\n"
    "then the bag; exchanged tiles go back at its bottom. It ends when a side goes out or\n"
    "after `scoreless` scoreless turns in a row. moves: (kind, score, record, back, rack,\n"
    "generated, seconds) each: kind 0 play, 1 exchange, 2 pass; record: the play's packed\n"
    "move record (else b''); back: the tiles exchanged, by tile; rack: the mover's tiles\n"
    "before it; generated: plays its search made (none with the bag empty). cells: the\n"
    "final board; rack0, rack1: the racks left, by tile.";

PyObject *Generator_selfplay(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"order", "graph", "counts", "values", "out_factor", "scoreless", "budget", "score", NULL};
    Py_buffer order_view, graph, counts, values;
    int out_factor, scoreless, by_score = 0;
    double budget = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*y*y*ii|dp", names, &order_view, &graph, &counts, &values,
                                     &out_factor, &scoreless, &budget, &by_score))
        return NULL;
    const Rules *r = &self->core.rules;
    PyObject *result = NULL;
    Playout p = {0};
    GameMove *moves = NULL;
    const uint8_t *order = order_view.buf;
    const size_t n = (size_t)order_view.len;
    if (n < 2 * (size_t)r->rack_size || n > MAX_PLAYOUT_TILES || out_factor < 0 || out_factor > 11 ||
        scoreless < 1 || scoreless > 99 || !(budget >= 0.0 && budget <= 1e6)) {
        PyErr_Format(PyExc_ValueError,
                     "selfplay: %d to %d tiles, out_factor 0..11, scoreless 1..99, budget 0..1e6 s",
                     2 * r->rack_size, MAX_PLAYOUT_TILES);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (order[i] > r->alphabet) {
            PyErr_Format(PyExc_ValueError, "selfplay: tile %u is not a tile", order[i]);
            goto out;
        }
    Klv klv;
    if (!by_score && klv_from_buffers(&klv, &graph, &counts, &values, "selfplay") < 0) goto out;
    p.g = &self->core;
    p.klv = by_score ? NULL : &klv;
    p.out_factor = out_factor;
    p.passes = malloc(2 * sizeof *p.passes);
    p.table = malloc(((size_t)2 << r->rack_size) * sizeof *p.table); /* a table a side */
    p.bag = malloc(n + (size_t)MAX_RACK * MAX_GAME_MOVES); /* exchanges come back at the tail */
    moves = malloc(MAX_GAME_MOVES * sizeof *moves);
    if (!p.passes || !p.table || !p.bag || !moves || movebuf_init(&p.buf, 1, 1) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    const uint8_t empty[MAX_CELLS] = {0};
    for (int dir = 0; dir < 2; dir++) {
        attach(&p.passes[dir], &self->core);
        prepare_pass(&p.passes[dir], r, empty, dir, every_letter(r));
    }
    p.args = (SearchArgs){MODE_ACROSS | MODE_DOWN, 1, 0, NULL, budget > 0.0, deadline_after(budget), 1};
    size_t count = 0;
    int went_out = 0, failed;
    Py_BEGIN_ALLOW_THREADS
    failed = selfplay_game(&p, order, n, scoreless, by_score, moves, MAX_GAME_MOVES, &count, &went_out);
    Py_END_ALLOW_THREADS
    if (failed) {
        raise_failure(failed, "the self-played game", budget);
        goto out;
    }
    PyObject *list = PyList_New((Py_ssize_t)count);
    if (!list) goto out;
    for (size_t i = 0; i < count; i++) {
        const GameMove *m = &moves[i];
        const int play = m->turn.kind == TURN_PLAY;
        PyObject *item = Py_BuildValue(
            "(iiy#y#y#Kd)", m->turn.kind, (int)m->turn.score, (const char *)&m->record,
            (Py_ssize_t)(play ? sizeof m->record : 0), (const char *)m->turn.back, (Py_ssize_t)(r->alphabet + 1),
            (const char *)m->rack, (Py_ssize_t)(r->alphabet + 1), (unsigned long long)m->generated, m->seconds);
        if (!item) {
            Py_DECREF(list);
            goto out;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    result = Py_BuildValue("(Niy#y#y#)", list, went_out, (const char *)p.board, (Py_ssize_t)(r->rows * r->cols),
                           (const char *)p.rack[0], (Py_ssize_t)(r->alphabet + 1), (const char *)p.rack[1],
                           (Py_ssize_t)(r->alphabet + 1));
out:
    free(moves);
    playout_release(&p);
    PyBuffer_Release(&order_view);
    PyBuffer_Release(&graph);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&values);
    return result;
}
