/* tb_png_raw IN.png OUT.raw: the samples of a grey or RGBA PNG as raw bytes (16-bit: little-endian
 * u16, like a tile's .r16; 8-bit: one byte a sample; RGBA: four bytes R, G, B, A), row 0 first,
 * then "W H BITS" on stdout (BITS 16, 8, or 32 for RGBA). For the shell tests
 * (tests/test_stitch.sh), which compare decoded samples, not PNG bytes. Exit 1 on any error, naming
 * the file. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/fs.h"
#include "common/png_io.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tb_png_raw IN.png OUT.raw\n");
        return 2;
    }
    tb_err_t err;
    char *data;
    size_t n;
    if (tb_fs_read_all(argv[1], (size_t)1 << 30, &data, &n, &err) != 0) {
        fprintf(stderr, "tb_png_raw: %s\n", err.msg);
        return 1;
    }
    /* the file's own depth: byte 24 of a PNG is IHDR's bit depth */
    int bits = n > 24 ? (unsigned char)data[24] : 0;
    /* byte 25 its colour type: 6 is RGBA (the splat maps), read as four bytes a pixel */
    bool rgba = n > 25 && data[25] == 6 && bits == 8;
    tb_image_t img;
    int rc = tb_png_read_mem(data, n, argv[1],
                             rgba         ? TB_PNG_RGBA8
                             : bits == 16 ? TB_PNG_GRAY16
                                          : TB_PNG_GRAY8,
                             (uint64_t)1 << 28, &img, &err);
    free(data);
    if (rc != 0) {
        fprintf(stderr, "tb_png_raw: %s\n", err.msg);
        return 1;
    }
    size_t cells = (size_t)img.w * img.h, bytes = cells * (rgba ? 4 : bits == 16 ? 2 : 1);
    unsigned char *out = malloc(bytes ? bytes : 1);
    if (!out)
        return 1;
    for (size_t i = 0; i < cells; i++) {
        if (bits == 16) {
            uint16_t v = ((const uint16_t *)img.pixels)[i];
            out[2 * i] = (unsigned char)(v & 0xff);
            out[2 * i + 1] = (unsigned char)(v >> 8);
        } else if (rgba) {
            for (int c = 0; c < 4; c++)
                out[4 * i + (size_t)c] = ((const uint8_t *)img.pixels)[4 * i + (size_t)c];
        } else {
            out[i] = ((const uint8_t *)img.pixels)[i];
        }
    }
    uint32_t w = img.w, h = img.h;
    rc = tb_fs_write_atomic(argv[2], out, bytes, &err);
    free(out);
    tb_image_free(&img);
    if (rc != 0) {
        fprintf(stderr, "tb_png_raw: %s\n", err.msg);
        return 1;
    }
    printf("%u %u %d\n", w, h, rgba ? 32 : bits == 16 ? 16 : 8);
    return 0;
}
