/* The manifest's sections, internal to common/manifest.c and common/manifest/ (docs/manifest.md).
 *
 * A section is one file common/manifest/NAME.c exporting one const tb_manifest_section_t: the JSON
 * objects it owns ("solve"), its keys (each with its type, range, default and one line of
 * documentation, which `terrain schema` and docs/manifest.md print), and an optional check run by
 * tb_manifest_finish (cross-key checks with the numbers, derived values). The sections are listed
 * once, in order, in common/manifest/sections.c; the order is the order of keys in every manifest
 * JSON the program writes (plan.json, the region job's spec), so a new section goes at the end.
 *
 * A new section: its parameters struct and field in tb_manifest_t (common/manifest.h), the file
 * common/manifest/NAME.c, one line in sections.c, and its rows in docs/manifest.md.
 */
#ifndef TB_MANIFEST_SECTION_H
#define TB_MANIFEST_SECTION_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "common/manifest.h"

typedef enum {
    TB_MKEY_INT,    /* int */
    TB_MKEY_DOUBLE, /* double */
    TB_MKEY_SEED,   /* uint64_t, an integer 0..2^53 */
    TB_MKEY_PATH,   /* char[TB_PATH_MAX], resolved against the manifest's folder */
    TB_MKEY_RANGE   /* two doubles [low, high], low < high */
} tb_mkey_kind_t;

typedef struct {
    const char *path; /* dotted key path */
    tb_mkey_kind_t kind;
    size_t off, off2; /* field offsets in tb_manifest_t; off2 is the upper value of a range */
    double lo, hi;    /* allowed range, inclusive */
    double def, def2; /* defaults */
    const char *doc;
} tb_mkey_t;

#define TB_MKEY_OFF(f) offsetof(tb_manifest_t, f)
#define TB_MKEY_SEED_MAX                                                                           \
    9007199254740992.0 /* 2^53: a JSON number holds integers exactly up to here */

typedef struct {
    const char *name;
    const char *const *objects; /* the JSON objects of its keys, NULL-terminated */
    const tb_mkey_t *keys;
    size_t n_keys;
    /* Optional: cross-key checks (TB_E_INVALID naming the keys and numbers) and derived values;
     * run by tb_manifest_finish in section order. */
    int (*check)(tb_manifest_t *m, tb_err_t *err);
} tb_manifest_section_t;

#define TB_MSECTION_KEYS(table) .keys = (table), .n_keys = sizeof(table) / sizeof((table)[0])

extern const tb_manifest_section_t *const tb_manifest_sections[];
extern const size_t tb_manifest_n_sections;

extern const tb_manifest_section_t tb_manifest_section_planet;
extern const tb_manifest_section_t tb_manifest_section_regions;
extern const tb_manifest_section_t tb_manifest_section_solve;
extern const tb_manifest_section_t tb_manifest_section_massif;
extern const tb_manifest_section_t tb_manifest_section_rock;
extern const tb_manifest_section_t tb_manifest_section_faults;
extern const tb_manifest_section_t tb_manifest_section_tiles;
extern const tb_manifest_section_t tb_manifest_section_coast;

/* The walker's helpers the legend shares (common/manifest.c). */
/* TB_E_INVALID "NAME: PATH: expected EXPECTED, got VALUE"; returns -1. */
int tb_manifest_bad(tb_err_t *err, const char *name, const char *path, const char *expected,
                    const cJSON *got);
bool tb_manifest_is_integer(double v);
/* Parses a JSON object (TB_E_FORMAT naming the line otherwise) into *out. */
int tb_manifest_parse_json(const char *json, const char *name, cJSON **out, tb_err_t *err);

/* A colour as a legend gives it: "#rrggbb" (or "rrggbb") or [r, g, b] with 0..255. 0, or -1 when
 * it is neither (the caller names the key). */
int tb_colour_parse(const cJSON *c, uint8_t rgb[3]);

/* The key whose dotted path is `path` ("solve.k"), or NULL. */
const tb_mkey_t *tb_manifest_find_key(const char *path);
/* Checks `item` against key k's type and range and stores it in *m; a path is resolved against
 * base_dir unless absolute. 0, or -1 with *err "NAME: PATH: expected ..., got VALUE". */
int tb_manifest_set_key(const tb_mkey_t *k, const cJSON *item, const char *name,
                        const char *base_dir, tb_manifest_t *m, tb_err_t *err);

/* The ranges of a legend's numbers, shared by the legend's parser (legend.c) and the overrides of
 * its keys (override.c). */
#define TB_LEGEND_TOLERANCE_MAX 255.0
#define TB_LEGEND_UPLIFT_MAX_MM_YR 100.0
#define TB_LEGEND_K_MULT_MIN 1e-3
#define TB_LEGEND_K_MULT_MAX 1e3
#define TB_LEGEND_DEPTH_MAX_M 11000.0

/* Whether x is within a relative 1e-9 of a whole number; *whole gets the nearest one. */
bool tb_manifest_whole(double x, double *whole);

#endif
