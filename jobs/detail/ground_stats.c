/* Ground statistics; see ground_stats.h. */
#include "jobs/detail/ground_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Regional maxima: a plateau (8-connected cells of one value) above 0 whose every neighbour is
 * lower counts once, so a map quantised to bytes counts its mounds, not its flat tops. */
int64_t tb_ground_deposit_maxima_u8(const uint8_t *dep, int64_t w, int64_t h, const uint8_t *mask)
{
    size_t n = (size_t)w * (size_t)h;
    uint8_t *seen = calloc(n, 1);
    int64_t *stack = malloc(n * sizeof *stack);
    int64_t count = 0;
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return -1;
    }
    for (int64_t j = 1; j + 1 < h; j++)
        for (int64_t i = 1; i + 1 < w; i++) {
            size_t at = (size_t)j * (size_t)w + (size_t)i;
            uint8_t v = dep[at];
            if (v == 0 || seen[at] || (mask && !mask[at]))
                continue;
            int64_t top = 1, sp = 0;
            stack[sp++] = (int64_t)at;
            seen[at] = 1;
            while (sp > 0) {
                int64_t c = stack[--sp], ci = c % w, cj = c / w;
                if (ci == 0 || cj == 0 || ci == w - 1 || cj == h - 1) {
                    top = 0; /* a plateau touching the border is not known to be a maximum */
                    continue;
                }
                for (int dj = -1; dj <= 1; dj++)
                    for (int di = -1; di <= 1; di++) {
                        int64_t t = c + dj * w + di;
                        if (dep[t] > v)
                            top = 0;
                        else if (dep[t] == v && !seen[t]) {
                            seen[t] = 1;
                            stack[sp++] = t;
                        }
                    }
            }
            count += top;
        }
    free(seen);
    free(stack);
    return count;
}

/* The Laplacian from the ring two cells out (a 5 x 5 stencil's cross), 1/m: less sensitive to the
 * 2 m noise than the 3 x 3 one. */
static double s_laplacian(const float *h, int64_t w, size_t at, double cell_m)
{
    double c = h[at];
    double sum = (double)h[at - 2] + (double)h[at + 2] + (double)h[at - 2 * (size_t)w] +
                 (double)h[at + 2 * (size_t)w] - 4 * c;
    return sum / (4.0 * cell_m * cell_m);
}

void tb_ground_deposit_where(const float *height_m, const double *dep_m, const uint8_t *channel,
                             int64_t w, int64_t h, double cell_m, double hollow_per_m,
                             double *share_hollow_or_channel, double *share_convex)
{
    double all = 0, in = 0, cx = 0;
    for (int64_t j = 2; j + 2 < h; j++)
        for (int64_t i = 2; i + 2 < w; i++) {
            size_t at = (size_t)j * (size_t)w + (size_t)i;
            double d = dep_m[at];
            if (d <= 0)
                continue;
            double lap = s_laplacian(height_m, w, at, cell_m);
            all += d;
            if (lap > hollow_per_m || (channel && channel[at]))
                in += d;
            else if (lap < -hollow_per_m)
                cx += d;
        }
    *share_hollow_or_channel = all > 0 ? in / all : 0;
    *share_convex = all > 0 ? cx / all : 0;
}

/* In-place iterative radix-2 FFT of n complex values (re, im), stride 1. */
static void s_fft(double *re, double *im, int64_t n)
{
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j];
            re[j] = t;
            t = im[i];
            im[i] = im[j];
            im[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        double a = -2 * M_PI / (double)len;
        for (int64_t k = 0; k < len / 2; k++) {
            double wr = cos(a * (double)k), wi = sin(a * (double)k);
            for (int64_t s = 0; s < n; s += len) {
                int64_t p = s + k, q = p + len / 2;
                double xr = re[q] * wr - im[q] * wi, xi = re[q] * wi + im[q] * wr;
                re[q] = re[p] - xr;
                im[q] = im[p] - xi;
                re[p] += xr;
                im[p] += xi;
            }
        }
    }
}

int tb_ground_spectrum(const float *height_m, int64_t stride, int64_t n, double cell_m,
                       double var_m2[TB_GROUND_BANDS], tb_err_t *err)
{
    if (n < 16 || n > 4096 || (n & (n - 1)))
        return tb_err_set(err, TB_E_INVALID,
                          "spectrum: a crop of %lld cells is not a power of "
                          "two in 16..4096",
                          (long long)n);
    size_t cells = (size_t)n * (size_t)n;
    double *re = malloc(cells * sizeof *re), *im = calloc(cells, sizeof *im);
    double *cre = malloc((size_t)n * sizeof *cre), *cim = malloc((size_t)n * sizeof *cim);
    if (!re || !im || !cre || !cim) {
        free(re);
        free(im);
        free(cre);
        free(cim);
        return tb_err_set(err, TB_E_NOMEM, "spectrum: out of memory for %lld^2", (long long)n);
    }
    /* the plane of least squares: on a centred square grid x, y and 1 are orthogonal */
    double s = 0, sx = 0, sy = 0, xx = 0;
    double c = (double)(n - 1) / 2;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            double v = height_m[j * stride + i];
            s += v;
            sx += v * ((double)i - c);
            sy += v * ((double)j - c);
        }
    for (int64_t i = 0; i < n; i++)
        xx += ((double)i - c) * ((double)i - c);
    xx *= (double)n;
    double mean = s / (double)cells, bx = sx / xx, by = sy / xx, wsum = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            double hw = (0.5 - 0.5 * cos(2 * M_PI * (double)i / (double)n)) *
                        (0.5 - 0.5 * cos(2 * M_PI * (double)j / (double)n));
            double v =
                height_m[j * stride + i] - mean - bx * ((double)i - c) - by * ((double)j - c);
            re[j * n + i] = v * hw;
            wsum += hw * hw;
        }
    for (int64_t j = 0; j < n; j++)
        s_fft(re + j * n, im + j * n, n);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < n; j++) {
            cre[j] = re[j * n + i];
            cim[j] = im[j * n + i];
        }
        s_fft(cre, cim, n);
        for (int64_t j = 0; j < n; j++) {
            re[j * n + i] = cre[j];
            im[j * n + i] = cim[j];
        }
    }
    double band[TB_GROUND_BANDS] = {0};
    int has[TB_GROUND_BANDS] = {0};
    /* Parseval: sum |F|^2 / n^2 = sum v^2; divided by the window's mean square, the variance */
    double norm = 1.0 / ((double)cells * wsum);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            if (i == 0 && j == 0)
                continue;
            int64_t ki = i <= n / 2 ? i : i - n, kj = j <= n / 2 ? j : j - n;
            double k = sqrt((double)(ki * ki + kj * kj)) / ((double)n * cell_m); /* cycles/m */
            double lambda = 1.0 / k;
            int b = (int)floor(log2(lambda / TB_GROUND_BAND0_M));
            if (b < 0 || b >= TB_GROUND_BANDS)
                continue;
            band[b] += (re[j * n + i] * re[j * n + i] + im[j * n + i] * im[j * n + i]) * norm;
            has[b] = 1;
        }
    for (int b = 0; b < TB_GROUND_BANDS; b++)
        var_m2[b] = has[b] ? band[b] : NAN;
    free(re);
    free(im);
    free(cre);
    free(cim);
    return 0;
}

#define S_CURV_BINS 4096

void tb_ground_curvature(const float *height_m, int64_t w, int64_t h, double cell_m,
                         const uint8_t *mask, double *mean, double *p99, int64_t *cells)
{
    static const double lo = 1e-7, hi = 10;
    int64_t hist[S_CURV_BINS] = {0}, n = 0;
    double sum = 0, scale = (double)S_CURV_BINS / log(hi / lo), c2 = cell_m * cell_m;
    for (int64_t j = 1; j + 1 < h; j++)
        for (int64_t i = 1; i + 1 < w; i++) {
            size_t at = (size_t)j * (size_t)w + (size_t)i;
            if (mask && !mask[at])
                continue;
            const float *p = height_m + at;
            double hxx = ((double)p[-1] - 2.0 * p[0] + p[1]) / c2;
            double hyy = ((double)p[-w] - 2.0 * p[0] + p[w]) / c2;
            double hxy = ((double)p[w + 1] - p[w - 1] - p[-w + 1] + p[-w - 1]) / (4 * c2);
            double v = fabs(hxx) + fabs(hyy) + 2 * fabs(hxy);
            sum += v;
            n++;
            int b = v <= lo ? 0 : (int)(log(v / lo) * scale);
            hist[b < 0 ? 0 : (b >= S_CURV_BINS ? S_CURV_BINS - 1 : b)]++;
        }
    *cells = n;
    *mean = n ? sum / (double)n : 0;
    *p99 = 0;
    int64_t want = (int64_t)ceil(0.99 * (double)n), acc = 0;
    for (int b = 0; b < S_CURV_BINS && n; b++) {
        acc += hist[b];
        if (acc >= want) {
            *p99 = lo * exp((b + 1) / scale);
            break;
        }
    }
}

double tb_ground_face_rise(const float *height_m, int64_t w, int64_t h, double cell_m, int64_t x,
                           int64_t y, int64_t r)
{
    double best = 0;
    for (int64_t j = y - r; j <= y + r; j++)
        for (int64_t i = x - r; i <= x + r; i++) {
            if (i < 0 || j < 0 || i >= w || j >= h)
                continue;
            /* the runs along the rows, the columns and the diagonals from (i, j), rising or
             * falling; a diagonal step is over 45 degrees when it rises more than its length */
            static const int64_t dir[8][2] = {{1, 0}, {-1, 0},  {0, 1},  {0, -1},
                                              {1, 1}, {-1, -1}, {1, -1}, {-1, 1}};
            for (int d = 0; d < 8; d++) {
                double len = d < 4 ? cell_m : cell_m * 1.4142135623730951;
                double rise = 0, sign = 0;
                int64_t a = i, b = j;
                for (;;) {
                    int64_t na = a + dir[d][0], nb = b + dir[d][1];
                    if (na < 0 || nb < 0 || na >= w || nb >= h)
                        break;
                    double dz = (double)height_m[nb * w + na] - (double)height_m[b * w + a];
                    if (!(fabs(dz) > len) || (sign != 0 && dz * sign < 0))
                        break;
                    sign = dz > 0 ? 1 : -1;
                    rise += fabs(dz);
                    a = na;
                    b = nb;
                }
                best = rise > best ? rise : best;
            }
        }
    return best;
}
