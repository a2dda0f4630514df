/* The coastal band: which blocks of the planet can hold a cell within a given distance of the
 * waterline (docs/coast.md, "The coastal band"). Typical size: a planet of 12500 x 6076 cells has
 * 782 x 380 blocks of TB_COAST_BAND_BLOCK cells square. The invariant: every cell whose squared
 * distance d2 is at most D^2 lies in a block whose band distance is at most
 * tb_coast_band_blocks(D), so a phase that does nothing (or writes a known constant) past reach D
 * may skip the other blocks and give the same bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/coast/methods.h"

#define S_B TB_COAST_BAND_BLOCK

void tb_coast_band_mark_row(uint8_t *bits, const uint8_t *land, int64_t w, int64_t y)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint8_t *b = bits + (size_t)(y / S_B) * (size_t)((w + S_B - 1) / S_B);
    const uint8_t *row = land + (size_t)y * (size_t)w;
    int64_t bx = 0;
    for (; (bx + 1) * S_B <= w; bx++) { /* whole blocks, eight cells at a time */
        uint64_t v0, v1;
        memcpy(&v0, row + bx * S_B, 8);
        memcpy(&v1, row + bx * S_B + 8, 8);
        bool any_land = (v0 | v1) != 0,
             any_sea = (((v0 - ones) & ~v0) | ((v1 - ones) & ~v1)) & highs; /* a zero byte */
        b[bx] |= (uint8_t)(any_land | any_sea << 1);
    }
    if (bx * S_B < w) { /* the narrow last block */
        uint8_t any_land = 0, any_sea = 0;
        for (int64_t x = bx * S_B; x < w; x++) {
            any_land |= row[x] != 0;
            any_sea |= row[x] == 0;
        }
        b[bx] |= (uint8_t)(any_land | any_sea << 1);
    }
}

size_t tb_coast_band_bits_size(int64_t w, int64_t h)
{
    return (size_t)((w + S_B - 1) / S_B) * (size_t)((h + S_B - 1) / S_B);
}

typedef struct {
    const uint8_t *kind;
    int64_t w;
    uint8_t *bits;
} s_bits_t;

static void s_bits_rows(void *ctx, int64_t y0, int64_t y1, size_t chunk, int thread)
{
    (void)chunk;
    (void)thread;
    const s_bits_t *c = ctx;
    for (int64_t y = y0; y < y1; y++)
        tb_coast_band_mark_row(c->bits, c->kind, c->w, y);
}

int tb_coast_band_make(tb_pool_t *pool, const uint8_t *kind, int64_t w, int64_t h,
                       tb_coast_band_t *band, tb_err_t *err)
{
    /* the row chunks of the pool are the block rows */
    _Static_assert(TB_COAST_BAND_BLOCK == TB_COAST_CHUNK_ROWS, "a chunk of rows is a block row");
    uint8_t *bits = tb_calloc(tb_coast_band_bits_size(w, h), 1, "coast band blocks", err);
    if (!bits)
        return -1;
    size_t cells = (size_t)w * (size_t)h;
    uint8_t *land = tb_malloc(cells, "coast band land", err);
    if (!land) {
        free(bits);
        return -1;
    }
    for (size_t i = 0; i < cells; i++)
        land[i] = kind[i] == TB_COAST_LAND;
    s_bits_t c = {land, w, bits};
    tb_coast_par_rows(pool, h, s_bits_rows, &c);
    free(land);
    return tb_coast_band_from_bits(bits, w, h, band, err);
}

int tb_coast_band_from_bits(uint8_t *bits, int64_t w, int64_t h, tb_coast_band_t *band,
                            tb_err_t *err)
{
    int64_t bw = (w + S_B - 1) / S_B, bh = (h + S_B - 1) / S_B;
    size_t n = (size_t)bw * (size_t)bh;
    uint16_t *dist = tb_malloc(n * sizeof *dist, "coast band distances", err);
    float *stretch_max =
        dist ? tb_malloc(n * sizeof *stretch_max, "coast band stretch", err) : NULL;
    int32_t *queue = stretch_max ? tb_malloc(n * sizeof *queue, "coast band queue", err) : NULL;
    if (!queue) {
        free(bits);
        free(dist);
        free(stretch_max);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        stretch_max[i] = TB_COAST_MAX_STRETCH; /* until the delta stretch says less */
    /* seeds: a block holding both, or one whose 8-neighbour holds what it lacks; then the
     * Chebyshev distance in blocks (8-neighbour breadth-first, X wraps) from the nearest seed */
    size_t head = 0, tail = 0;
    for (int64_t by = 0; by < bh; by++)
        for (int64_t bx = 0; bx < bw; bx++) {
            size_t i = (size_t)by * (size_t)bw + (size_t)bx;
            uint8_t all = bits[i];
            for (int64_t dy = -1; dy <= 1; dy++)
                for (int64_t dx = -1; dx <= 1; dx++) {
                    int64_t ny = by + dy;
                    if (ny < 0 || ny >= bh)
                        continue;
                    all |= bits[(size_t)ny * (size_t)bw + (size_t)tb_wrap(bx + dx, bw)];
                }
            dist[i] = UINT16_MAX;
            if (all == 3) {
                dist[i] = 0;
                queue[tail++] = (int32_t)i;
            }
        }
    while (head < tail) {
        size_t i = (size_t)queue[head++];
        int64_t by = (int64_t)i / bw, bx = (int64_t)i % bw;
        uint16_t next = dist[i] < UINT16_MAX - 1 ? (uint16_t)(dist[i] + 1) : UINT16_MAX - 1;
        for (int64_t dy = -1; dy <= 1; dy++)
            for (int64_t dx = -1; dx <= 1; dx++) {
                int64_t ny = by + dy;
                if (ny < 0 || ny >= bh)
                    continue;
                size_t j = (size_t)ny * (size_t)bw + (size_t)tb_wrap(bx + dx, bw);
                if (dist[j] == UINT16_MAX) {
                    dist[j] = next;
                    queue[tail++] = (int32_t)j;
                }
            }
    }
    free(bits);
    free(queue);
    band->w = w;
    band->h = h;
    band->bw = bw;
    band->bh = bh;
    band->dist = dist;
    band->stretch_max = stretch_max;
    return 0;
}

void tb_coast_band_free(tb_coast_band_t *band)
{
    free(band->dist);
    free(band->stretch_max);
    band->dist = NULL;
    band->stretch_max = NULL;
}

int64_t tb_coast_band_blocks(uint32_t reach_d2)
{
    /* D = ceil(sqrt(reach_d2)) cells: a cell with d2 <= reach_d2 is within D cells (Euclidean, so
     * Chebyshev too) of a cell of the other kind; the blocks holding the two are at most D / S + 2
     * blocks apart (the + 2: a narrow last block column at the X seam), and every chain of
     * 8-neighbour blocks between a block with this cell's kind and one with the other passes a
     * seed block, so the cell's block is at most that far from a seed */
    int64_t d = (int64_t)ceil(sqrt((double)reach_d2));
    while (d > 0 && (uint64_t)(d - 1) * (uint64_t)(d - 1) >= reach_d2)
        d--;
    while ((uint64_t)d * (uint64_t)d < reach_d2)
        d++;
    return d / S_B + 2;
}
