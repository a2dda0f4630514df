/* Fault traces: seeded on a world lattice, walked along a grain field, rasterised with a C1
 * envelope (docs/uplift.md, "Faults"; docs/traps.md). Used by uplift.c and by the
 * tests; the public entry points are tb_uplift_fault_rate and tb_uplift_fault_traces in uplift.h.
 *
 * A seed's existence and its whole trace are a function of (seed, seed-lattice cell, index): the
 * lattice has a spacing that divides the circumference, and a cell holds floor(p) or floor(p) + 1
 * seeds with p = faults.per_1000_km2 x its area. A region finds every trace that can reach it by
 * scanning the lattice cells within length_max + width of its box, wrap-aware, and sums them in the
 * canonical order (cell y, cell x, index, segment), so every cell gets the same bits in every box.
 */
#ifndef TB_FAULTS_H
#define TB_FAULTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/grid.h"
#include "common/manifest.h"

/* Requested seed-lattice spacing, metres (snapped to divide the circumference). */
#define TB_FAULT_LATTICE_M 4000.0
/* Traces longer than this break into en-echelon segments, metres. */
#define TB_FAULT_SEGMENT_MAX_M 12000.0
/* En-echelon overlap at each end, as a share of the segment spacing. */
#define TB_FAULT_OVERLAP 0.1
/* Knot spacing (metres) and amplitude (radians) of the heading perturbation along a trace. */
#define TB_FAULT_PERTURB_M 2000.0
#define TB_FAULT_PERTURB_RAD 0.3

typedef struct {
    int64_t cell_x, cell_y; /* seed-lattice cell (x wrapped to 0..cells around - 1) */
    int index;              /* seed within that cell */
    int segment, segments;  /* en-echelon segment of its trace, and how many the trace has */
    double length_m;        /* this segment's length; its tips are s = 0 and s = length_m */
    double trace_length_m;  /* the whole trace's length */
    double peak_m_yr;       /* throw rate on the trace between the tapers */
    double half_width_m;    /* the envelope reaches zero, with zero gradient, at this distance */
    size_t n;               /* vertices */
    double *x, *y, *s;      /* world metres (x unwrapped; the seed's x is in [0, C)); arc length */
    double xmin, xmax, ymin, ymax; /* bounding box of the vertices */
} tb_fault_t;

/* Across-fault envelope (1 - (d/w)^2)^2 for d < w, else 0: 1 with zero slope on the trace, 0 with
 * zero slope at w. */
double tb_fault_envelope(double d_m, double half_width_m);

/* Along-strike taper: smoothstep of min(s, L - s) / (L / 6); 0 with zero slope at each tip, 1 over
 * the middle two thirds. */
double tb_fault_taper(double s_m, double length_m);

/* Seed-lattice spacing in metres and cells around the circumference. */
double tb_faults_lattice_m(const tb_manifest_t *m, int64_t *cells_around);

/* Every segment of every trace seeded in lattice cell (cell_x mod cells around, cell_y), in
 * canonical order, appended to *faults / *n (realloc'd; start with NULL / 0). */
int tb_faults_seed_cell(const tb_manifest_t *m, int64_t cell_x, int64_t cell_y, tb_fault_t **faults,
                        size_t *n, tb_err_t *err);

/* Every segment whose envelope may touch the box (a superset), in canonical order. */
int tb_faults_collect(const tb_manifest_t *m, const tb_frame_t *box, tb_fault_t **faults, size_t *n,
                      tb_err_t *err);

/* Adds peak x taper(s) x envelope(d) of each fault to out (box-sized, m/yr), in the given order,
 * for every box cell (by its lattice position, every image across the seam). */
int tb_faults_rasterise(const tb_fault_t *faults, size_t n, const tb_frame_t *box, float *out,
                        tb_err_t *err);

/* Frees n faults and the array; sets *faults_p to NULL; accepts NULL. */
void tb_faults_free(tb_fault_t **faults_p, size_t n);

#endif
