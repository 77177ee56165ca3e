/*
 * anchor.engine._movegen: the Generator type. A lexicon's tables and a ruleset, built once
 * (Generator_init checks the KWG and the rules), with generate (every play of a position,
 * ranked), playouts (Monte Carlo) and describe (plays as Python values). Each method reads
 * its Python arguments, releases the GIL around the C core and builds its answer.
 */
#include "glue.h"
#include "kwg_check.h"
#include "leave_table.h"
#include "playout.h"
#include "endgame.h"
#include "endgame_peers.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

static void Generator_dealloc(Generator *self) {
    if (self->has_kwg) PyBuffer_Release(&self->kwg);
    if (self->core.anagrams.borrowed) PyBuffer_Release(&self->anagram_file);
    free(self->owned_nodes);
    free(self->core.masks.children.wide);
    free(self->core.masks.children.narrow);
    free(self->core.masks.accepts.wide);
    free(self->core.masks.accepts.narrow);
    if (!self->runs_borrowed) free(self->core.runs);
    if (!self->reach_borrowed) free(self->core.reach);
    anagrams_free(&self->core.anagrams);
    anagrams_free(&self->core.short_words);
    if (!self->words_borrowed) free(self->core.words.bits);
    free(self->owned);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Use the bingo words and word-key filter of a file (anagram_file.c) instead of those just
 * built, when the file holds exactly them: the built ones are freed and every worker
 * mapping the file shares one copy. Any other file is left alone, the built set kept: one for another rack
 * size serves other rulesets, and what is wrong with any other is `anagram_problem`. */
static int adopt_anagram_file(Generator *self, PyObject *file) {
    Py_buffer view;
    if (PyObject_GetBuffer(file, &view, PyBUF_SIMPLE) < 0) return -1;
    Anagrams mapped;
    WordKeys mapped_words;
    int got = anagrams_adopt(view.buf, (size_t)view.len, self->core.rules.alphabet,
                             self->core.rules.rack_size, self->kwg_digest, &self->core.anagrams,
                             &self->core.words, &mapped, &mapped_words, &self->anagram_problem);
    if (got != ANAGRAMS_ADOPTED) {
        PyBuffer_Release(&view);
        if (got == ANAGRAMS_OTHER_RULES) self->anagram_problem = NULL;
        return 0;
    }
    anagrams_free(&self->core.anagrams);
    self->core.anagrams = mapped;
    free(self->core.words.bits);
    self->core.words = mapped_words;
    self->words_borrowed = mapped_words.bits != NULL;
    self->anagram_file = view;
    return 0;
}

/* Take the bingo words and word-key filter of a file written for exactly this KWG, intact
 * and sound (anagrams_trust), without building them: 1 then (with *covers what the file
 * says of the GADDAG), 0 when the file must be compared with a built set instead, -1 on a
 * Python error. */
static int trust_anagram_file(Generator *self, PyObject *file, int *covers) {
    Py_buffer view;
    if (PyObject_GetBuffer(file, &view, PyBUF_SIMPLE) < 0) return -1;
    self->anagram_names_kwg = anagrams_file_names(view.buf, (size_t)view.len, self->kwg_digest);
    Anagrams mapped, mapped_short;
    memset(&mapped, 0, sizeof mapped);
    memset(&mapped_short, 0, sizeof mapped_short);
    anagram_codes(&mapped, self->core.rules.alphabet);
    anagram_codes(&mapped_short, self->core.rules.alphabet);
    WordKeys mapped_words;
    LetterTables tables;
    if (!anagrams_trust(view.buf, (size_t)view.len, self->core.rules.alphabet,
                        self->core.rules.rack_size, self->kwg_digest, &mapped, &mapped_short,
                        &mapped_words, &tables, covers)) {
        PyBuffer_Release(&view);
        return 0;
    }
    /* the tables are read only: the file's mapping is, and they are never written */
    self->core.runs = (uint8_t *)tables.runs;
    self->core.reach = (uint8_t *)tables.reach;
    self->runs_borrowed = tables.runs != NULL;
    self->reach_borrowed = tables.reach != NULL;
    self->core.anagrams = mapped;
    if (mapped_short.slots) self->core.short_words = mapped_short; /* else built, as before they were kept */
    self->core.words = mapped_words;
    self->words_borrowed = mapped_words.bits != NULL;
    self->anagram_file = view;
    return 1;
}

static int Generator_init(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"kwg", "rows", "cols", "values", "letter_mult", "word_mult",
                            "centre_row", "centre_col", "rack_size", "bingo", "anagrams",
                            "exchange_min_bag", NULL};
    PyObject *kwg, *values, *lm, *wm, *file = Py_None;
    Rules *r = &self->core.rules;
    if (self->has_kwg) { /* the lexicon buffer is held for the object's life */
        PyErr_SetString(PyExc_TypeError, "Generator is already initialised");
        return -1;
    }
    r->exchange_min_bag = -1; /* not given: a rack's worth */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiiOOOiiii|Oi", names, &kwg, &r->rows, &r->cols,
                                     &values, &lm, &wm, &r->centre_row, &r->centre_col,
                                     &r->rack_size, &r->bingo, &file, &r->exchange_min_bag))
        return -1;
    if (rules_load(r, values, lm, wm) < 0) return -1;
    if (r->exchange_min_bag == -1) r->exchange_min_bag = r->rack_size;
    if (r->exchange_min_bag < 1 || r->exchange_min_bag > MAX_TILES) {
        PyErr_Format(PyExc_ValueError, "exchange_min_bag must be 1..%d", MAX_TILES);
        return -1;
    }
    r->mirrored = r->rows == r->cols && r->centre_row == r->centre_col &&
                  !memcmp(r->lm[0], r->lm[1], (size_t)(r->rows * r->cols)) &&
                  !memcmp(r->wm[0], r->wm[1], (size_t)(r->rows * r->cols));
    if (PyObject_GetBuffer(kwg, &self->kwg, PyBUF_SIMPLE) < 0) return -1;
    self->has_kwg = 1;
    if (self->kwg.len % 4 != 0 || self->kwg.len < 8 || (uint64_t)self->kwg.len / 4 > KWG_MAX_NODES) {
        PyErr_SetString(PyExc_ValueError, "kwg buffer has a bad size");
        return -1;
    }
    self->core.n_nodes = (uint32_t)(self->kwg.len / 4);
    self->core.nodes = kwg_nodes_view(self->kwg.buf, (size_t)self->kwg.len, &self->owned_nodes);
    if (!self->core.nodes) {
        PyErr_NoMemory();
        return -1;
    }
    KwgReport rep;
    rep.error[0] = 0;
    rep.counts = NULL;
    int bad = 0;
    for (uint32_t i = 0; i < self->core.n_nodes && !bad; i++)
        if (kwg_arc(self->core.nodes[i]) >= self->core.n_nodes) bad = 1;
    if (!bad && !kwg_is_end(self->core.nodes[self->core.n_nodes - 1])) bad = 1;
    if (!bad && kwg_walk(self->core.nodes, self->core.n_nodes, (unsigned)r->alphabet, 1, &rep) != 0) bad = 1;
    if (bad) {
        PyErr_Format(PyExc_ValueError, "kwg buffer failed its check: %s",
                     rep.error[0] ? rep.error : "arc out of range or unterminated list");
        return -1;
    }
    /* masks of the list starting at every node below the DAWG's extent, built backwards */
    self->core.extent = rep.extent;
    const size_t lists = (size_t)self->core.extent + 1;
    MaskArray *arrays[2] = {&self->core.masks.children, &self->core.masks.accepts};
    for (int k = 0; k < 2; k++) {
        if (r->alphabet <= 31)
            arrays[k]->narrow = calloc(lists, sizeof *arrays[k]->narrow);
        else
            arrays[k]->wide = calloc(lists, sizeof *arrays[k]->wide);
        if (!arrays[k]->narrow && !arrays[k]->wide) {
            PyErr_NoMemory();
            return -1;
        }
    }
    uint64_t mask[2] = {0, 0}; /* children and accepts of the list from node i on */
    for (uint32_t i = self->core.extent; i-- > 2;) {
        uint32_t node = self->core.nodes[i];
        unsigned tile = kwg_tile(node);
        uint64_t bit = tile >= 1 && tile <= (unsigned)r->alphabet ? (uint64_t)1 << tile : 0;
        if (kwg_is_end(node)) mask[0] = mask[1] = 0;
        mask[0] |= bit;
        mask[1] |= kwg_accepts(node) ? bit : 0;
        for (int k = 0; k < 2; k++) {
            if (arrays[k]->narrow)
                arrays[k]->narrow[i] = (uint32_t)mask[k];
            else
                arrays[k]->wide[i] = mask[k];
        }
    }
    self->kwg_digest = digest64(self->kwg.buf, (size_t)self->kwg.len);
    int covers = 0;
    if (file != Py_None) {
        int trusted = trust_anagram_file(self, file, &covers);
        if (trusted < 0) return -1;
        self->anagram_trusted = trusted;
    }
    if ((!self->runs_borrowed &&
         build_runs(self->core.nodes, self->core.extent, r->alphabet, &self->core.runs) < 0) ||
        (!self->reach_borrowed &&
         build_reach(self->core.nodes, self->core.extent, r->alphabet, &self->core.reach) < 0)) {
        PyErr_NoMemory();
        return -1;
    }
    if (!self->anagram_trusted &&
        build_anagrams(self->core.nodes, self->core.extent, r->alphabet, r->rack_size, &self->core.anagrams, &self->core.words) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    /* a set built has its filters before a file is compared with it (the file holds one);
     * a set taken from a file builds what the file does not hold */
    if (!self->anagram_trusted && self->core.anagrams.slots && anagrams_filter(&self->core.anagrams) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (file != Py_None && !self->anagram_trusted && adopt_anagram_file(self, file) < 0) return -1;
    if (self->core.anagrams.slots && anagrams_filter(&self->core.anagrams) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (self->core.short_words.slots) { /* the trusted file's: only the key filter is this process's */
        if (anagrams_filter(&self->core.short_words) < 0) {
            PyErr_NoMemory();
            return -1;
        }
    } else if (self->core.anagrams.slots && r->rack_size < LAY_DIGITS &&
               build_short_words(self->core.nodes, self->core.extent, r->alphabet, r->rack_size - 1,
                                 &self->core.short_words) < 0) {
        PyErr_NoMemory();
        return -1;
    }
#ifdef __GLIBC__
    /* The tables grew by doubling, and the built set may have been dropped for the file's:
     * give back the heap that left free, or every worker carries it for its life
     * (bench/service.py: 3 MiB a worker on TWL06, 7.5 with the file). */
    malloc_trim(0);
#endif
    uint32_t gaddag = kwg_arc(self->core.nodes[1]);
    if (self->anagram_trusted) /* the file says, for exactly this KWG */
        self->core.gaddag = covers ? gaddag : 0;
    else
        self->core.gaddag = gaddag_covers(self->core.nodes, kwg_arc(self->core.nodes[0]), gaddag, GADDAG_CHECK_STEPS) ? gaddag : 0;
    return 0;
}

PyDoc_STRVAR(generate_doc,
"generate(cells, rack, mode, limit, steps=None, values=None, budget=0.0, count_all=False)\n"
"    -> (records, found, complete[, equities])\n\n"
"cells: rows*cols board bytes; rack: alphabet+1 tile counts (blanks first);\n"
"mode: 1 across, 2 down, 3 both; limit: -1 for all, else the top N (memory then stays\n"
"near 2N records however many plays there are); steps, values: a leave table (rank by\n"
"equity); budget: seconds the search may take (0: no limit), TimeoutError past it;\n"
"count_all: with a limit, still search every play (so `found` counts them all).\n"
"records: ranked 32-byte move records (layout in _movegen.c); found: plays the search\n"
"generated; complete: whether that is every play (a limit lets it skip what cannot rank).");

/* Where a call searches: the Generator's own two searches when no other call holds them
 * (*prepared: their passes already hold `board` for every letter, the second time a board
 * comes and after), else two of its own (NULL: out of memory). `same`: the board equals the
 * last one. Called with the GIL held, and release_searches after: threads share the
 * Generator. */
static Search *acquire_searches(Generator *self, const uint8_t *board, int same, int *prepared) {
    const Rules *r = &self->core.rules;
    *prepared = 0;
    if (!same) {
        memcpy(self->last_board, board, (size_t)(r->rows * r->cols));
        self->seen_board = 1;
        self->owned_board = 0; /* a search there prepares them for its rack alone */
    }
    if (self->owned_busy || (!self->owned && !(self->owned = malloc(2 * sizeof *self->owned))))
        return malloc(2 * sizeof(Search)); /* one per direction */
    self->owned_busy = 1;
    Search *s = self->owned;
    if (same && !self->owned_board) {
        for (int dir = 0; dir < 2; dir++) {
            attach(&s[dir], &self->core);
            prepare_pass(&s[dir], r, board, dir, every_letter(r));
        }
        self->owned_board = 1;
    }
    *prepared = same;
    return s;
}

static void release_searches(Generator *self, Search *s) {
    if (s == self->owned)
        self->owned_busy = 0;
    else
        free(s);
}

static PyObject *Generator_generate(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"cells", "rack",   "mode",       "limit", "steps",
                            "values", "budget", "count_all", NULL};
    Py_buffer cells_view, rack_view, step_view = {0}, value_view = {0};
    int mode;
    long limit;
    double budget = 0.0;
    int count_all = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*il|z*z*dp", names, &cells_view, &rack_view,
                                     &mode, &limit, &step_view, &value_view, &budget, &count_all))
        return NULL;
    int by_equity_rank = step_view.buf != NULL;
    LeaveTable leaves = {0};
    float *equities = NULL;
    const Rules *r = &self->core.rules;
    int ncells = r->rows * r->cols;
    PyObject *result = NULL;
    Search *s = NULL;
    MoveBuf buf = {0};
    MoveRecord *ranked = NULL;
    uint8_t board[MAX_CELLS];
    uint8_t rack[1][MAX_LETTERS + 1];
    /* a board that equals the last one was checked when it came */
    const int same = self->seen_board && cells_view.len == ncells &&
                     memcmp(cells_view.buf, self->last_board, (size_t)ncells) == 0;
    const int rack_total = read_position(r, "generate", &cells_view, same, &rack_view, 1, 0, board, rack);
    if (rack_total < 0) goto out;
    if (mode < 1 || mode > 3) {
        PyErr_SetString(PyExc_ValueError, "mode must be 1 (across), 2 (down) or 3 (both)");
        goto out;
    }
    if (limit < -1) {
        PyErr_SetString(PyExc_ValueError, "limit must be -1 (all) or a count >= 0");
        goto out;
    }
    if (!(budget >= 0.0 && budget <= 1e6)) {
        PyErr_SetString(PyExc_ValueError, "budget must be 0..1e6 seconds (0: no limit)");
        goto out;
    }
    struct timespec deadline = deadline_after(budget);
    if (by_equity_rank) {
        /* the key steps alone, or leave_table's KeySteps with the best leaves after them */
        const Py_ssize_t steps_only = (Py_ssize_t)((MAX_LETTERS + 1) * sizeof(uint16_t));
        if ((step_view.len != steps_only && step_view.len != (Py_ssize_t)sizeof(KeySteps)) ||
            value_view.buf == NULL || value_view.len % sizeof(float) != 0 || value_view.len == 0 ||
            ((uintptr_t)step_view.buf % sizeof(float)) || ((uintptr_t)value_view.buf % sizeof(float))) {
            PyErr_SetString(PyExc_ValueError,
                            "leave table: 64 uint16 key steps (optionally with leave_table's best leaves) "
                            "and a float32 array");
            goto out;
        }
        if (step_view.len == (Py_ssize_t)sizeof(KeySteps)) {
            const KeySteps *ks = step_view.buf;
            leaves.best = ks->best;
            leaves.best_blank = ks->best_blank;
        }
        leaves.key_step = step_view.buf;
        leaves.value = value_view.buf;
        leaves.keys = (size_t)value_view.len / sizeof(float);
    }
    int prepared;
    s = acquire_searches(self, board, same, &prepared);
    if (!s) {
        PyErr_NoMemory();
        goto out;
    }
    if (movebuf_init(&buf, limit, by_equity_rank) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    int failed = 0;
    size_t kept = 0;
    SearchArgs sa = {mode, limit, count_all, by_equity_rank ? &leaves : NULL, budget > 0.0, deadline, 0};
    sa.prepared = prepared;
    Py_BEGIN_ALLOW_THREADS
    failed = search_moves(&self->core, board, rack[0], rack_total, &sa, s, &buf);
    if (!failed) {
        uint64_t *orders = NULL;
        if (limit >= 0 || by_equity_rank)
            ranked = rank_ordered(&buf, limit, by_equity_rank, &kept, &equities, &orders);
        else
            ranked = rank_moves(&buf, limit, &kept);
        free(orders);
        if (!ranked) failed = FAIL_MEMORY;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        raise_failure(failed, "move generation", budget);
        goto out;
    }
    Py_ssize_t found = (Py_ssize_t)buf.total;
    PyObject *complete = buf.pruned ? Py_False : Py_True;
    PyObject *records = PyBytes_FromStringAndSize((const char *)ranked, (Py_ssize_t)(kept * sizeof(MoveRecord)));
    if (records && by_equity_rank) {
        PyObject *eq = PyBytes_FromStringAndSize((const char *)equities, (Py_ssize_t)(kept * sizeof(float)));
        result = eq ? Py_BuildValue("NnON", records, found, complete, eq) : NULL;
        if (!eq) Py_DECREF(records);
    } else if (records) {
        result = Py_BuildValue("NnO", records, found, complete);
    }
out:
    free(ranked);
    free(equities);
    movebuf_free(&buf);
    if (step_view.buf) PyBuffer_Release(&step_view);
    if (value_view.buf) PyBuffer_Release(&value_view);
    if (s) release_searches(self, s);
    PyBuffer_Release(&cells_view);
    PyBuffer_Release(&rack_view);
    return result;
}

/* A candidate from Python, (kind, score, placed, back), checked against the board and the
 * rack it is made from: placed holds (row, col, cell) byte triples, back the counts put
 * back (alphabet + 1, blank first). -1 with a ValueError when anything is off. */
static int read_turn(const Rules *r, PyObject *item, const uint8_t *board, const uint8_t *rack, Turn *t) {
    int kind, score;
    Py_buffer placed, back;
    if (!PyArg_ParseTuple(item, "iiy*y*", &kind, &score, &placed, &back)) return -1;
    int ok = 0;
    uint8_t need[MAX_LETTERS + 1] = {0};
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->score = score;
    if (kind < TURN_PLAY || kind > TURN_PASS || score < -MAX_SCORE || score > MAX_SCORE) {
        PyErr_SetString(PyExc_ValueError, "candidate: kind must be 0..2 and score within MAX_SCORE");
        goto out;
    }
    if (placed.len % 3 || placed.len / 3 > r->rack_size || (kind != TURN_PLAY && placed.len) ||
        (kind == TURN_PLAY && placed.len == 0)) {
        PyErr_SetString(PyExc_ValueError, "candidate: a play places 1..rack size tiles, nothing else does");
        goto out;
    }
    if (back.len != r->alphabet + 1) {
        PyErr_Format(PyExc_ValueError, "candidate: back must give %d counts", r->alphabet + 1);
        goto out;
    }
    const uint8_t *cells = placed.buf, *returned = back.buf;
    int back_total = 0;
    for (int k = 0; k <= r->alphabet; k++) back_total += returned[k];
    if ((kind == TURN_EXCHANGE) != (back_total > 0)) {
        PyErr_SetString(PyExc_ValueError, "candidate: only an exchange puts tiles back, and it puts some");
        goto out;
    }
    for (int k = 0; k <= r->alphabet; k++) {
        need[k] = returned[k];
        t->back[k] = returned[k];
    }
    t->count = (int)(placed.len / 3);
    for (int i = 0; i < t->count; i++) {
        int row = cells[3 * i], col = cells[3 * i + 1];
        uint8_t cell = cells[3 * i + 2];
        unsigned tile = cell & TILE_MASK;
        if (row >= r->rows || col >= r->cols || tile < 1 || tile > (unsigned)r->alphabet ||
            (cell & ~(BLANK_FLAG | TILE_MASK))) {
            PyErr_SetString(PyExc_ValueError, "candidate: a placed tile is off the board or not a tile");
            goto out;
        }
        int at = row * r->cols + col;
        for (int j = 0; j < i; j++)
            if (t->square[j] == at) at = -1;
        if (at < 0 || board[at]) {
            PyErr_SetString(PyExc_ValueError, "candidate: a tile is placed on a taken square");
            goto out;
        }
        t->square[i] = (uint16_t)at;
        t->cell[i] = cell;
        need[(cell & BLANK_FLAG) ? 0 : tile]++;
    }
    for (int k = 0; k <= r->alphabet; k++)
        if (need[k] > rack[k]) {
            PyErr_SetString(PyExc_ValueError, "candidate: it uses tiles the rack does not hold");
            goto out;
        }
    ok = 1;
out:
    PyBuffer_Release(&placed);
    PyBuffer_Release(&back);
    return ok ? 0 : -1;
}

PyDoc_STRVAR(playouts_doc,
"playouts(cells, rack, candidates, order, plies, graph, counts, values, budget=0.0)\n"
"    -> ([value per candidate], [tiles unplayed at its end per candidate])\n\n"
"One Monte Carlo playout of each candidate from this position (engine/simulate.py's\n"
"_playout in C): cells, rack as for generate; candidates: (kind, score, placed, back)\n"
"tuples, kind 0 play / 1 exchange / 2 pass, placed (row, col, cell) byte triples, back the\n"
"tile counts an exchange puts back; order: the unseen tiles (tile numbers, blank 0), the\n"
"opponent's rack first, then the bag; plies: moves after the candidate; graph, counts,\n"
"values: the KLV2 leave graph (Leaves.graph()); budget: seconds (0: no limit),\n"
"TimeoutError past it. Unplayed: tiles in the bag and on both racks when the playout\n"
"stopped, 0 when a side went out (the game is over).");

static PyObject *Generator_playouts(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"cells", "rack", "candidates", "order", "plies", "graph",
                            "counts", "values", "budget", "check", "out_factor", NULL};
    Py_buffer cells_view, rack_view, order_view, graph, counts, values;
    PyObject *candidates, *result = NULL;
    int plies, check = 0, out_factor = 2;
    double budget = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*Oy*iy*y*y*|dpi", names, &cells_view, &rack_view,
                                     &candidates, &order_view, &plies, &graph, &counts, &values, &budget,
                                     &check, &out_factor))
        return NULL;
    const Rules *r = &self->core.rules;
    Turn *turns = NULL;
    double *out = NULL;
    long *left = NULL;
    Playout p = {0};
    PyObject *seq = NULL;
    uint8_t racks[1][MAX_LETTERS + 1] = {{0}};
    uint8_t *rack = racks[0];
    const uint8_t *board = cells_view.buf, *order = order_view.buf;
    if (read_position(r, "playouts", &cells_view, 0, &rack_view, 1, 0, NULL, racks) < 0) goto out;
    if (plies < 0 || plies > MAX_PLAYOUT_PLIES || order_view.len > MAX_PLAYOUT_TILES ||
        !(budget >= 0.0 && budget <= 1e6) || out_factor < 0 || out_factor > 11) {
        PyErr_Format(PyExc_ValueError, "playouts: plies 0..%d, at most %d unseen tiles, budget 0..1e6 s, out_factor 0..11",
                     MAX_PLAYOUT_PLIES, MAX_PLAYOUT_TILES);
        goto out;
    }
    for (Py_ssize_t i = 0; i < order_view.len; i++)
        if (order[i] > r->alphabet) {
            PyErr_Format(PyExc_ValueError, "playouts: unseen tile %u is not a tile", order[i]);
            goto out;
        }
    Klv klv;
    if (klv_from_buffers(&klv, &graph, &counts, &values, "playouts") < 0) goto out;
    seq = PySequence_Fast(candidates, "playouts: candidates must be a sequence");
    if (!seq) goto out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_PLAYOUT_CANDIDATES) {
        PyErr_Format(PyExc_ValueError, "playouts: at most %d candidates", MAX_PLAYOUT_CANDIDATES);
        goto out;
    }
    turns = malloc(((size_t)n + 1) * sizeof *turns);
    out = malloc(((size_t)n + 1) * sizeof *out);
    left = malloc(((size_t)n + 1) * sizeof *left);
    if (!turns || !out || !left) {
        PyErr_NoMemory();
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_turn(r, PySequence_Fast_GET_ITEM(seq, i), board, rack, &turns[i]) < 0) goto out;
    p.g = &self->core;
    p.klv = &klv;
    p.out_factor = out_factor;
    p.passes = malloc(7 * sizeof *p.passes); /* the board in play, the position, a check's, base_replies' */
    p.table = malloc(((size_t)2 << r->rack_size) * sizeof *p.table); /* a table a side */
    p.bag = malloc((size_t)order_view.len + (size_t)MAX_RACK * ((size_t)plies + 1) + 1);
    if (!p.passes || !p.table || !p.bag || movebuf_init(&p.buf, 1, 1) < 0 || movebuf_init(&p.base, BASE_PLAYS, 1) < 0) {
        PyErr_NoMemory();
        goto out;
    }
    /* the position prepared once for every letter; each playout lays its moves on a copy */
    const uint64_t all = every_letter(r);
    for (int dir = 0; dir < 2; dir++) {
        attach(&p.passes[dir], &self->core); /* the board in play: pass_copy gives it its squares */
        attach(&p.passes[2 + dir], &self->core);
        prepare_pass(&p.passes[2 + dir], r, board, dir, all);
    }
    p.start = p.passes + 2;
    p.share_replies = 1;
    p.scratch = check ? p.passes + 4 : NULL;
    p.args = (SearchArgs){MODE_ACROSS | MODE_DOWN, 1, 0, NULL, budget > 0.0, deadline_after(budget), 1};
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !failed; i++)
        failed = playout(&p, board, rack, &turns[i], order, (size_t)order_view.len, plies, &out[i], &left[i]);
    Py_END_ALLOW_THREADS
    if (failed) {
        raise_failure(failed, "the playouts", budget);
        goto out;
    }
    PyObject *vals = PyList_New(n), *lefts = PyList_New(n);
    int ok = vals && lefts;
    for (Py_ssize_t i = 0; ok && i < n; i++) { /* the lists own what they are given */
        PyObject *v = PyFloat_FromDouble(out[i]), *u = PyLong_FromLong(left[i]);
        if (v) PyList_SET_ITEM(vals, i, v);
        if (u) PyList_SET_ITEM(lefts, i, u);
        ok = v && u;
    }
    if (ok) result = PyTuple_Pack(2, vals, lefts);
    Py_XDECREF(vals);
    Py_XDECREF(lefts);
out:
    Py_XDECREF(seq);
    free(turns);
    free(out);
    free(left);
    playout_release(&p);
    PyBuffer_Release(&cells_view);
    PyBuffer_Release(&rack_view);
    PyBuffer_Release(&order_view);
    PyBuffer_Release(&graph);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&values);
    return result;
}

PyDoc_STRVAR(describe_doc,
"describe(records, cells, text, lists=False) -> [(notation, score, row, col, direction,\n"
"    word, placed), ...]\n\n"
"engine.moves.fields() of every packed record, in order, without a Python loop: records\n"
"as generate() returns them, made on the board `cells`; text: the text of each cell byte\n"
"(board.cell_text). With lists, each entry is a list and placed squares are lists (the\n"
"protocol's compact move array).");


PyDoc_STRVAR(endgame_doc,
"endgame(cells, rack, other, plies, budget, table_bits, passed, going_out, stuck_loses_own,\n"
"        scoreless_loses_own, first=0, last=-1, parts=1, part=0, floor=None, max_nodes=0,\n"
"        table=None, threads=1, peers=None, slot=-1)\n"
"    -> (value, depth, exact, nodes, line, root, below_floor, no_plays)\n\n"
"The exact endgame (endgame.h): `rack` to move, `other` the opponent's (alphabet+1 tile\n"
"counts each); iterations 1, 3, .. plies until one is exact; 2^table_bits table entries,\n"
"or `table`: a writable buffer of 16 * 2^k bytes (zeroed when new) kept across solves of\n"
"this Generator with the same end rules, one solve at a time; threads: searches at once\n"
"on the table (1..64; a proven value and its line are the same for any number);\n"
"`passed`: the last turn was a pass; budget: seconds (0: none): past it, the deepest\n"
"iteration completed (TimeoutError when none was). line: 32-byte move records, each on\n"
"the board the ones before it leave (length 0: a pass). first, last, parts, part, floor:\n"
"the root's plays searched (RootSplit, endgame.h); root: the line's first play by its\n"
"number in the root's canonical order. peers, slot: a peers' region (peers_init) and the\n"
"slot peers_claim gave this endgame: its table instead of `table`, searched with every other\n"
"process's solve in the slot (whole roots only; a split searches alone on the slot's table).");

static PyObject *Generator_endgame(Generator *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"cells", "rack", "other", "plies", "budget", "table_bits", "passed",
                            "going_out", "stuck_loses_own", "scoreless_loses_own", "first", "last",
                            "parts", "part", "floor", "max_nodes", "table", "threads", "peers", "slot", NULL};
    Py_buffer cells_view, rack_views[2], table_view = {0}, peers_view = {0};
    PyObject *table_obj = Py_None, *peers_obj = Py_None;
    int threads = 1, slot = -1;
    int plies, table_bits, passed;
    double budget;
    EndRules end;
    RootSplit split = {0, -1, 1, 0, 0, 0};
    PyObject *floor_obj = Py_None;
    unsigned long long max_nodes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*y*idipipp|iiiiOKOiOi", names, &cells_view, &rack_views[0],
                                     &rack_views[1], &plies, &budget, &table_bits, &passed, &end.going_out,
                                     &end.stuck_loses_own, &end.scoreless_loses_own, &split.first, &split.last,
                                     &split.parts, &split.part, &floor_obj, &max_nodes, &table_obj, &threads,
                                     &peers_obj, &slot))
        return NULL;
    const Rules *r = &self->core.rules;
    PyObject *result = NULL;
    uint8_t racks[2][MAX_LETTERS + 1] = {{0}};
    if (plies < 1 || plies > ENDGAME_MAX_PLIES || table_bits < ENDGAME_MIN_TABLE || table_bits > ENDGAME_MAX_TABLE ||
        !(budget >= 0.0 && budget <= 1e6) || end.going_out < 0 || end.going_out > 10 || threads < 1 ||
        threads > ENDGAME_MAX_THREADS) {
        PyErr_Format(PyExc_ValueError,
                     "endgame: plies 1..%d, table_bits %d..%d, budget 0..1e6 s, going_out 0..10, threads 1..%d",
                     ENDGAME_MAX_PLIES, ENDGAME_MIN_TABLE, ENDGAME_MAX_TABLE, ENDGAME_MAX_THREADS);
        goto out;
    }
    if (split.first < 0 || split.last < -1 || split.parts < 1 || split.part < 0 || split.part >= split.parts) {
        PyErr_SetString(PyExc_ValueError, "endgame: first >= 0, last >= -1, 0 <= part < parts");
        goto out;
    }
    if (floor_obj != Py_None) {
        long f = PyLong_AsLong(floor_obj);
        if (f == -1 && PyErr_Occurred()) goto out;
        if (f < -(1L << 28) || f > (1L << 28)) {
            PyErr_SetString(PyExc_ValueError, "endgame: floor out of range");
            goto out;
        }
        split.has_floor = 1;
        split.floor = (int32_t)f;
    }
    const uint8_t *board = cells_view.buf;
    if (read_position(r, "endgame", &cells_view, 0, rack_views, 2, 1, NULL, racks) < 0) goto out;
    EndgameTable table = {NULL, table_bits};
    EndgamePeer peer = {NULL, NULL};
    if (peers_obj != Py_None) {
        if (PyObject_GetBuffer(peers_obj, &peers_view, PyBUF_WRITABLE) < 0) goto out;
        const PeersHeader *h = endgame_peers_check(peers_view.buf, (size_t)peers_view.len);
        if (!h || slot < 0 || (uint32_t)slot >= h->slots) {
            PyErr_SetString(PyExc_ValueError, "endgame: peers must be a region peers_init laid out, slot one of its");
            goto out;
        }
        peer = (EndgamePeer){endgame_peers_slot(peers_view.buf, slot), endgame_peers_busy(peers_view.buf, slot)};
        table = endgame_peers_table(peers_view.buf, slot);
    } else if (table_obj != Py_None) {
        if (PyObject_GetBuffer(table_obj, &table_view, PyBUF_WRITABLE) < 0) goto out;
        const Py_ssize_t entries = table_view.len / (Py_ssize_t)sizeof(TableEntry);
        int bits = 0;
        while (bits < ENDGAME_MAX_TABLE && ((Py_ssize_t)1 << bits) < entries) bits++;
        if (table_view.len % (Py_ssize_t)sizeof(TableEntry) || ((Py_ssize_t)1 << bits) != entries ||
            bits < ENDGAME_MIN_TABLE) {
            PyErr_Format(PyExc_ValueError, "endgame: table must be 16 * 2^k bytes, k %d..%d", ENDGAME_MIN_TABLE,
                         ENDGAME_MAX_TABLE);
            goto out;
        }
        table = (EndgameTable){table_view.buf, bits};
    } else if (!(table.entries = endgame_table_new(table_bits))) {
        PyErr_NoMemory();
        goto out;
    }
    EndgameAnswer *answer = malloc(sizeof *answer);
    if (!answer) {
        PyErr_NoMemory();
        if (table_obj == Py_None && peers_obj == Py_None) endgame_table_free(table.entries, table_bits);
        goto out;
    }
    const EndgameLimits limits = {plies, passed, threads, budget > 0.0, deadline_after(budget), (uint64_t)max_nodes};
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = solve_endgame(&self->core, board, (const uint8_t(*)[MAX_LETTERS + 1])racks, &end, &split, &table,
                           peer.slot ? &peer : NULL, &limits,
                           answer);
    Py_END_ALLOW_THREADS
    if (table_obj == Py_None && peers_obj == Py_None) endgame_table_free(table.entries, table_bits);
    if (failed == FAIL_CHECK) {
        PyErr_SetString(PyExc_AssertionError, "the endgame search: no play keeps the value it found (a bug)");
    } else if (failed) {
        raise_failure(failed, "the endgame search", budget);
    } else {
        result = Py_BuildValue("(iiiKy#iii)", (int)answer->value, answer->depth, answer->exact,
                               (unsigned long long)answer->nodes, (const char *)answer->line,
                               (Py_ssize_t)((size_t)answer->line_len * sizeof(MoveRecord)), answer->root,
                               answer->below_floor, answer->no_plays);
    }
    free(answer);
out:
    if (table_view.obj) PyBuffer_Release(&table_view);
    if (peers_view.obj) PyBuffer_Release(&peers_view);
    PyBuffer_Release(&cells_view);
    PyBuffer_Release(&rack_views[0]);
    PyBuffer_Release(&rack_views[1]);
    return result;
}

PyDoc_STRVAR(anagram_file_doc,
"anagram_file() -> bytes\n\n"
"The bingo words (and word-key filter) this Generator uses, as the file Lexicon.save\n"
"writes beside a KWG"
" (layout in anagram_file.c); ValueError for a lexicon too large a graph to have them.");

static PyObject *Generator_anagram_file(Generator *self, PyObject *unused) {
    (void)unused;
    const Core *c = &self->core;
    const LetterTables tables = {c->runs, c->reach};
    const size_t size = anagrams_file_size(&c->anagrams, &c->short_words, &c->words, &tables, c->rules.alphabet);
    if (!size) {
        PyErr_SetString(PyExc_ValueError,
                        "this lexicon has no bingo-word set to write (too large a graph)");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (out)
        anagrams_file_write(&c->anagrams, &c->short_words, &c->words, &tables, c->rules.alphabet,
                            c->rules.rack_size, self->kwg_digest, c->gaddag != 0,
                            (uint8_t *)PyBytes_AS_STRING(out));
    return out;
}

static PyMethodDef Generator_methods[] = {
    {"anagram_file", (PyCFunction)Generator_anagram_file, METH_NOARGS, anagram_file_doc},
    {"generate", (PyCFunction)(void (*)(void))Generator_generate, METH_VARARGS | METH_KEYWORDS,
     generate_doc},
    {"playouts", (PyCFunction)(void (*)(void))Generator_playouts, METH_VARARGS | METH_KEYWORDS,
     playouts_doc},
    {"endgame", (PyCFunction)(void (*)(void))Generator_endgame, METH_VARARGS | METH_KEYWORDS,
     endgame_doc},
    {"describe", (PyCFunction)(void (*)(void))Generator_describe, METH_VARARGS | METH_KEYWORDS,
     describe_doc},
    {"selfplay", (PyCFunction)(void (*)(void))Generator_selfplay, METH_VARARGS | METH_KEYWORDS,
     selfplay_doc},
    {"infer", (PyCFunction)(void (*)(void))Generator_infer, METH_VARARGS | METH_KEYWORDS, infer_doc},
    {NULL, NULL, 0, NULL},
};

static PyObject *Generator_gaddag(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->core.gaddag != 0);
}

static PyObject *Generator_letter_runs(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->core.runs != NULL);
}

static PyObject *Generator_run_reach(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->core.reach != NULL);
}

static PyObject *Generator_anagram_source(Generator *self, void *closure) {
    (void)closure;
    return PyUnicode_FromString(self->core.anagrams.borrowed ? "file"
                                : self->core.anagrams.slots  ? "built"
                                                        : "none");
}

static PyObject *Generator_short_words_source(Generator *self, void *closure) {
    (void)closure;
    return PyUnicode_FromString(self->core.short_words.borrowed ? "file"
                                : self->core.short_words.slots  ? "built"
                                                                : "none");
}

static PyObject *Generator_anagram_names_kwg(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->anagram_names_kwg);
}

static PyObject *Generator_anagram_trusted(Generator *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->anagram_trusted);
}

static PyObject *Generator_anagram_problem(Generator *self, void *closure) {
    (void)closure;
    if (!self->anagram_problem) Py_RETURN_NONE;
    return PyUnicode_FromString(self->anagram_problem);
}

static PyGetSetDef Generator_getset[] = {
    {"anagram_problem", (getter)Generator_anagram_problem, NULL,
     "Why the bingo-word file given was not used (None when it was, or was written for "
     "another rack size, or none was given).",
     NULL},
    {"anagram_trusted", (getter)Generator_anagram_trusted, NULL,
     "Whether the bingo-word file was taken by its digests (written for exactly this KWG, "
     "intact, its tables sound), so that no set was built and the GADDAG not walked.",
     NULL},
    {"anagram_source", (getter)Generator_anagram_source, NULL,
     "Where the bingo words the bounds use come from: 'file' (a mapped file, shared by every "
     "process mapping it), 'built' (this Generator's own), 'none' (too large a graph: the "
     "same plays, found more slowly).",
     NULL},
    {"anagram_names_kwg", (getter)Generator_anagram_names_kwg, NULL,
     "Whether the bingo-word file's header names this KWG (by its digest): one that does "
     "and is not trusted is damaged, not another lexicon's.",
     NULL},
    {"short_words_source", (getter)Generator_short_words_source, NULL,
     "Where the shorter words laid.c lays plays from come from: 'file' (a trusted bingo-word "
     "file's, mapped), 'built' (at start: 45 M instructions on TWL06), 'none' (no bingo "
     "words, or a rack too long to lay: the plays are walked).",
     NULL},
    {"letter_runs", (getter)Generator_letter_runs, NULL,
     "Whether the search narrows squares beside tiles by the letter runs words hold (False "
     "for a graph too costly to read them from: the same plays, found more slowly).",
     NULL},
    {"run_reach", (getter)Generator_run_reach, NULL,
     "Whether the search caps the letters a word may have before the tiles beside an anchor "
     "by how far the lexicon's words reach before their runs (False for a large alphabet or "
     "a graph too costly to read: the same plays, found more slowly).",
     NULL},
    {"gaddag", (getter)Generator_gaddag, NULL,
     "Whether the search lets the file's GADDAG pick the left parts of anchors with tiles "
     "after them (False when the file has none, or one that lacks a path the DAWG's words "
     "need: the same plays, found more slowly).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject GeneratorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "anchor.engine._movegen.Generator",
    .tp_basicsize = sizeof(Generator),
    .tp_dealloc = (destructor)Generator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Generator(kwg, rows, cols, values, letter_mult, word_mult, centre_row, "
              "centre_col, rack_size, bingo, anagrams=None): move generation over one lexicon and "
              "ruleset; anagrams: the file anagram_file() wrote for them, mapped.",
    .tp_methods = Generator_methods,
    .tp_getset = Generator_getset,
    .tp_init = (initproc)Generator_init,
    .tp_new = PyType_GenericNew,
};
