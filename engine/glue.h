/*
 * anchor.engine._movegen: the CPython glue's shared header. The Generator object (a Core
 * and the Python buffers it lies in), and what the glue units call in one another. The
 * algorithm units never include it (core.h is theirs).
 *
 * The glue units and who calls whom (no two call each other): _movegen.c (the module) ->
 * generator.c (the type) -> describe.c, games.c (its describe and selfplay methods), and
 * every one of them -> glue.c (a board and rack read and checked, failures raised,
 * deadlines), rules.c (a ruleset read and checked), leave_table.c, kwg_check.c, shuffle.c.
 */
#ifndef ANCHOR_GLUE_H
#define ANCHOR_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"
#include "leave_table.h"

typedef struct {
    PyObject_HEAD
    Core core;       /* what the searches read (constant once made) */
    Py_buffer kwg;   /* held while the object lives: the lexicon's mmap cannot close */
    int has_kwg;
    uint32_t *owned_nodes; /* core.nodes when the buffer could not be used in place */
    int words_borrowed; /* core.words.bits lie in the anagram file (anagram_file.c), not ours to free */
    Py_buffer anagram_file; /* held while the set's arrays lie in it (core.anagrams.borrowed) */
    const char *anagram_problem; /* why the file given was not used; NULL: it was, or none */
    uint64_t kwg_digest; /* digest64 of the KWG's bytes: what an anagram file is written for */
    int anagram_trusted; /* the file's set taken by its digests, none built (anagrams_trust) */
    int anagram_names_kwg; /* the file's header names this KWG (anagrams_file_names) */
    int runs_borrowed, reach_borrowed; /* core.runs, core.reach lie in the anagram file */
    /* generate's last board, and the two searches (one a pass) it runs in when no other
     * thread's call holds them: once the same board comes again (one position asked about
     * for several racks, or asked again) their passes are prepared for every letter and
     * kept, so that the board is prepared once and copied never. Read and written with the
     * GIL held; a call that finds them held searches in its own. */
    uint8_t last_board[MAX_CELLS];
    int seen_board;   /* last_board holds a board (checked when it came) */
    Search *owned;    /* two, allocated when first needed */
    int owned_busy;   /* a call is searching in them */
    int owned_board;  /* their passes hold last_board, prepared for every letter */
} Generator;

/* generator.c: the type */
extern PyTypeObject GeneratorType;

/* describe.c, games.c: the Generator's describe and selfplay methods */
PyObject *Generator_describe(Generator *self, PyObject *args, PyObject *kw);
PyObject *Generator_selfplay(Generator *self, PyObject *args, PyObject *kw);
extern const char selfplay_doc[];
/* inferring.c: Generator.infer */
PyObject *Generator_infer(Generator *self, PyObject *args, PyObject *kw);
extern const char infer_doc[];

/* glue.c: what the methods share, and the module functions over the algorithm units */
int read_position(const Rules *r, const char *who, const Py_buffer *cells, int checked,
                  const Py_buffer *rack_views, int n, int least, uint8_t *board,
                  uint8_t racks[][MAX_LETTERS + 1]);
void raise_failure(int failed, const char *what, double budget);
struct timespec deadline_after(double budget);
int klv_from_buffers(Klv *klv, const Py_buffer *graph, const Py_buffer *counts, const Py_buffer *values,
                     const char *who);
PyObject *py_kwg_check(PyObject *self, PyObject *args);
PyObject *py_leave_table(PyObject *self, PyObject *args);

/* rules.c: a ruleset read from Python and checked (Generator_init and check_rules) */
int rules_load(Rules *r, PyObject *values, PyObject *lm, PyObject *wm);
double max_score(const Rules *r);
PyObject *py_check_rules(PyObject *mod, PyObject *args, PyObject *kw);

/* shuffle.c: shuffled(key, items) -> bytes, as random.Random(seed).shuffle */
PyObject *py_shuffled(PyObject *self, PyObject *args);

/* peers.c: endgame peers' regions (endgame_peers.h) */
PyObject *py_peers_bytes(PyObject *self, PyObject *args);
PyObject *py_peers_init(PyObject *self, PyObject *args);
PyObject *py_peers_claim(PyObject *self, PyObject *args);
PyObject *py_peers_release(PyObject *self, PyObject *args);

#endif
