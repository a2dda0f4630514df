/* The planet's arrays; see planet.h. */
#include "coordinator/bake/planet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    size_t elem_bytes;
    unsigned char fill;
} s_array_decl_t;

static const s_array_decl_t s_arrays[TB_PLANET_N_ARRAYS] = {
#define TB_PLANET_X_DECL(id, name, type, fill, what) [TB_PLANET_##id] = {#name, sizeof(type), fill},
    TB_PLANET_ARRAYS(TB_PLANET_X_DECL)
#undef TB_PLANET_X_DECL
};

struct tb_planet_t {
    int64_t w, h;
    void *arrays[TB_PLANET_N_ARRAYS];
};

tb_planet_t *tb_planet_new(int64_t w, int64_t h, tb_err_t *err)
{
    if (w <= 0 || h <= 0) {
        tb_err_set(err, TB_E_INVALID, "a planet of %lld x %lld cells", (long long)w, (long long)h);
        return NULL;
    }
    tb_planet_t *self = tb_calloc(1, sizeof *self, "planet", err);
    if (!self)
        return NULL;
    self->w = w;
    self->h = h;
    return self;
}

void tb_planet_destroy(tb_planet_t **self)
{
    if (!self || !*self)
        return;
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        free((*self)->arrays[i]);
    free(*self);
    *self = NULL;
}

int64_t tb_planet_w(const tb_planet_t *self)
{
    return self->w;
}
int64_t tb_planet_h(const tb_planet_t *self)
{
    return self->h;
}
size_t tb_planet_cells(const tb_planet_t *self)
{
    return (size_t)self->w * (size_t)self->h;
}

int tb_planet_provide(tb_planet_t *self, uint32_t mask, tb_err_t *err)
{
    size_t cells = tb_planet_cells(self);
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++) {
        if (!(mask & (1u << i)) || self->arrays[i])
            continue;
        const s_array_decl_t *d = &s_arrays[i];
        char what[64];
        snprintf(what, sizeof what, "planet %s", d->name);
        self->arrays[i] = d->fill == 0 ? tb_calloc(cells, d->elem_bytes, what, err)
                                       : tb_malloc(cells * d->elem_bytes, what, err);
        if (!self->arrays[i])
            return -1;
        if (d->fill != 0)
            memset(self->arrays[i], d->fill, cells * d->elem_bytes);
    }
    return 0;
}

uint32_t tb_planet_present(const tb_planet_t *self, uint32_t mask)
{
    uint32_t have = 0;
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        if ((mask & (1u << i)) && self->arrays[i])
            have |= 1u << i;
    return have;
}

const char *tb_planet_array_name(tb_planet_array_t id)
{
    return id >= 0 && id < TB_PLANET_N_ARRAYS ? s_arrays[id].name : "?";
}

#define TB_PLANET_X_GET(id, name, type, fill, what)                                                \
    type *tb_planet_##name(tb_planet_t *self)                                                      \
    {                                                                                              \
        return self->arrays[TB_PLANET_##id];                                                       \
    }                                                                                              \
    const type *tb_planet_c##name(const tb_planet_t *self)                                         \
    {                                                                                              \
        return self->arrays[TB_PLANET_##id];                                                       \
    }
TB_PLANET_ARRAYS(TB_PLANET_X_GET)
#undef TB_PLANET_X_GET
