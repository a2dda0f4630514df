/* The planet manifest and its legend (JSON via cJSON).
 *
 * A manifest names the planet (seed, circumference, cell size), its painted template (an image and
 * a legend saying what each colour means) and every physical constant of the solve. Every key is
 * declared once, in its section's table (common/manifest/NAME.c, listed in sections.c), with its
 * type, range, default and one line of documentation; loading checks each key for type and range
 * and reports any key nothing reads by its dotted path, so a typo never silently falls back to a
 * default (docs/traps.md, "A manifest key with a default is not a feature"). docs/manifest.md is
 * the same table in prose; a test keeps them in step.
 *
 * Derived values (planet_w, the snapped massif wavelength) are filled by tb_manifest_finish, which
 * runs each section's check: it refuses a circumference that is not a whole number of cells or of
 * tiles, with the numbers.
 */
#ifndef TB_MANIFEST_H
#define TB_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include "common/coast_params.h"
#include "common/detail_keys.h"
#include "common/error.h"

#define TB_MAX_CLASSES 64
#define TB_CLASS_NONE 255 /* a class raster cell that matched no legend colour */
#define TB_NAME_MAX 64
#define TB_PATH_MAX 4096

typedef enum { TB_CLASS_LAND = 0, TB_CLASS_OCEAN = 1 } tb_class_kind_t;

typedef struct {
    char name[TB_NAME_MAX];
    uint8_t rgb[3]; /* the painted colour */
    tb_class_kind_t kind;
    /* land classes */
    double uplift_mm_yr; /* rock uplift rate on the massifs (and everywhere when fraction is 1) */
    double k_mult;       /* multiplies the planet's erodibility K */
    double massif_floor_mm_yr; /* rate off the massifs, on the plain between them */
    double massif_fraction;    /* share of the class's ground standing above the massif cut, 0..1 */
    /* ocean classes */
    double depth_m; /* depth of the sea floor below sea level, metres, positive */
} tb_class_t;

typedef struct {
    int n_classes;
    tb_class_t classes[TB_MAX_CLASSES];
    double tolerance; /* largest RGB distance at which a pixel still matches a colour */
    double
        max_unmatched_fraction; /* share of unmatched pixels above which the painting is refused */
} tb_legend_t;

typedef struct {
    int steps;                  /* number of solve steps */
    double dt_yr;               /* years per step */
    double k;                   /* stream-power erodibility K, 1/yr * m^(1-2m) */
    double m, n;                /* stream-power exponents on area and slope */
    double diffusion_m2_yr;     /* hillslope diffusivity D */
    double talus_deg;           /* angle of repose for the clamp and the critical slope */
    int max_hillslope_substeps; /* cap on explicit hillslope sub-steps per step */
    double mfd_exponent;        /* MFD partition exponent for drainage area; 0 means D8 */
} tb_solve_params_t;

typedef struct {
    double wavelength_km; /* requested massif fabric wavelength */
    double
        wavelength_snapped_km; /* derived: the nearest wavelength that divides the circumference */
} tb_massif_params_t;

typedef struct {
    double wavelength_km;          /* rock (lithology) field wavelength, snapped like the massifs */
    double wavelength_snapped_km;  /* derived */
    double k_min_mult, k_max_mult; /* erodibility multiplier of the hardest and softest rock */
    double softness;               /* rank-space width of the softened rock boundaries, 0..0.5 */
} tb_rock_params_t;

typedef struct {
    double per_1000_km2; /* fault traces per 1000 km2 of land */
    double length_min_km, length_max_km;
    double uplift_mm_yr;        /* peak rate added along a trace */
    double width_km;            /* across-fault half-width where the envelope reaches zero */
    double grain_wavelength_km; /* wavelength of the strike (grain) field */
    double grain_wavelength_snapped_km; /* derived */
} tb_fault_params_t;

typedef struct {
    double ocean_margin_km;  /* ocean kept round a region's land; landmasses closer share one */
    double min_landmass_km2; /* landmasses smaller than this are dropped (counted) */
} tb_region_params_t;

/* The margin measured by bench/bench_tile.c at the detail passes' defaults (docs/tiles.md, "The
 * margin"): tiles.margin_cells below the margin the passes require (tb_detail_required_margin:
 * this one at the defaults, the provable bound otherwise) is refused unless tiles.force_margin is
 * 1. */
#define TB_TILES_MEASURED_MARGIN_CELLS TB_DETAIL_MEASURED_MARGIN_CELLS
/* tiles.margin_cells -1, its default: tb_manifest_finish sets the margin the passes require. */
#define TB_TILES_MARGIN_AUTO (-1)

typedef struct {
    double size_km;   /* detail tile edge */
    double cell_m;    /* detail cell */
    int margin_cells; /* cells computed round a tile and thrown away; TB_TILES_MARGIN_AUTO until
                         tb_manifest_finish sets the required one */
    int force_margin; /* 1: accept a margin below the required one */
    /* every pass parameter, one field per key of common/detail_keys.h's TB_DETAIL_PASS_KEYS */
#define TB_TILE_X_FIELD(group, key, kind, field, lo, hi, def, margin, doc)                         \
    TB_DETAIL_KEY_TYPE_##kind field;
    TB_DETAIL_PASS_KEYS(TB_TILE_X_FIELD)
#undef TB_TILE_X_FIELD
    int64_t margin_required_cells; /* derived: tb_detail_required_margin of the passes */
} tb_tile_params_t;

typedef struct {
    char source[TB_PATH_MAX];   /* the manifest file, or "(demo planet, seed N)" */
    char base_dir[TB_PATH_MAX]; /* relative template paths resolve against this */
    bool is_demo;
    uint64_t seed;
    double circumference_km;
    double cell_m;
    char painting_path[TB_PATH_MAX]; /* resolved against base_dir; empty for the demo */
    char legend_path[TB_PATH_MAX];
    /* the overlay (jobs/plan/overlay.h, docs/plan.md "The overlay"): both or neither; empty when
     * the planet has none */
    char overlay_path[TB_PATH_MAX];
    char overlay_legend_path[TB_PATH_MAX];
    double elevation_min_m, elevation_max_m; /* the 16-bit encoding's range */
    tb_region_params_t regions;
    tb_solve_params_t solve;
    tb_massif_params_t massif;
    tb_rock_params_t rock;
    tb_fault_params_t faults;
    tb_tile_params_t tiles;
    tb_coast_params_t coast; /* the coastal pass (common/coast_params.h, docs/coast.md) */
    tb_legend_t legend;
    /* derived by tb_manifest_finish */
    int64_t planet_w;     /* cells around the circumference */
    int64_t tiles_around; /* detail tiles around the circumference */
} tb_manifest_t;

/* Fills *m with every default (no template, seed 7). */
void tb_manifest_defaults(tb_manifest_t *m);

/* Loads a manifest file and the legend it names, then tb_manifest_finish. Errors name the file and
 * the dotted key path ("solve.steps: expected an integer in 1..1000000, got 0"). */
int tb_manifest_load(const char *path, tb_manifest_t *m, tb_err_t *err);

/* Parses manifest JSON text (name is used in messages; base_dir resolves template paths). Does not
 * read the legend or finish. */
int tb_manifest_parse(const char *json, const char *name, const char *base_dir, tb_manifest_t *m,
                      tb_err_t *err);

/* Parses legend JSON text into *legend (name used in messages). Refuses duplicate colours or names,
 * land classes without uplift, ocean classes without depth. */
int tb_legend_parse(const char *json, const char *name, tb_legend_t *legend, tb_err_t *err);

/* Checks cross-key constraints and fills the derived values: the circumference must be a whole
 * number of cells and of tiles, each tile a whole number of geology and detail cells, noise
 * wavelengths are snapped to divisors of the circumference. */
int tb_manifest_finish(tb_manifest_t *m, tb_err_t *err);

/* Serialises the resolved manifest (with its legend and derived values) as JSON; the caller frees
 * the string. Used for meta.json and in job specs. */
char *tb_manifest_to_json(const tb_manifest_t *m);
/* Serialises a legend as the JSON a user edits. */
char *tb_legend_to_json(const tb_legend_t *legend);
/* Serialises the manifest as the file `terrain init` writes (template paths as given). */
char *tb_manifest_to_file_json(const tb_manifest_t *m, const char *painting_rel,
                               const char *legend_rel);

/* The detail passes' parameters of a finished manifest: its `tiles` section, every key (what a
 * bake's tiles phase hands tb_tile_spec_cut; docs/tiles.md). */
void tb_manifest_detail_params(const tb_manifest_t *m, tb_detail_params_t *p);

/* Writes the schema as a Markdown table (key, type, range, default, meaning) into a new string the
 * caller frees; docs/manifest.md embeds it and a test compares them. */
char *tb_manifest_schema_markdown(void);

/* ---- overrides: `--set KEY=VALUE` (common/manifest/override.c, docs/manifest.md "Overrides") ----
 */

/* The overrides of one command line, in the order given; each key at most once. */
typedef struct tb_overrides_t tb_overrides_t;
#define TB_OVERRIDES_MAX 64

/* A new empty set the caller destroys; NULL when out of memory. */
tb_overrides_t *tb_overrides_new(void);
/* Frees the set (NULL accepted) and sets *self_p to NULL. */
void tb_overrides_destroy(tb_overrides_t **self_p);

/* Adds one KEY=VALUE argument. KEY is a section key (`terrain schema`) or a legend key
 * (legend.tolerance, legend.max_unmatched_fraction, legend.classes.NAME.FIELD with FIELD one of
 * uplift_mm_yr, k_mult, massif.floor_mm_yr, massif.fraction, depth_m); VALUE is JSON, or for a
 * path key the text itself unless it starts with '"'. Refuses, with "--set ARG: ..." and
 * TB_E_INVALID or TB_E_UNKNOWN_KEY: no '=', an empty key, an unknown key (naming the nearest known
 * one), a key given twice, a value of the wrong type or out of the key's range (the file's words).
 * A legend class's existence and kind are checked when applied. 0 or -1. */
int tb_overrides_add(tb_overrides_t *self, const char *arg, tb_err_t *err);
/* tb_overrides_add for an option table's TB_OPT_EACH (out: the tb_overrides_t). */
int tb_overrides_add_opt(void *self, const char *arg, tb_err_t *err);
/* How many overrides the set holds (0 for NULL). */
int tb_overrides_count(const tb_overrides_t *self);
/* Whether the set overrides `key`. */
bool tb_overrides_has(const tb_overrides_t *self, const char *key);

/* Writes "--set A --set B" (every override, in order; truncated to n - 1 bytes) into out. */
void tb_overrides_describe(const tb_overrides_t *self, char *out, size_t n);
/* The argument ("KEY=VALUE") that overrides `key`, or NULL: for messages about what it named. */
const char *tb_overrides_arg(const tb_overrides_t *self, const char *key);

/* Applies the section keys' overrides to a parsed, not yet finished manifest; paths are taken
 * relative to the current directory. The demo planet (m->is_demo) refuses template keys. self may
 * be NULL. 0, or -1 with *err naming the option. */
int tb_overrides_apply_keys(const tb_overrides_t *self, tb_manifest_t *m, tb_err_t *err);
/* Applies the legend keys' overrides to a parsed legend and checks each class as the file's parser
 * does (the massif floor not above the rate). A class without a massif keeps none when its
 * uplift_mm_yr changes. 0, or -1 naming the option (an unknown class lists the legend's). */
int tb_overrides_apply_legend(const tb_overrides_t *self, tb_legend_t *legend, tb_err_t *err);
/* tb_manifest_finish, its error prefixed with every override ("with --set A --set B: ..."). */
int tb_overrides_finish(const tb_overrides_t *self, tb_manifest_t *m, tb_err_t *err);
/* The overrides as a JSON object {"solve.k": 6e-05, ...}, for meta.json; the caller frees it. An
 * empty or NULL set gives "{}". NULL when out of memory. */
char *tb_overrides_to_json(const tb_overrides_t *self);

/* tb_manifest_load with overrides (NULL: none): the file is parsed, the section keys overridden,
 * the legend read (from an overridden template.legend too) and overridden, then finished. */
int tb_manifest_load_overridden(const char *path, const tb_overrides_t *overrides, tb_manifest_t *m,
                                tb_err_t *err);

/* Index of the class whose name is `name`, or -1. */
int tb_legend_find(const tb_legend_t *legend, const char *name);

#endif
