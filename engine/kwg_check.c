/*
 * anchor.engine._movegen: the KWG checker (kwg_check.h says what it checks).
 */
#include "core.h"
#include "kwg_check.h"

#include <stdio.h>

/* Iterative depth-first walk over sibling lists from the DAWG root, with
 * memoised word counts per list (linear in the graph) and cycle detection. */
int kwg_walk(const uint32_t *nodes, uint32_t n, unsigned alphabet, unsigned min_tile,
                    KwgReport *rep) {
    uint32_t root = kwg_arc(nodes[0]);
    rep->words = 0;
    rep->max_length = 0;
    rep->dawg_nodes = 0;
    rep->extent = 2;
    if (root == 0) return 0;

    /* state per list start: 0 unseen, 1 on the stack, 2 done */
    uint8_t *state = calloc(n, 1);
    uint64_t *count = calloc(n, sizeof *count);
    uint16_t *depth = calloc(n, sizeof *depth);
    /* explicit stack of (list start, cursor); depth bounded by the longest word */
    uint32_t *stack_list = malloc(sizeof(uint32_t) * 65536);
    uint32_t *stack_pos = malloc(sizeof(uint32_t) * 65536);
    int ok = 0;
    if (!state || !count || !depth || !stack_list || !stack_pos) {
        snprintf(rep->error, sizeof rep->error, "out of memory while checking the lexicon");
        goto done;
    }
    int top = 0;
    stack_list[0] = root;
    stack_pos[0] = root;
    state[root] = 1;
    while (top >= 0) {
        uint32_t list = stack_list[top];
        uint32_t i = stack_pos[top];
        if (i >= n) {
            snprintf(rep->error, sizeof rep->error, "sibling list at node %u runs past the end", list);
            goto done;
        }
        uint32_t node = nodes[i];
        unsigned tile = kwg_tile(node);
        if (tile < min_tile || tile > alphabet) {
            snprintf(rep->error, sizeof rep->error,
                     "node %u has tile %u, outside the alphabet of %u letters", i, tile, alphabet);
            goto done;
        }
        if (i > list && tile <= kwg_tile(nodes[i - 1])) {
            snprintf(rep->error, sizeof rep->error,
                     "sibling list at node %u is not in ascending tile order at node %u", list, i);
            goto done;
        }
        uint32_t child = kwg_arc(node);
        if (child && state[child] != 2) {
            if (state[child] == 1) {
                snprintf(rep->error, sizeof rep->error, "the word graph has a cycle at node %u", child);
                goto done;
            }
            if (top + 1 >= 65536) {
                snprintf(rep->error, sizeof rep->error, "words longer than 65535 letters");
                goto done;
            }
            state[child] = 1;
            ++top;
            stack_list[top] = child;
            stack_pos[top] = child;
            continue;
        }
        /* child finished (or none): fold it into this list's totals */
        uint64_t c = (uint64_t)kwg_accepts(node) + (child ? count[child] : 0);
        unsigned d = 1u + (child ? depth[child] : 0u);
        count[list] += c;
        if (count[list] > KWG_MAX_WORDS) {
            snprintf(rep->error, sizeof rep->error, "implausible word count: the graph is corrupt");
            goto done;
        }
        if (d > depth[list]) depth[list] = (uint16_t)d;
        rep->dawg_nodes++;
        if (i + 1 > rep->extent) rep->extent = i + 1;
        if (kwg_is_end(node)) {
            state[list] = 2;
            --top;
        } else {
            stack_pos[top] = i + 1;
        }
    }
    rep->words = count[root];
    if (rep->counts) /* from the end back: a node's suffix needs the next node's */
        for (uint32_t i = n; i-- > 0;) {
            const uint32_t node = nodes[i], arc = kwg_arc(node);
            uint64_t c = (uint64_t)kwg_accepts(node) + (arc < n ? count[arc] : 0);
            if (!kwg_is_end(node) && i + 1 < n) c += rep->counts[i + 1];
            rep->counts[i] = c > KWG_MAX_WORDS ? (uint32_t)KWG_MAX_WORDS : (uint32_t)c;
        }
    if (rep->counts) rep->counts[0] = 0; /* node 0 heads no list: an arc of 0 is none */
    rep->max_length = depth[root];
    ok = 0;
    goto out;
done:
    ok = -1;
out:
    free(state);
    free(count);
    free(depth);
    free(stack_list);
    free(stack_pos);
    return ok;
}

/* Copy nodes out of an arbitrary byte buffer as host-order uint32 when the host is not
 * little-endian or the buffer is unaligned; otherwise use it in place. */
const uint32_t *kwg_nodes_view(const void *buf, size_t len, uint32_t **owned) {
    *owned = NULL;
    const unsigned char *p = buf;
    size_t n = len / 4;
    const uint16_t probe = 1;
    int little = *(const unsigned char *)&probe == 1;
    if (little && ((uintptr_t)p % sizeof(uint32_t)) == 0) return (const uint32_t *)p;
    uint32_t *copy = malloc(n * sizeof *copy + 1);
    if (!copy) return NULL;
    for (size_t i = 0; i < n; i++) copy[i] = load_le32(p + 4 * i);
    *owned = copy;
    return copy;
}

/* Every check of a graph read from a file (kwg_check.h), the buffer's size aside: 0, or -1
 * with rep->error saying what is wrong. */
int kwg_check_nodes(const uint32_t *nodes, uint32_t n, unsigned alphabet, unsigned min_tile, KwgReport *rep) {
    for (uint32_t i = 0; i < n; i++) {
        uint32_t arc = kwg_arc(nodes[i]);
        if (arc >= n) {
            snprintf(rep->error, sizeof rep->error, "node %u points to node %u, past the last (%u)",
                     i, arc, n - 1);
            return -1;
        } else if (i >= 2 && kwg_tile(nodes[i]) > alphabet) {
            snprintf(rep->error, sizeof rep->error,
                     "node %u has tile %u, outside the alphabet of %u letters", i,
                     kwg_tile(nodes[i]), alphabet);
            return -1;
        } else if (i >= 2 && arc == 1) {
            snprintf(rep->error, sizeof rep->error, "node %u points into the root pointers", i);
            return -1;
        }
    }
    if (!kwg_is_end(nodes[n - 1])) {
        snprintf(rep->error, sizeof rep->error, "the last node does not end its sibling list (truncated?)");
        return -1;
    }
    return kwg_walk(nodes, n, alphabet, min_tile > 1 ? 1 : min_tile, rep) != 0 ? -1 : 0;
}
