/*
 * anchor.engine._movegen: endgame peers' regions from Python (endgame_peers.h). The
 * region is any writable buffer (engine/endgame.py maps one shared before workers fork);
 * every call checks it is one endgame_peers_init laid out.
 */
#include "glue.h"
#include "endgame_peers.h"

/* The region in `obj` (its buffer held in `view`), checked; NULL with an exception set. */
static void *peers_region(PyObject *obj, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE) < 0) return NULL;
    if (!endgame_peers_check(view->buf, (size_t)view->len)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "endgame peers: not a region peers_init laid out");
        return NULL;
    }
    return view->buf;
}

PyObject *py_peers_bytes(PyObject *self, PyObject *args) {
    int slots, bits;
    if (!PyArg_ParseTuple(args, "ii", &slots, &bits)) return NULL;
    const size_t bytes = endgame_peers_bytes(slots, bits);
    if (!bytes)
        return PyErr_Format(PyExc_ValueError, "endgame peers: slots 1..%d, table bits %d..%d", PEERS_MAX_SLOTS,
                            ENDGAME_MIN_TABLE, ENDGAME_MAX_TABLE);
    return PyLong_FromSize_t(bytes);
}

PyObject *py_peers_init(PyObject *self, PyObject *args) {
    PyObject *obj;
    int slots, bits;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "Oii", &obj, &slots, &bits)) return NULL;
    if (PyObject_GetBuffer(obj, &view, PyBUF_WRITABLE) < 0) return NULL;
    const size_t bytes = endgame_peers_bytes(slots, bits);
    if (!bytes || (size_t)view.len < bytes) {
        PyBuffer_Release(&view);
        return PyErr_Format(PyExc_ValueError, "endgame peers: a region of %zu bytes is needed", bytes);
    }
    endgame_peers_init(view.buf, slots, bits);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

PyObject *py_peers_claim(PyObject *self, PyObject *args) {
    PyObject *obj;
    unsigned long long key;
    int process;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "OKi", &obj, &key, &process)) return NULL;
    void *region = peers_region(obj, &view);
    if (!region) return NULL;
    int slot;
    Py_BEGIN_ALLOW_THREADS
    slot = endgame_peers_claim(region, (uint64_t)key, process);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromLong(slot);
}

PyObject *py_peers_release(PyObject *self, PyObject *args) {
    PyObject *obj;
    int slot, process;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "Oii", &obj, &slot, &process)) return NULL;
    void *region = peers_region(obj, &view);
    if (!region) return NULL;
    if (slot >= 0) endgame_peers_release(region, slot, process);
    else endgame_peers_forget(region, process);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}
