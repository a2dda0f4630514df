/* The Braun & Willett (2013) stack and implicit stream-power update; see spl.h. */
#include "jobs/geology/spl.h"

#include <math.h>

size_t tb_spl_build_stack(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                          tb_stack_t *stack)
{
    size_t count = 0, ntrees = 0;
    int32_t *todo = stack->scratch;
    for (int64_t j = 1; j < t->h - 1; j++) {
        size_t row = (size_t)j * (size_t)t->w;
        for (int64_t i = 0; i < t->w; i++) {
            size_t c = row + (size_t)i;
            uint8_t nd = node[c];
            if (!(nd & TB_NODE_SOLVED) || dir[c] == TB_DIR_NONE ||
                (node[tb_topo_nb(t, nd, c, dir[c])] & TB_NODE_SOLVED))
                continue;
            /* A mouth: list its tree depth-first. Donors of d are the solved neighbours whose
             * direction points back at d (neighbour k of d points at d when its dir is 7 - k). */
            stack->tree_start[ntrees++] = (int32_t)count;
            size_t top = 0;
            todo[top++] = (int32_t)c;
            while (top > 0) {
                size_t d = (size_t)todo[--top];
                stack->order[count++] = (int32_t)d;
                const ptrdiff_t *off = t->noff[tb_topo_edge(node[d])];
                for (int k = 0; k < 8; k++) {
                    size_t n = (size_t)((ptrdiff_t)d + off[k]);
                    if (dir[n] == 7 - k && (node[n] & TB_NODE_SOLVED))
                        todo[top++] = (int32_t)n;
                }
            }
        }
    }
    stack->tree_start[ntrees] = (int32_t)count;
    stack->count = count;
    stack->ntrees = ntrees;
    return count;
}

/* Solves y - delta + f y^n = 0 for y in (0, delta] (y = h_i' - h_r'): Newton from y = delta, which
 * is monotone for n > 1; for n < 1 a step leaving the bracket falls back to bisection. */
static double s_newton(double delta, double f, double n, int64_t *iters)
{
    double lo = 0, hi = delta, y = delta;
    for (int it = 0; it < 100; it++) {
        double yn1 = pow(y, n - 1);
        double g = y - delta + f * yn1 * y;
        if (g > 0)
            hi = y;
        else
            lo = y;
        double step = g / (1 + n * f * yn1);
        double next = y - step;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        (*iters)++;
        if (fabs(next - y) <= 1e-12 * delta) {
            y = next;
            break;
        }
        y = next;
    }
    return y;
}

int64_t tb_spl_erode_braun_willett(const tb_topo_t *t, const uint8_t *node, const uint8_t *dir,
                                   const int32_t *order, size_t count, int step,
                                   const float *area_m2, const float *k, const tb_spl_params_t *p,
                                   float *h)
{
    double len_n[8];
    for (int d = 0; d < 8; d++)
        len_n[d] = p->n == 1 ? t->len_m[d] : pow(t->len_m[d], p->n);
    bool m_half = p->m == 0.5, n_one = p->n == 1;
    int64_t iters = 0;
    for (size_t s = 0; s < count; s++) {
        size_t c = (size_t)order[step > 0 ? s : count - 1 - s];
        uint8_t d = dir[c];
        size_t r = tb_topo_nb(t, node[c], c, d);
        double hc = h[c], hr = h[r];
        if (!(hc > hr))
            continue;
        double a = area_m2[c];
        double am = m_half ? sqrt(a) : pow(a, p->m);
        double f = (double)k[c] * p->dt_yr * am / len_n[d];
        double y;
        if (n_one)
            y = (hc - hr) / (1 + f);
        else
            y = s_newton(hc - hr, f, p->n, &iters);
        /* The exact solution stays above the receiver; rounding must not put it level, or a
         * filled flat would come back as a pit next step. */
        float hn = (float)(hr + y), floor_ = tb_next_up((float)hr);
        h[c] = hn > floor_ ? hn : floor_;
    }
    return iters;
}
