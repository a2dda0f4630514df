/* `terrain studio [MANIFEST] [--port N] [--bind ADDR] [--out DIR] [--dir DIR]`: serves the page
 * that paints a planet, edits its legend, plans it and bakes one region (coordinator/studio/,
 * docs/studio.md) until SIGINT or SIGTERM. Without MANIFEST it edits DIR/planet.json (default
 * studio-planet), writing the built-in demo there first with `terrain init` when DIR holds none.
 * Exit status: 0 stopped by a signal, 1 the server could not start, 2 bad usage or input. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/args.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/manifest.h"
#include "coordinator/cli/commands.h"
#include "coordinator/cli/verb.h"
#include "coordinator/studio/studio.h"

#define S_USAGE                                                                                    \
    "terrain studio [MANIFEST] [--port N] [--bind ADDR] [--out DIR] [--dir DIR] [--seed N] "       \
    "[--circumference-km K]"

/* Runs `terrain init DIR [...]` (this binary) and waits: the demo written as files to edit. */
static int s_init_demo(const char *dir, const char *seed, const char *km)
{
    char *argv[9] = {"terrain", "init", (char *)dir};
    int n = 3;
    if (seed) {
        argv[n++] = "--seed";
        argv[n++] = (char *)seed;
    }
    if (km) {
        argv[n++] = "--circumference-km";
        argv[n++] = (char *)km;
    }
    argv[n] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int tb_cmd_studio(int argc, char **argv)
{
    const char *bind = "127.0.0.1", *out_dir = NULL, *demo_dir = "studio-planet";
    int64_t seed = 0;
    double km = 0;
    bool seed_given = false, km_given = false;
    int64_t port = 8765;
    const tb_opt_t opts[] = {
        {"port", TB_OPT_INT, &port, NULL, "N", "port to serve on (default 8765; 0: any free one)",
         TB_OPT_IRANGE(0, 65535)},
        {"bind", TB_OPT_STRING, &bind, NULL, "ADDR",
         "IPv4 address to serve on (default 127.0.0.1; anything but loopback is announced as a "
         "risk)"},
        {"out", TB_OPT_STRING, &out_dir, NULL, "DIR",
         "where the plan and bake go (default: MANIFEST's folder/studio-out)"},
        {"dir", TB_OPT_STRING, &demo_dir, NULL, "DIR",
         "without MANIFEST: the folder whose planet.json is edited, the demo written there first "
         "when it holds none (default studio-planet)"},
        TB_VERB_OPT_SEED(&seed, &seed_given, "without MANIFEST: the demo's seed (7)"),
        TB_VERB_OPT_CIRCUMFERENCE(&km, &km_given,
                                  "without MANIFEST: the demo's circumference (25)"),
    };
    tb_verb_t v = {.name = "studio", .usage = S_USAGE, TB_VERB_OPTS(opts), .max_positional = 1};
    int status = tb_verb_parse(&v, argc, argv);
    if (status != TB_VERB_RUN)
        return status;
    tb_err_t err;
    char manifest[TB_PATH_MAX], out[TB_PATH_MAX], dir[TB_PATH_MAX], seed_text[32], km_text[32];
    snprintf(seed_text, sizeof seed_text, "%lld", (long long)seed);
    snprintf(km_text, sizeof km_text, "%.17g", km);
    if (v.n_positional) {
        if (seed_given || km_given)
            return tb_verb_usage(&v, "--seed and --circumference-km are for the demo (no "
                                     "MANIFEST); a manifest sets its own");
        snprintf(manifest, sizeof manifest, "%s", v.positional[0]);
    } else {
        if (tb_fs_join(manifest, sizeof manifest, demo_dir, "planet.json", &err) != 0)
            return tb_verb_error(&v, TB_EXIT_USAGE, &err);
        if (tb_fs_exists(manifest))
            tb_log_info("editing %s (already there: --seed and --circumference-km ignored)",
                        manifest);
        else if (s_init_demo(demo_dir, seed_given ? seed_text : NULL, km_given ? km_text : NULL) !=
                 0)
            return tb_verb_usage(
                &v, "could not write the demo planet to %s (terrain init said why)", demo_dir);
    }
    if (!out_dir) {
        tb_fs_dirname(dir, sizeof dir, manifest);
        if (tb_fs_join(out, sizeof out, dir, "studio-out", &err) != 0)
            return tb_verb_error(&v, TB_EXIT_USAGE, &err);
        out_dir = out;
    }
    bool loopback = tb_studio_is_loopback(bind);
    tb_studio_config_t cfg = {manifest, out_dir, bind, (int)port};
    tb_studio_t *s = tb_studio_new(&cfg, &err);
    if (!s)
        return tb_verb_error(&v, TB_EXIT_USAGE, &err);
    /* SIGINT and SIGTERM blocked before the server's thread starts, so it inherits the mask and
     * only sigwait below takes them */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    if (tb_studio_start(s, &err) != 0) {
        tb_studio_destroy(&s);
        return tb_verb_error(&v, TB_EXIT_FAILED, &err);
    }
    if (!loopback)
        fprintf(stderr,
                "terrain studio: WARNING: serving on %s, NOT loopback: anyone who can reach this "
                "address and sees the token (it travels in plain HTTP) can overwrite %s's "
                "painting and legend and run plans and bakes on this machine\n",
                bind, manifest);
    printf("studio: editing %s, outputs in %s\nstudio: open http://%s:%d/?token=%s\n", manifest,
           out_dir, loopback ? "127.0.0.1" : bind, tb_studio_port(s), tb_studio_token(s));
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    tb_log_info("stopping on signal %d", sig);
    tb_studio_destroy(&s);
    return TB_EXIT_OK;
}
