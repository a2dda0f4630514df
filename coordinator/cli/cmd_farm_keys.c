/* `terrain farm-keys --out DIR`: CURVE certificates for a farm (docs/distribution.md). Writes
 *
 *   DIR/coordinator.cert (+ _secret)   for `terrain ... --bind ... --curve-cert
 * DIR/coordinator.cert` DIR/worker.cert (+ _secret)        for `terrain-worker --server-key
 * DIR/coordinator.cert
 *                                                          --cert DIR/worker.cert`
 *   DIR/workers/worker.cert            public only: `--curve-clients DIR/workers`
 *
 * Secret files are mode 0600. Refuses to overwrite existing certificates.
 */
#include <czmq.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common/args.h"
#include "common/fs.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"

static int s_save(zcert_t *cert, const char *dir, const char *name, bool with_secret, tb_err_t *err)
{
    char path[4200], secret[4300];
    if (tb_fs_join(path, sizeof path, dir, name, err) != 0)
        return -1;
    if (tb_fs_exists(path))
        return tb_err_set(err, TB_E_INVALID, "%s exists; remove it first", path);
    int r = with_secret ? zcert_save(cert, path) : zcert_save_public(cert, path);
    if (r != 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot write the certificate", path);
    snprintf(secret, sizeof secret, "%s_secret", path);
    if (with_secret && chmod(secret, 0600) != 0)
        return tb_err_set(err, TB_E_IO, "%s: cannot make it private", secret);
    return 0;
}

int tb_cmd_farm_keys(int argc, char **argv)
{
    const char *out = NULL;
    const tb_opt_t opts[] = {
        {"out", TB_OPT_STRING, &out, NULL, "DIR", "where to write the certificates (required)"},
    };
    tb_verb_t v = {.name = "farm-keys", .usage = "terrain farm-keys --out DIR", TB_VERB_OPTS(opts)};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    if (!out)
        return tb_verb_usage(&v, "--out DIR is required (usage: %s)", v.usage);
    tb_err_t err;
    char workers[4200];
    zsys_handler_set(NULL);
    zcert_t *coord = zcert_new(), *worker = zcert_new();
    status = TB_EXIT_FAILED;
    if (!coord || !worker) {
        tb_err_set(&err, TB_E_NOMEM, "cannot create keys");
        tb_verb_error(&v, TB_EXIT_FAILED, &err);
        goto done;
    }
    zcert_set_meta(coord, "name", "terrain coordinator");
    zcert_set_meta(worker, "name", "terrain worker");
    if (tb_fs_mkdir_p(out, &err) != 0 ||
        tb_fs_join(workers, sizeof workers, out, "workers", &err) ||
        tb_fs_mkdir_p(workers, &err) != 0 || s_save(coord, out, "coordinator.cert", true, &err) ||
        s_save(worker, out, "worker.cert", true, &err) ||
        s_save(worker, workers, "worker.cert", false, &err)) {
        tb_verb_error(&v, TB_EXIT_FAILED, &err);
        goto done;
    }
    printf("coordinator: terrain bake --bind tcp://0.0.0.0:5555 --curve-cert %s/coordinator.cert "
           "--curve-clients %s\n",
           out, workers);
    printf("workers:     terrain-worker --connect tcp://HOST:5555 --server-key %s "
           "--cert %s/worker.cert\n",
           zcert_public_txt(coord), out);
    printf("(copy %s/worker.cert and worker.cert_secret to each worker; keep "
           "coordinator.cert_secret on the coordinator)\n",
           out);
    status = TB_EXIT_OK;
done:
    zcert_destroy(&coord);
    zcert_destroy(&worker);
    return status;
}
