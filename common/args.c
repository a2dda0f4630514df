/* Strict option parsing; see args.h. */
#include "common/args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int s_set(const tb_opt_t *o, const char *value, tb_err_t *err)
{
    char *end = NULL;
    errno = 0;
    switch (o->kind) {
    case TB_OPT_FLAG:
        *(bool *)o->out = true;
        break;
    case TB_OPT_INT: {
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end)
            return tb_err_set(err, TB_E_INVALID, "--%s: expected an integer, got \"%s\"", o->name,
                              value);
        if (o->ranged && (v < o->imin || v > o->imax)) {
            if (o->range_text)
                return tb_err_set(err, TB_E_INVALID, "--%s %lld: expected an integer in %s",
                                  o->name, v, o->range_text);
            return tb_err_set(err, TB_E_INVALID, "--%s %lld: expected an integer in %lld..%lld",
                              o->name, v, (long long)o->imin, (long long)o->imax);
        }
        *(int64_t *)o->out = v;
        break;
    }
    case TB_OPT_DOUBLE: {
        double v = strtod(value, &end);
        if (errno || end == value || *end || !isfinite(v))
            return tb_err_set(err, TB_E_INVALID, "--%s: expected a number, got \"%s\"", o->name,
                              value);
        if (o->ranged && !(v >= o->dmin && v <= o->dmax)) {
            if (o->range_text)
                return tb_err_set(err, TB_E_INVALID, "--%s %g: expected a number in %s", o->name, v,
                                  o->range_text);
            return tb_err_set(err, TB_E_INVALID, "--%s %g: expected a number in %g..%g", o->name, v,
                              o->dmin, o->dmax);
        }
        *(double *)o->out = v;
        break;
    }
    case TB_OPT_STRING:
        *(const char **)o->out = value;
        break;
    case TB_OPT_EACH:
        if (o->each(o->out, value, err) != 0)
            return -1;
        break;
    }
    if (o->given)
        *o->given = true;
    return 0;
}

int tb_args_parse(int argc, char **argv, const tb_opt_t *opts, int n_opts, const char **positional,
                  int max_positional, int *n_positional, tb_err_t *err)
{
    *n_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (*n_positional >= max_positional)
                return tb_err_set(err, TB_E_INVALID, "unexpected argument \"%s\"", a);
            positional[(*n_positional)++] = a;
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const tb_opt_t *o = NULL;
        for (int k = 0; k < n_opts; k++)
            if (strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0)
                o = &opts[k];
        if (!o)
            return tb_err_set(err, TB_E_INVALID, "unknown option --%.*s (see --help)", (int)len,
                              name);
        const char *value = NULL;
        if (o->kind == TB_OPT_FLAG) {
            if (eq)
                return tb_err_set(err, TB_E_INVALID, "--%s takes no value", o->name);
        } else if (eq) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc)
                return tb_err_set(err, TB_E_INVALID, "--%s needs a value (%s)", o->name,
                                  o->meta ? o->meta : "value");
            value = argv[++i];
        }
        if (s_set(o, value, err) != 0)
            return -1;
    }
    return 0;
}

void tb_args_usage(FILE *out, const char *usage_line, const tb_opt_t *opts, int n_opts)
{
    fprintf(out, "usage: %s\n", usage_line);
    for (int k = 0; k < n_opts; k++) {
        char left[64];
        if (opts[k].kind == TB_OPT_FLAG)
            snprintf(left, sizeof left, "--%s", opts[k].name);
        else
            snprintf(left, sizeof left, "--%s %s", opts[k].name, opts[k].meta ? opts[k].meta : "V");
        fprintf(out, "  %-24s %s\n", left, opts[k].help);
    }
}

int tb_args_int_list(const char *text, const char *option, int64_t *out, int max, tb_err_t *err)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 0 || (*end && *end != ','))
            return tb_err_set(err, TB_E_INVALID,
                              "--%s: expected comma-separated non-negative integers, got \"%s\"",
                              option, text);
        if (n >= max)
            return tb_err_set(err, TB_E_INVALID, "--%s: more than %d items", option, max);
        out[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0)
        return tb_err_set(err, TB_E_INVALID, "--%s: empty list", option);
    return n;
}
