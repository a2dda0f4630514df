/* tb_export_f32z_raw IN.f32z OUT.f32: a tile's float heights file (jobs/detail/tile_files.h) as
 * raw float32 little-endian, row 0 first, then "W H" on stdout. For tests/test_export.sh, which
 * checks exported heights against the bake's own floats. Exit 1 on any error, naming the file. */
#include <stdio.h>
#include <stdlib.h>

#include "common/fs.h"
#include "jobs/detail/tile_files.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tb_export_f32z_raw IN.f32z OUT.f32\n");
        return 2;
    }
    tb_err_t err;
    char *data;
    size_t n;
    int64_t w, h;
    if (tb_fs_read_all(argv[1], (size_t)1 << 32, &data, &n, &err) != 0 ||
        tb_tile_f32z_peek(data, n, argv[1], &w, &h, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    float *v = malloc(sizeof *v * (size_t)(w * h));
    if (!v || tb_tile_f32z_decode(data, n, argv[1], w, h, v, &err) != 0 ||
        tb_fs_write_atomic(argv[2], v, sizeof *v * (size_t)(w * h), &err) != 0) {
        fprintf(stderr, "%s\n", v ? err.msg : "out of memory");
        return 1;
    }
    printf("%lld %lld\n", (long long)w, (long long)h);
    free(v);
    free(data);
    return 0;
}
