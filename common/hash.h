/* The world-position hash: every random number in the project (docs/determinism.md, rule 1).
 *
 * A value is XXH3-64 of the packed little-endian (lattice x, lattice y), seeded with a key that is
 * itself XXH3-64 of the packed (seed, salt, step). Callers pass lattice coordinates
 * (tb_frame_lattice_x), never window indices, so a cell draws the same number in every region, tile
 * and decomposition. There is no stateful generator anywhere.
 *
 * In a hot loop, derive a key once per (seed, salt, step) with tb_hash_key and hash each cell with
 * tb_hash_cell: the same bits as tb_hash, without re-deriving the key for every cell.
 */
#ifndef TB_HASH_H
#define TB_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Salts name what a number is for; a new use takes a new salt and never reuses one. List a new salt
 * in tb_hash_salt_is_known (hash.c) too: a duplicated value then fails to compile. */
enum {
    TB_SALT_DEMO_PAINTING = 1,
    TB_SALT_ROUTER_JITTER = 2,
    TB_SALT_CLAMP_ORDER = 3,
    TB_SALT_CLAMP_ALLOWANCE = 4,
    TB_SALT_MASSIF = 10,
    TB_SALT_ROCK = 11,
    TB_SALT_GRAIN = 12,
    TB_SALT_FAULT = 13,
    TB_SALT_FAULT_WALK = 14,
    TB_SALT_PROBE = 15,
    TB_SALT_FLOOD = 16,
    TB_SALT_GRAIN_Y = 40,    /* uplift: second component of the fault grain vector */
    TB_SALT_ROCK_TYPES = 41, /* uplift: which rock type each rank band holds */

    /* the built-in demo planet (jobs/plan/demo.c): TB_SALT_DEMO_PAINTING shapes its coastlines */
    TB_SALT_DEMO_CLASSES = 50, /* where the highland and the range lie inside the land */
    TB_SALT_DEMO_SHELF = 51,   /* how far the shallow shelf reaches from the coast */
    TB_SALT_DEMO_LAYOUT = 52,  /* per-seed jitter of the landmasses' places and sizes */
    TB_SALT_DEMO_BAYS = 53,    /* where bays cut into the coasts */

    /* the overlay's coast jitter (jobs/plan/overlay.c): the two components of the displacement */
    TB_SALT_OVERLAY_JITTER_X = 54,
    TB_SALT_OVERLAY_JITTER_Y = 55,

    TB_SALT_CHECKSUM_GRIND = 60, /* jobs/checksum_grind.c: the distribution layer's test job */
    TB_SALT_MAP_BASINS = 70, /* coordinator/maps/bake_maps.c: a basin's colour from its outlet */

    /* the detail tiles (jobs/detail, docs/tiles.md) */
    TB_SALT_TILE_SPAWN = 80,  /* a droplet's spawn cell, sub-cell offset and water */
    TB_SALT_TILE_JITTER = 81, /* a droplet's direction when the ground gives it none */
    TB_SALT_TILE_RELIEF = 82, /* the detail relief noise */
    TB_SALT_TILE_SHORE = 83,  /* the shoreline's wander at 2 m (jobs/detail/shore.c) */
    TB_SALT_TEST = 1000,
    TB_SALT_TEST_NOISE = 1001
};

/* The full hash of (seed, salt, x, y, step). */
uint64_t tb_hash(uint64_t seed, uint32_t salt, int64_t x, int64_t y, int64_t step);

/* A per-(seed, salt, step) key for tb_hash_cell. */
uint64_t tb_hash_key(uint64_t seed, uint32_t salt, int64_t step);

/* The hash of cell (x, y) under a key from tb_hash_key. */
uint64_t tb_hash_cell(uint64_t key, int64_t x, int64_t y);

/* The top 53 bits of a hash as a double in [0, 1). */
static inline double tb_hash_unit(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-53;
}

/* XXH3-64 of a byte buffer (checksums of blobs and outputs). */
uint64_t tb_xxh3(const void *data, size_t bytes);

/* A 64-bit hash as the 16 lower-case hex digits results echo it in (docs/distribution.md,
 * "Verifying results"), NUL-terminated. */
void tb_hash_hex(uint64_t h, char out[17]);
/* Parses exactly 16 hex digits (nothing before or after); returns 0, or -1 for anything else. */
int tb_hash_from_hex(const char *text, uint64_t *out);

#endif
