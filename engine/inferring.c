/*
 * anchor.engine._movegen: Generator.infer, the racks that explain a play (infer.c), for
 * engine/inference.py. Everything it is given is checked here before infer.c reads it.
 */
#include "glue.h"
#include "infer.h"

const char infer_doc[] =
    "infer(cells, pool, played, size, exchanged, score, margin, exchange_most, graph, counts,\n"
    "      values, threads=1, budget=0.0, max_racks=0, part=0, parts=1)\n"
    "    -> (tiles, verdicts, thrown, draws, values, hist, tried, searches)\n\n"
    "Every rack of `played` (tile counts, blank 0; empty for an exchange) plus `size` tiles\n"
    "from `pool` (tile counts), judged on the board `cells` with the leave graph\n"
    "(Leaves.graph()): a play scoring `score` is explained when no move is worth more than it\n"
    "plus `margin` thousandths of a point; an exchange of `exchanged` tiles when the rack's best\n"
    "move is such an exchange (verdict 2) or none is worth more than the margin (1).\n"
    "exchange_most: the most tiles an exchange could have put back (0: none). Of the racks\n"
    "that explain the move, in lexicographic order: tiles, each rack's extra tiles (`size`\n"
    "bytes); verdicts, a byte each (1 yes, 2 exchange); thrown, `exchanged` bytes a rack (2:\n"
    "its best move; 1: its best exchange of that many tiles), or None; draws, uint64 each,\n"
    "the ways to draw the extra tiles; values, float32 each, the value of the leave (kept).\n"
    "hist: uint64 counts (infer.h, HIST_AT);\n"
    "tried: racks judged. max_racks: more racks than that to try is a ValueError (0: none).\n"
    "budget: seconds (0: none), TimeoutError past it. part/parts: only the racks of the\n"
    "chunks of 16 dealt to `part` in turn (max_racks bounds those); the parts' racks merged\n"
    "in lexicographic order and their hist and tried summed are the whole answer.";

/* A tile-count buffer of the ruleset's size, copied out; -1 with a ValueError otherwise. */
static int read_counts(const Rules *r, const Py_buffer *view, const char *what, uint8_t *out, int *total) {
    if (view->len != r->alphabet + 1) {
        PyErr_Format(PyExc_ValueError, "infer: %s must give %d counts (one a tile)", what, r->alphabet + 1);
        return -1;
    }
    memset(out, 0, MAX_LETTERS + 1);
    memcpy(out, view->buf, (size_t)view->len);
    *total = 0;
    for (int t = 0; t <= r->alphabet; t++) *total += out[t];
    return 0;
}

PyObject *Generator_infer(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"cells", "pool", "played", "size", "exchanged", "score", "margin", "exchange_most",
                            "graph", "counts", "values", "threads", "budget", "max_racks", "part", "parts",
                            NULL};
    Py_buffer cells, pool, played, graph, counts, values;
    int size, exchanged, score, exchange_most, threads = 1;
    long long margin;
    unsigned long long max_racks = 0, part = 0, parts = 1;
    double budget = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*y*iiiLiy*y*y*|idKKK", names, &cells, &pool, &played, &size,
                                     &exchanged, &score, &margin, &exchange_most, &graph, &counts, &values,
                                     &threads, &budget, &max_racks, &part, &parts))
        return NULL;
    const Rules *r = &self->core.rules;
    PyObject *result = NULL;
    InferResult out = {0};
    InferArgs a = {0};
    Klv klv;
    int pool_total, played_total;
    if (read_position(r, "infer", &cells, 0, NULL, 0, 0, NULL, NULL) < 0 ||
        read_counts(r, &pool, "the pool", a.pool, &pool_total) < 0 ||
        read_counts(r, &played, "the tiles played", a.played, &played_total) < 0 ||
        klv_from_buffers(&klv, &graph, &counts, &values, "infer") < 0)
        goto out;
    if (size < 0 || played_total + size < 1 || played_total + size > r->rack_size || exchanged < 0 || exchanged > r->rack_size ||
        (exchanged && played_total) || exchange_most < exchanged || exchange_most > r->rack_size || score < 0 ||
        score > MAX_SCORE || margin < -1000000000LL || margin > 1000000000LL || threads < 1 ||
        threads > INFER_MAX_THREADS || !(budget >= 0.0 && budget <= 1e6) || size > pool_total ||
        (exchanged && size < exchanged) || max_racks > (1ULL << 48) || parts < 1 || parts > 4096 ||
        part >= parts) {
        PyErr_Format(PyExc_ValueError,
                     "infer: 0 <= size <= pool, 1 <= played + size <= %d, exchanged 0..%d (none with tiles "
                     "played, at most size), exchange_most exchanged..%d, score 0..%d, |margin| <= 1e9, "
                     "threads 1..%d, budget 0..1e6 s, max_racks 0..2^48, 0 <= part < parts <= 4096",
                     r->rack_size, r->rack_size, r->rack_size, MAX_SCORE, INFER_MAX_THREADS);
        goto out;
    }
    a.board = cells.buf;
    a.size = size;
    a.exchanged = exchanged;
    a.score = score;
    a.margin = margin;
    a.exchange_most = exchange_most;
    a.threads = threads;
    a.has_deadline = budget > 0.0;
    a.deadline = deadline_after(budget);
    a.max_racks = max_racks ? (size_t)max_racks : SIZE_MAX / 64;
    a.part = (size_t)part;
    a.parts = (size_t)parts;
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = infer_racks(&self->core, &klv, &a, &out);
    Py_END_ALLOW_THREADS
    if (failed == INFER_TOO_MANY) {
        PyErr_Format(PyExc_ValueError, "infer: more than %llu racks to try", max_racks);
        goto out;
    }
    if (failed) {
        raise_failure(failed, "the inference", budget);
        goto out;
    }
    const Py_ssize_t n = (Py_ssize_t)out.count;
    PyObject *tiles = PyBytes_FromStringAndSize((const char *)out.tiles, n * size);
    PyObject *verdicts = PyBytes_FromStringAndSize((const char *)out.verdict, n);
    PyObject *thrown = exchanged ? PyBytes_FromStringAndSize((const char *)out.thrown, n * exchanged)
                                 : Py_NewRef(Py_None);
    PyObject *draws = PyBytes_FromStringAndSize((const char *)out.draws, n * (Py_ssize_t)sizeof *out.draws);
    PyObject *vals = PyBytes_FromStringAndSize((const char *)out.value, n * (Py_ssize_t)sizeof *out.value);
    PyObject *hist = PyBytes_FromStringAndSize((const char *)out.hist,
                                               (Py_ssize_t)(HIST_SIZE(r->alphabet) * sizeof *out.hist));
    if (tiles && verdicts && thrown && draws && vals && hist)
        result = Py_BuildValue("(OOOOOOKK)", tiles, verdicts, thrown, draws, vals, hist,
                               (unsigned long long)out.tried, (unsigned long long)out.searches);
    Py_XDECREF(tiles);
    Py_XDECREF(verdicts);
    Py_XDECREF(thrown);
    Py_XDECREF(draws);
    Py_XDECREF(vals);
    Py_XDECREF(hist);
out:
    infer_free(&out);
    PyBuffer_Release(&cells);
    PyBuffer_Release(&pool);
    PyBuffer_Release(&played);
    PyBuffer_Release(&graph);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&values);
    return result;
}
