/* `terrain analyze HEIGHTMAP --cell-m X [--sea-level Y] [--raw-float32 WxH] [--elevation-m LO,HI]
 * [--mfd-exponent E] [--fit-min-area-m2 A] [--channel-min-area-m2 A] [--border open|sea]
 * [--out DIR] [--no-meta]`: the verdict block of any heightmap (coordinator/gate/analyze.h).
 * Exit status 0, or 2 for bad usage or input. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "coordinator/gate/analyze.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"

/* "3600x1800" into two positive integers. */
static int s_size(const char *text, int64_t *w, int64_t *h)
{
    char *end;
    errno = 0;
    long long a = strtoll(text, &end, 10);
    if (errno || end == text || (*end != 'x' && *end != 'X'))
        return -1;
    const char *b = end + 1;
    long long c = strtoll(b, &end, 10);
    if (errno || end == b || *end || a <= 0 || c <= 0)
        return -1;
    *w = a;
    *h = c;
    return 0;
}

/* "-1024,1024" into two finite numbers. */
static int s_range(const char *text, double *lo, double *hi)
{
    char *end;
    errno = 0;
    double a = strtod(text, &end);
    if (errno || end == text || *end != ',')
        return -1;
    const char *b = end + 1;
    double c = strtod(b, &end);
    if (errno || end == b || *end || !isfinite(a) || !isfinite(c))
        return -1;
    *lo = a;
    *hi = c;
    return 0;
}

int tb_cmd_analyze(int argc, char **argv)
{
    tb_analyze_opts_t o = {0};
    const char *raw = NULL, *range = NULL, *border = NULL;
    bool cell_given = false;
    const tb_opt_t opts[] = {
        {"cell-m", TB_OPT_DOUBLE, &o.cell_m, &cell_given, "X",
         "metres per cell (required unless a bake's meta.json lies beside the map)"},
        {"sea-level", TB_OPT_DOUBLE, &o.sea_level_m, &o.has_sea_level, "Y",
         "heights at or below Y metres are sea (0)"},
        {"raw-float32", TB_OPT_STRING, &raw, NULL, "WxH",
         "the file is raw float32 little-endian, W x H, row 0 first (not a PNG)"},
        {"elevation-m", TB_OPT_STRING, &range, NULL, "LO,HI",
         "the heights of PNG samples 0 and 65535 (default: the meta.json beside it)"},
        {"mfd-exponent", TB_OPT_DOUBLE, &o.mfd_exponent, &o.has_mfd_exponent, "E",
         "flow routing: MFD exponent, 0 for D8 (default: meta.json's, else 1)",
         TB_OPT_DRANGE(0, 100), .range_text = "0 (D8) .. 100"},
        {"fit-min-area-m2", TB_OPT_DOUBLE, &o.fit_min_area_m2, &o.has_fit_min_area, "A",
         "the slope-area fit starts at this drainage area (default 1e4; 1e6 for a coarse DEM)"},
        {"channel-min-area-m2", TB_OPT_DOUBLE, &o.channel_min_area_m2, &o.has_channel_min_area, "A",
         "the channel-cell slope-area fit starts at 4x the hillslope-channel turn found in the "
         "data, never below this drainage area (default 1e3)"},
        {"border", TB_OPT_STRING, &border, NULL, "open|sea",
         "the map's edge: open (default; flow leaves at the edge's own height) or sea (held at "
         "0 m, a cliff: a bake's own region)"},
        {"out", TB_OPT_STRING, &o.out_dir, NULL, "DIR", "write summary.txt and analyze.json here"},
        {"no-meta", TB_OPT_FLAG, &o.ignore_meta, NULL, NULL, "ignore a meta.json beside the map"},
    };
    tb_verb_t v = {.name = "analyze",
                   .usage = "terrain analyze HEIGHTMAP --cell-m X [--sea-level Y] [--raw-float32 "
                            "WxH] [--elevation-m LO,HI] [--mfd-exponent E] [--out DIR]",
                   TB_VERB_OPTS(opts),
                   .min_positional = 1,
                   .max_positional = 1,
                   .positional_what = "HEIGHTMAP: give one heightmap (a 16-bit PNG or, with "
                                      "--raw-float32, raw float32)"};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    o.path = v.positional[0];
    if (cell_given && !(o.cell_m > 0 && isfinite(o.cell_m)))
        return tb_verb_usage(&v, "--cell-m %g: expected a positive number of metres", o.cell_m);
    if (raw && s_size(raw, &o.raw_w, &o.raw_h) != 0)
        return tb_verb_usage(&v, "--raw-float32 \"%s\": expected WxH, e.g. 3601x3601", raw);
    if (range) {
        if (s_range(range, &o.elevation_lo_m, &o.elevation_hi_m) != 0 ||
            !(o.elevation_lo_m < o.elevation_hi_m))
            return tb_verb_usage(&v,
                                 "--elevation-m \"%s\": expected LO,HI with LO < HI, e.g. "
                                 "-1024,1024",
                                 range);
        o.has_elevation = true;
    }
    if (border && strcmp(border, "open") != 0 && strcmp(border, "sea") != 0)
        return tb_verb_usage(&v, "--border \"%s\": expected open or sea", border);
    o.border_sea = border && strcmp(border, "sea") == 0;
    if (o.has_channel_min_area && !(o.channel_min_area_m2 > 0 && isfinite(o.channel_min_area_m2)))
        return tb_verb_usage(&v, "--channel-min-area-m2 %g: expected a positive area",
                             o.channel_min_area_m2);
    if (o.has_fit_min_area && !(o.fit_min_area_m2 > 0 && isfinite(o.fit_min_area_m2)))
        return tb_verb_usage(&v, "--fit-min-area-m2 %g: expected a positive area",
                             o.fit_min_area_m2);
    tb_analyze_result_t r;
    if (tb_analyze_run(&o, &r, &err) != 0) {
        tb_analyze_result_free(&r);
        return tb_verb_error(&v,
                             err.code == TB_E_NOMEM || err.code == TB_E_INTERNAL ? TB_EXIT_FAILED
                                                                                 : TB_EXIT_USAGE,
                             &err);
    }
    fputs(r.text, stdout);
    if (o.out_dir)
        printf("analyze: wrote %s/summary.txt and analyze.json\n", o.out_dir);
    tb_analyze_result_free(&r);
    return TB_EXIT_OK;
}
