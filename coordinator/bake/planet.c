/* The planet's arrays; see planet.h. */
#include "coordinator/bake/planet.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/fs.h"

typedef struct {
    const char *name;
    const char *ext; /* the file's type suffix: u8, i32, f32, u16 */
    size_t elem_bytes;
    unsigned char fill;
} s_array_decl_t;

static const s_array_decl_t s_arrays[TB_PLANET_N_ARRAYS] = {
#define TB_PLANET_X_DECL(id, name, type, ext, fill, what)                                          \
    [TB_PLANET_##id] = {#name, #ext, sizeof(type), fill},
    TB_PLANET_ARRAYS(TB_PLANET_X_DECL)
#undef TB_PLANET_X_DECL
};

typedef struct {
    void *data;
    size_t bytes;
    bool mapped; /* a mapping of its file (else a heap block) */
    bool alias;  /* another array's cells (tb_planet_alias): freed with that one */
} s_array_t;

struct tb_planet_t {
    int64_t w, h;
    char dir[4096]; /* "" for a planet on the heap */
    s_array_t arrays[TB_PLANET_N_ARRAYS];
};

tb_planet_t *tb_planet_new(int64_t w, int64_t h, const char *dir, tb_err_t *err)
{
    if (w <= 0 || h <= 0 || (uint64_t)w > ((uint64_t)1 << 40) / (uint64_t)h) {
        tb_err_set(err, TB_E_INVALID, "a planet of %lld x %lld cells", (long long)w, (long long)h);
        return NULL;
    }
    tb_planet_t *self = tb_calloc(1, sizeof *self, "planet", err);
    if (!self)
        return NULL;
    self->w = w;
    self->h = h;
    if (dir) {
        struct stat st;
        if (snprintf(self->dir, sizeof self->dir, "%s", dir) >= (int)sizeof self->dir) {
            tb_err_set(err, TB_E_INVALID, "%s: the planet's directory path is too long", dir);
            goto fail;
        }
        if (tb_fs_mkdir_p(dir, err) != 0)
            goto fail;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            tb_err_set(err, TB_E_INVALID,
                       "%s: the planet's arrays need a directory of their own here, and this is "
                       "%s",
                       dir, lstat(dir, &st) != 0 ? "missing" : tb_fs_kind_name(st.st_mode));
            goto fail;
        }
    }
    return self;
fail:
    free(self);
    return NULL;
}

static void s_unmap(s_array_t *a)
{
    if (!a->data)
        return;
    if (a->mapped)
        munmap(a->data, a->bytes ? a->bytes : 1); /* an alias has a mapping of its own */
    else if (!a->alias)
        free(a->data);
    *a = (s_array_t){0};
}

void tb_planet_destroy(tb_planet_t **self)
{
    if (!self || !*self)
        return;
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        s_unmap(&(*self)->arrays[i]);
    free(*self);
    *self = NULL;
}

void tb_planet_discard(tb_planet_t **self)
{
    if (!self || !*self)
        return;
    tb_planet_t *p = *self;
    char path[4200];
    tb_err_t ignored;
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        if (p->arrays[i].data && p->dir[0] &&
            tb_planet_path(p, (tb_planet_array_t)i, path, sizeof path, &ignored) == 0)
            unlink(path);
    char dir[sizeof p->dir];
    memcpy(dir, p->dir, sizeof dir);
    tb_planet_destroy(self);
    if (dir[0])
        rmdir(dir); /* only when nothing else is left in it */
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

int tb_planet_path(const tb_planet_t *self, tb_planet_array_t id, char *out, size_t n,
                   tb_err_t *err)
{
    const s_array_decl_t *d = &s_arrays[id];
    if (!self->dir[0])
        return tb_err_set(err, TB_E_INTERNAL, "planet %s: the planet has no directory", d->name);
    if ((size_t)snprintf(out, n, "%s/%s.%s", self->dir, d->name, d->ext) >= n)
        return tb_err_set(err, TB_E_INVALID, "%s: path too long", self->dir);
    return 0;
}

/* Fills rows [0, h) of a fresh array with its fill byte a band at a time, letting each band go
 * (a fill of 0 is the new file's own zeros: nothing to write). */
static void s_fill(tb_planet_t *self, tb_planet_array_t id)
{
    const s_array_decl_t *d = &s_arrays[id];
    s_array_t *a = &self->arrays[id];
    if (d->fill == 0) {
        if (!a->mapped)
            memset(a->data, 0, a->bytes);
        return;
    }
    size_t row = (size_t)self->w * d->elem_bytes;
    int64_t band = (int64_t)(((size_t)16 << 20) / row) + 1;
    for (int64_t y = 0; y < self->h; y += band) {
        int64_t y1 = y + band < self->h ? y + band : self->h;
        memset((char *)a->data + (size_t)y * row, d->fill, (size_t)(y1 - y) * row);
        tb_planet_release(self, id, y, y1);
    }
}

/* Maps dir/NAME.EXT, a new file of the array's size (an old one of the name removed first). */
static int s_map_new(tb_planet_t *self, tb_planet_array_t id, tb_err_t *err)
{
    const s_array_decl_t *d = &s_arrays[id];
    s_array_t *a = &self->arrays[id];
    char path[4200];
    if (tb_planet_path(self, id, path, sizeof path, err) != 0)
        return -1;
    /* a new file, never the old one: an old array may be a second name of another (an alias), and
     * writing through it would change that one too */
    struct stat old;
    if (lstat(path, &old) == 0 && !S_ISREG(old.st_mode))
        return tb_err_set(err, TB_E_INVALID,
                          "%s: the planet's %s goes here, and this is %s, not a regular file: "
                          "nothing is written through it (remove it)",
                          path, d->name,
                          S_ISLNK(old.st_mode) ? "a symbolic link" : tb_fs_kind_name(old.st_mode));
    if (unlink(path) != 0 && errno != ENOENT)
        return tb_err_set(err, TB_E_IO, "%s: cannot replace the planet's %s: %s", path, d->name,
                          strerror(errno));
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot create the planet's %s: %s", path, d->name,
                          errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    struct stat st;
    size_t bytes = tb_planet_cells(self) * d->elem_bytes;
    int rc = -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tb_err_set(err, TB_E_INVALID, "%s: the planet's %s must be a regular file", path, d->name);
        goto done;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        tb_err_set(err, TB_E_IO, "%s: cannot size the planet's %s to %zu bytes: %s", path, d->name,
                   bytes, strerror(errno));
        goto done;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        tb_err_set(err, TB_E_NOMEM, "%s: cannot map the planet's %s (%zu bytes): %s", path, d->name,
                   bytes, strerror(errno));
        goto done;
    }
    *a = (s_array_t){.data = p, .bytes = bytes, .mapped = true};
    rc = 0;
done:
    close(fd);
    return rc;
}

int tb_planet_provide(tb_planet_t *self, uint32_t mask, tb_err_t *err)
{
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++) {
        if (!(mask & (1u << i)) || self->arrays[i].data)
            continue;
        const s_array_decl_t *d = &s_arrays[i];
        s_array_t *a = &self->arrays[i];
        if (self->dir[0]) {
            if (s_map_new(self, (tb_planet_array_t)i, err) != 0)
                return -1;
        } else {
            char what[64];
            snprintf(what, sizeof what, "planet %s", d->name);
            a->bytes = tb_planet_cells(self) * d->elem_bytes;
            a->data = tb_malloc(a->bytes, what, err);
            if (!a->data)
                return -1;
        }
        s_fill(self, (tb_planet_array_t)i);
    }
    return 0;
}

int tb_planet_alias(tb_planet_t *self, tb_planet_array_t id, tb_planet_array_t of, tb_err_t *err)
{
    s_array_t *a = &self->arrays[id], *o = &self->arrays[of];
    if (!o->data || id == of || s_arrays[id].elem_bytes != s_arrays[of].elem_bytes)
        return tb_err_set(err, TB_E_INTERNAL, "planet %s as %s: not made, or another type",
                          s_arrays[id].name, s_arrays[of].name);
    s_unmap(a); /* what it held before (a fresh fill) goes */
    if (!o->mapped) {
        *a = (s_array_t){.data = o->data, .bytes = o->bytes, .alias = true};
        return 0;
    }
    char from[4200], to[4200];
    if (tb_planet_path(self, of, from, sizeof from, err) != 0 ||
        tb_planet_path(self, id, to, sizeof to, err) != 0)
        return -1;
    if ((unlink(to) != 0 && errno != ENOENT) || link(from, to) != 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot make it a second name of %s: %s", to, from,
                          strerror(errno));
    /* the same file, mapped once more: both mappings see the same pages */
    int fd = open(to, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return tb_err_set(err, TB_E_IO, "%s: %s", to, strerror(errno));
    void *p = mmap(NULL, o->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return tb_err_set(err, TB_E_NOMEM, "%s: cannot map it: %s", to, strerror(errno));
    *a = (s_array_t){.data = p, .bytes = o->bytes, .mapped = true, .alias = true};
    return 0;
}

uint32_t tb_planet_present(const tb_planet_t *self, uint32_t mask)
{
    uint32_t have = 0;
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        if ((mask & (1u << i)) && self->arrays[i].data)
            have |= 1u << i;
    return have;
}

void tb_planet_release(tb_planet_t *self, tb_planet_array_t id, int64_t y0, int64_t y1)
{
    s_array_t *a = &self->arrays[id];
    if (!a->mapped || y0 >= y1)
        return;
    if (y0 < 0)
        y0 = 0;
    if (y1 > self->h)
        y1 = self->h;
    size_t row = (size_t)self->w * s_arrays[id].elem_bytes;
    /* a page shared with a row outside them comes back from the file when it is read again, so
     * dropping it loses nothing */
    tb_fs_map_release(a->data, a->bytes, (size_t)y0 * row, (size_t)y1 * row);
}

void tb_planet_release_all(tb_planet_t *self, uint32_t mask)
{
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        if (mask & (1u << i))
            tb_planet_release(self, (tb_planet_array_t)i, 0, self->h);
}

static void s_raster_release(void *user, int64_t y0, int64_t y1)
{
    tb_planet_raster_user_t *u = user;
    tb_planet_release(u->planet, u->id, y0, y1);
}

tb_raster_t tb_planet_raster(tb_planet_t *self, tb_planet_array_t id, tb_planet_raster_user_t *user)
{
    user->planet = self;
    user->id = id;
    return (tb_raster_t){.data = self->arrays[id].data,
                         .w = self->w,
                         .h = self->h,
                         .elem_bytes = s_arrays[id].elem_bytes,
                         .release = s_raster_release,
                         .user = user};
}

static void s_hook_release(void *user, int64_t y0, int64_t y1)
{
    tb_planet_t *self = user;
    for (int i = 0; i < TB_PLANET_N_ARRAYS; i++)
        tb_planet_release(self, (tb_planet_array_t)i, y0, y1);
}

tb_rows_hook_t tb_planet_rows_hook(tb_planet_t *self)
{
    return (tb_rows_hook_t){.fn = s_hook_release, .user = self};
}

uint64_t tb_planet_hash(tb_planet_t *self, tb_planet_array_t id)
{
    s_array_t *a = &self->arrays[id];
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return 0;
    XXH3_64bits_reset(st);
    size_t row = (size_t)self->w * s_arrays[id].elem_bytes;
    int64_t band = (int64_t)(((size_t)16 << 20) / row) + 1;
    for (int64_t y = 0; y < self->h && a->data; y += band) {
        int64_t y1 = y + band < self->h ? y + band : self->h;
        XXH3_64bits_update(st, (const char *)a->data + (size_t)y * row, (size_t)(y1 - y) * row);
        tb_planet_release(self, id, y, y1);
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

const char *tb_planet_array_name(tb_planet_array_t id)
{
    return id >= 0 && id < TB_PLANET_N_ARRAYS ? s_arrays[id].name : "?";
}

#define TB_PLANET_X_GET(id, name, type, ext, fill, what)                                           \
    type *tb_planet_##name(tb_planet_t *self)                                                      \
    {                                                                                              \
        return self->arrays[TB_PLANET_##id].data;                                                  \
    }                                                                                              \
    const type *tb_planet_c##name(const tb_planet_t *self)                                         \
    {                                                                                              \
        return self->arrays[TB_PLANET_##id].data;                                                  \
    }
TB_PLANET_ARRAYS(TB_PLANET_X_GET)
#undef TB_PLANET_X_GET
