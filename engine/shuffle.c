/*
 * anchor.engine._movegen: tiles shuffled as Python's random.Random(seed).shuffle shuffles
 * them, tile for tile, without the ~30 us of Python a shuffle cost: the Mersenne Twister
 * (MT19937) seeded by init_by_array from the seed's 32-bit words, as CPython's random_seed
 * does, and shuffle's Fisher-Yates with _randbelow's rejection of getrandbits(n.bit_length()).
 * engine/seeding.py turns a seed (an int, or a text as Random hashes it) into those words;
 * a self-played game's bag and each simulation iteration's tiles are shuffled here, and a
 * test holds it equal to random.Random on many seeds of both kinds.
 */
#include "glue.h"

enum { MT_N = 624, MT_M = 397 };

typedef struct {
    uint32_t mt[MT_N];
    int i;
} Twister;

static void init_genrand(Twister *t, uint32_t s) {
    t->mt[0] = s;
    for (int i = 1; i < MT_N; i++) t->mt[i] = 1812433253u * (t->mt[i - 1] ^ (t->mt[i - 1] >> 30)) + (uint32_t)i;
    t->i = MT_N;
}

/* key: `len` little-endian 32-bit words (at least one). */
static void init_by_array(Twister *t, const uint8_t *key, size_t len) {
    init_genrand(t, 19650218u);
    size_t i = 1, j = 0;
    for (size_t k = MT_N > len ? MT_N : len; k; k--) {
        uint32_t word;
        memcpy(&word, key + 4 * j, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap32(word);
#endif
        t->mt[i] = (t->mt[i] ^ ((t->mt[i - 1] ^ (t->mt[i - 1] >> 30)) * 1664525u)) + word + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            t->mt[0] = t->mt[MT_N - 1];
            i = 1;
        }
        if (j >= len) j = 0;
    }
    for (size_t k = MT_N - 1; k; k--) {
        t->mt[i] = (t->mt[i] ^ ((t->mt[i - 1] ^ (t->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            t->mt[0] = t->mt[MT_N - 1];
            i = 1;
        }
    }
    t->mt[0] = 0x80000000u;
}

static uint32_t genrand(Twister *t) {
    if (t->i >= MT_N) {
        for (int k = 0; k < MT_N; k++) {
            uint32_t y = (t->mt[k] & 0x80000000u) | (t->mt[(k + 1) % MT_N] & 0x7fffffffu);
            t->mt[k] = t->mt[(k + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        t->i = 0;
    }
    uint32_t y = t->mt[t->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* random.Random._randbelow_with_getrandbits(n), for 0 < n < 2^32. */
static uint32_t below(Twister *t, uint32_t n) {
    const int k = 32 - __builtin_clz(n); /* n.bit_length() */
    uint32_t r;
    do r = genrand(t) >> (32 - k);
    while (r >= n);
    return r;
}

PyObject *py_shuffled(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer key, items;
    if (!PyArg_ParseTuple(args, "y*y*", &key, &items)) return NULL;
    PyObject *result = NULL;
    if (key.len < 4 || key.len % 4 || items.len > MAX_TILES) {
        PyErr_SetString(PyExc_ValueError, "shuffled: the key is one or more 32-bit words, the items at most 65535 bytes");
        goto out;
    }
    result = PyBytes_FromStringAndSize(items.buf, items.len);
    if (!result) goto out;
    Twister *t = PyMem_Malloc(sizeof *t); /* 2.5 KiB: off the stack */
    if (!t) {
        Py_CLEAR(result);
        PyErr_NoMemory();
        goto out;
    }
    init_by_array(t, key.buf, (size_t)key.len / 4);
    uint8_t *x = (uint8_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t i = items.len - 1; i >= 1; i--) { /* Random.shuffle */
        uint32_t j = below(t, (uint32_t)i + 1);
        uint8_t swap = x[i];
        x[i] = x[j];
        x[j] = swap;
    }
    PyMem_Free(t);
out:
    PyBuffer_Release(&key);
    PyBuffer_Release(&items);
    return result;
}
