/*
 * anchor.engine._movegen: Board preparation for one pass: cross-sets and cross-scores of empty squares (with
 * the letter-run filter), anchors, and placing a move's tiles on a prepared board.
 */
#include "core.h"

/* Of `letters`, those that may go on the empty square (row, col) beside tiles of the row:
 * every run of up to 4 letters through it, with up to 3 of the tiles on each side, must
 * occur in some word. */
static uint64_t fits_runs(const Search *s, int row, int col, uint64_t letters) {
    const int a = s->ctx.rules->alphabet, base = row * s->pass.cols;
    unsigned line[7];
    int left = 0, right = 0;
    while (left < 3 && col - left - 1 >= 0 && s->pass.cells[base + col - left - 1]) left++;
    while (right < 3 && col + right + 1 < s->pass.cols && s->pass.cells[base + col + right + 1]) right++;
    for (int i = 0; i < left; i++) line[i] = s->pass.cells[base + col - left + i] & TILE_MASK;
    for (int i = 0; i < right; i++) line[left + 1 + i] = s->pass.cells[base + col + 1 + i] & TILE_MASK;
    const int len = left + 1 + right, n = len < 4 ? len : 4;
    /* the runs of n letters through the square: starting at most n - 1 before it */
    const int first = left - (n - 1) > 0 ? left - (n - 1) : 0;
    const int last = left < len - n ? left : len - n;
    /* each run's index with the first letter on the square, and what a later letter adds */
    size_t index[4], step[4];
    int runs = 0;
    line[left] = 1;
    for (int at = first; at <= last; at++, runs++) {
        index[runs] = run_index(a, line + at, n);
        step[runs] = 1;
        for (int i = at + n - 1; i > left; i--) step[runs] *= (size_t)a;
    }
    /* a run that ends on the square holds its letters' bits side by side: read them at once
     * (one unaligned word, where the table has it whole) */
    const size_t bytes = run_table_bytes(a);
    int slow = 0;
    for (int i = 0; i < runs; i++) {
        if (step[i] != 1 || a > 56 || (index[i] >> 3) + 8 > bytes) {
            index[slow] = index[i];
            step[slow++] = step[i];
            continue;
        }
        uint64_t word;
        memcpy(&word, s->ctx.runs + (index[i] >> 3), sizeof word);
        letters &= ((word >> (index[i] & 7)) & (((uint64_t)1 << a) - 1)) << 1;
    }
    uint64_t ok = 0;
    for (uint64_t todo = slow ? letters : 0; todo; todo &= todo - 1) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        int fits = 1;
        for (int i = 0; i < slow && fits; i++) {
            size_t at = index[i] + (x - 1) * step[i];
            fits = s->ctx.runs[at >> 3] >> (at & 7) & 1;
        }
        if (fits) ok |= (uint64_t)1 << x;
    }
    return slow ? ok : letters;
}

/* A bit per square of a row of `cols` cells: set where a tile is. Eight squares at a
 * time where bytes are little-endian: each nonzero byte's high bit, gathered by one
 * multiplication. */
static inline uint32_t eight_bits(const uint8_t *cells) {
    uint64_t x;
    memcpy(&x, cells, 8);
    x = ((((x & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | x) >> 7) & 0x0101010101010101ull;
    return (uint32_t)((x * 0x0102040810204080ull) >> 56);
}

static inline uint32_t row_bits(const uint8_t *cells, int cols) {
    uint32_t bits = 0;
    int col = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; col + 8 <= cols; col += 8) bits |= eight_bits(cells + col) << col;
    if (col < cols && cols >= 8) /* the last eight squares, overlapping those done */
        return bits | eight_bits(cells + cols - 8) << (cols - 8);
#endif
    for (; col < cols; col++) bits |= (uint32_t)(cells[col] != 0) << col;
    return bits;
}

/* The perpendicular word through the empty square (row, col) of the oriented board, with
 * the tiles above and below it: *score gets their points and the result the letters of
 * `letters` that make a word there (every letter when there is no such word, the square
 * then keeping score -1). */
HOT_INLINE uint64_t vertical_cross(const Search *s, const Rules *r, int row, int col, uint64_t letters, int32_t *score) {
    int top = row, bottom = row;
    while (top > 0 && s->pass.cells[(top - 1) * s->pass.cols + col]) top--;
    while (bottom + 1 < s->pass.rows && s->pass.cells[(bottom + 1) * s->pass.cols + col]) bottom++;
    const uint64_t all = every_letter(r);
    if (top == row && bottom == row) {
        *score = -1;
        return all;
    }
    int32_t points = 0;
    uint32_t list = s->ctx.root;
    for (int k = top; k < row && list; k++) {
        uint8_t cell = s->pass.cells[k * s->pass.cols + col];
        uint32_t i = child_node(s, list, cell & TILE_MASK);
        list = i ? kwg_arc(s->ctx.nodes[i]) : 0;
        if (!i) break;
    }
    for (int k = top; k <= bottom; k++)
        if (k != row) points += tile_points(r, s->pass.cells[k * s->pass.cols + col]);
    *score = points;
    if (row == bottom) return list_accepts(s, list) & all;
    uint64_t mask = 0, children = list_children(s, list), todo = children & letters;
    while (todo) {
        unsigned x = (unsigned)__builtin_ctzll(todo);
        todo &= todo - 1;
        uint32_t next = kwg_arc(s->ctx.nodes[child_at(list, children, x)]);
        int acc = 0;
        for (int k = row + 1; k <= bottom && next; k++) {
            uint32_t j = child_node(s, next, s->pass.cells[k * s->pass.cols + col] & TILE_MASK);
            acc = j && k == bottom ? kwg_accepts(s->ctx.nodes[j]) : 0;
            next = j ? kwg_arc(s->ctx.nodes[j]) : 0;
            if (!j) break;
        }
        if (acc) mask |= (uint64_t)1 << x;
    }
    return mask & all;
}

/* The cross-set of the empty square (row, col) from scratch: the perpendicular word's
 * letters, then, beside tiles of the row, only letters whose runs with them occur in a
 * word (of `letters`: the others are kept as they are, the search never reads them). */
static void square_cross(Search *s, const Rules *r, int row, int col, uint64_t letters) {
    const int idx = row * s->pass.cols + col;
    uint64_t cross = vertical_cross(s, r, row, col, letters, &s->pass.cross_score[idx]);
    const int beside = (col > 0 && s->pass.cells[idx - 1]) || (col + 1 < s->pass.cols && s->pass.cells[idx + 1]);
    if (beside && s->ctx.runs) {
        uint64_t some = cross & letters;
        cross = fits_runs(s, row, col, some) | (cross & ~some);
    }
    s->pass.cross[idx] = cross;
}

/* Anchors of row `row` (empty squares beside a tile), from the occupancy of the rows. */
HOT_INLINE void row_anchors(Search *s, int row, const uint32_t *occupied) {
    const uint32_t full = (uint32_t)((1u << s->pass.cols) - 1), here = occupied[row];
    const uint32_t vertical = (row > 0 ? occupied[row - 1] : 0) | (row + 1 < s->pass.rows ? occupied[row + 1] : 0);
    const uint32_t anchors = ~here & full & (vertical | ((here << 1) & full) | (here >> 1));
    s->pass.anchors[row] = anchors;
    memset(s->pass.anchor + row * s->pass.cols, 0, (size_t)s->pass.cols);
    for (uint32_t a = anchors; a; a &= a - 1) s->pass.anchor[row * s->pass.cols + __builtin_ctz(a)] = 1;
}

/* Lay the board out for one pass (transposed for down plays), then compute anchors,
 * cross-sets and cross-scores from the perpendicular (vertical) words: of `letters` (the
 * rack's, or every letter for a board that racks will come and go on). Squares are found
 * from per-row occupancy bits: only squares under or over a tile need a cross-set. */
void prepare_pass(Search *s, const Rules *r, const uint8_t *board, int dir, uint64_t letters) {
    s->pass.dir = dir;
    s->pass.rows = dir ? r->cols : r->rows;
    s->pass.cols = dir ? r->rows : r->cols;
    s->pass.lm = r->lm[dir];
    s->pass.wm = r->wm[dir];
    const int cells = s->pass.rows * s->pass.cols;
    if (dir) {
        for (int row = 0; row < s->pass.rows; row++)
            for (int col = 0; col < s->pass.cols; col++) s->pass.cells[row * s->pass.cols + col] = board[col * r->cols + row];
    } else {
        memcpy(s->pass.cells, board, (size_t)cells);
    }
    uint64_t all = every_letter(r);
    uint32_t occupied[MAX_SIDE], full = (uint32_t)((1u << s->pass.cols) - 1);
    int any_tile = 0;
    for (int row = 0; row < s->pass.rows; row++) {
        occupied[row] = row_bits(s->pass.cells + row * s->pass.cols, s->pass.cols);
        any_tile |= occupied[row] != 0;
    }
    for (int idx = 0; idx < cells; idx++) {
        s->pass.cross[idx] = all;
        s->pass.cross_score[idx] = -1;
    }
    for (int row = 0; row < s->pass.rows; row++) {
        row_anchors(s, row, occupied);
        uint32_t here = occupied[row];
        uint32_t vertical = (row > 0 ? occupied[row - 1] : 0) | (row + 1 < s->pass.rows ? occupied[row + 1] : 0);
        for (uint32_t x = ~here & full & vertical; x; x &= x - 1) {
            int col = __builtin_ctz(x), idx = row * s->pass.cols + col;
            s->pass.cross[idx] = vertical_cross(s, r, row, col, letters, &s->pass.cross_score[idx]);
        }
    }
    /* squares beside tiles of the row: only letters whose runs with them occur in a word */
    for (int row = 0; row < s->pass.rows && s->ctx.runs; row++) {
        uint32_t here = occupied[row];
        for (uint32_t x = ~here & full & ((here << 1) | (here >> 1)); x; x &= x - 1) {
            int col = __builtin_ctz(x), idx = row * s->pass.cols + col;
            uint64_t some = s->pass.cross[idx] & letters;
            if (some) s->pass.cross[idx] = fits_runs(s, row, col, some) | (s->pass.cross[idx] & ~some);
        }
    }
    s->pass.empty_board = !any_tile;
    if (!any_tile) {
        int cr = dir ? r->centre_col : r->centre_row, cc = dir ? r->centre_row : r->centre_col;
        s->pass.anchor[cr * s->pass.cols + cc] = 1;
        s->pass.anchors[cr] = 1u << cc;
    }
}

/* A pass prepared for every letter (prepare_pass) after tiles are laid on the board:
 * cells[i] on original square square[i]. Only what the tiles touch is worked out again:
 * the cross-sets at the two ends of each new tile's perpendicular run and of its run in
 * the row, and the anchors of the rows around it. The same result as preparing the new
 * board, without the rest of it (playouts lay a move, then search the board again). */
void place_tiles(Search *s, const Rules *r, const uint16_t *square, const uint8_t *cell, int count) {
    const uint64_t all = every_letter(r);
    if (count == 0) return;
    int at[MAX_RACK][2];
    for (int i = 0; i < count; i++) {
        int row = square[i] / r->cols, col = square[i] % r->cols;
        if (s->pass.dir) {
            int t = row;
            row = col;
            col = t;
        }
        at[i][0] = row;
        at[i][1] = col;
        int idx = row * s->pass.cols + col;
        s->pass.cells[idx] = cell[i];
        s->pass.cross[idx] = all;
        s->pass.cross_score[idx] = -1;
    }
    /* the squares to work out again, a bit per column of each row, and the rows whose
     * anchors change: a move's tiles share their runs' ends and their rows */
    uint32_t redo[MAX_SIDE] = {0}, rows = 0;
    for (int i = 0; i < count; i++) {
        const int row = at[i][0], col = at[i][1];
        rows |= (7u << row) >> 1;
        int top = row, bottom = row, left = col, right = col;
        while (top >= 0 && s->pass.cells[top * s->pass.cols + col]) top--;
        while (bottom < s->pass.rows && s->pass.cells[bottom * s->pass.cols + col]) bottom++;
        while (left >= 0 && s->pass.cells[row * s->pass.cols + left]) left--;
        while (right < s->pass.cols && s->pass.cells[row * s->pass.cols + right]) right++;
        if (top >= 0) redo[top] |= 1u << col;
        if (bottom < s->pass.rows) redo[bottom] |= 1u << col;
        if (left >= 0) redo[row] |= 1u << left;
        if (right < s->pass.cols) redo[row] |= 1u << right;
    }
    if (s->pass.empty_board) { /* the centre anchor goes: every row's anchors again */
        rows = ~0u;
        s->pass.empty_board = 0;
    }
    uint32_t occupied[MAX_SIDE]; /* of the rows whose anchors are worked out, and theirs beside */
    const uint32_t read = rows | rows << 1 | rows >> 1;
    for (int row = 0; row < s->pass.rows; row++)
        if (read >> row & 1) occupied[row] = row_bits(s->pass.cells + row * s->pass.cols, s->pass.cols);
    for (int row = 0; row < s->pass.rows; row++) {
        if (rows >> row & 1) row_anchors(s, row, occupied);
        for (uint32_t x = redo[row]; x; x &= x - 1) square_cross(s, r, row, __builtin_ctz(x), all);
    }
}

/* A prepared pass's board, its squares only: half of each array is past the last square
 * of a 15 x 15 board. */
void pass_copy(Pass *to, const Pass *from) {
    const size_t cells = (size_t)(from->rows * from->cols);
    to->rows = from->rows;
    to->cols = from->cols;
    to->dir = from->dir;
    to->lm = from->lm;
    to->wm = from->wm;
    to->empty_board = from->empty_board;
    memcpy(to->cells, from->cells, cells);
    memcpy(to->cross, from->cross, cells * sizeof *to->cross);
    memcpy(to->cross_score, from->cross_score, cells * sizeof *to->cross_score);
    memcpy(to->anchor, from->anchor, cells);
    memcpy(to->anchors, from->anchors, (size_t)from->rows * sizeof *to->anchors);
}

/* Whether two passes of one geometry hold the same board, squares, cross-sets and anchors. */
int pass_equal(const Pass *a, const Pass *b) {
    const size_t cells = (size_t)(a->rows * a->cols);
    return a->rows == b->rows && a->cols == b->cols && a->empty_board == b->empty_board &&
           !memcmp(a->cells, b->cells, cells) && !memcmp(a->cross, b->cross, cells * sizeof *a->cross) &&
           !memcmp(a->cross_score, b->cross_score, cells * sizeof *a->cross_score) &&
           !memcmp(a->anchor, b->anchor, cells) && !memcmp(a->anchors, b->anchors, (size_t)a->rows * sizeof *a->anchors);
}
