/* Replays a libFuzzer target over its seed corpus with the ordinary compiler, so every CI run
 * drives each decoder through its seeds (and, under build-asan, with the sanitizers) without clang
 * or libFuzzer. Linked with one tests/fuzz/fuzz_NAME.c; registered as ctest fuzz_NAME over
 * tests/fuzz/seeds/NAME (CMakeLists.txt).
 *
 *   replay_fuzz_NAME [--no-mutate] DIR|FILE...
 *
 * Each seed is run whole, then as every prefix up to 256 bytes and at sixteenths of its length (the
 * truncations a peer or a disk produces), then with each of its first 256 bytes flipped in turn (a
 * fixed, deterministic set of mutations: no randomness, so a failure reproduces). Each seed runs in
 * a child process: a target that crashes or aborts fails the run (exit 1) with the seed's name; a
 * corpus with no file in it fails too (exit 2), so the test cannot pass while running nothing.
 * Prints the number of inputs run. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the target on a private copy of data[0..n), so a read past n is a read past a heap block
 * (which the sanitizers see) rather than into the rest of the seed. */
static void s_run(const uint8_t *data, size_t n)
{
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) {
        fprintf(stderr, "replay: out of memory\n");
        exit(1);
    }
    if (n)
        memcpy(copy, data, n);
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
}

/* Every input made from one seed of n bytes; returns how many. */
static size_t s_inputs(uint8_t *data, size_t n, bool mutate, bool run)
{
    size_t count = 0;
#define S_RUN(len)                                                                                 \
    do {                                                                                           \
        if (run)                                                                                   \
            s_run(data, (len));                                                                    \
        count++;                                                                                   \
    } while (0)
    S_RUN(n);
    if (mutate) {
        for (size_t k = 0; k < n && k <= 256; k++)
            S_RUN(k);
        for (size_t s = 1; s < 16; s++)
            S_RUN(n * s / 16);
        for (size_t k = 0; k < n && k < 256; k++) {
            data[k] ^= 0xff;
            S_RUN(n);
            data[k] ^= 0xff;
        }
    }
#undef S_RUN
    return count;
}

static int s_replay_file(const char *path, bool mutate, size_t *runs)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *data = malloc(cap);
    size_t got;
    while (data && (got = fread(data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *p = realloc(data, cap * 2);
            if (!p) {
                free(data);
                data = NULL;
                break;
            }
            data = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(data);
        fprintf(stderr, "replay: %s: cannot fork\n", path);
        return -1;
    }
    if (pid == 0) {
        s_inputs(data, n, mutate, true);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    *runs += s_inputs(data, n, mutate, false);
    free(data);
    if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr,
                "replay: %s: the target crashed (%s %d) on this seed or one of its "
                "truncations or byte flips\n",
                path, WIFSIGNALED(status) ? "signal" : "exit",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        return 1;
    }
    return 0;
}

static int s_replay(const char *path, bool mutate, size_t *files, size_t *runs)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: no such file or directory\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*files)++;
        return s_replay_file(path, mutate, runs);
    }
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort); /* sorted: the same order on every machine */
    if (n < 0) {
        fprintf(stderr, "replay: %s: cannot list\n", path);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.' && rc == 0) {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
            rc = s_replay(sub, mutate, files, runs);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    bool mutate = true;
    size_t files = 0, runs = 0;
    int given = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-mutate") == 0) {
            mutate = false;
            continue;
        }
        given++;
        int rc = s_replay(argv[i], mutate, &files, &runs);
        if (rc != 0)
            return rc > 0 ? 1 : 2;
    }
    if (given == 0 || files == 0) {
        fprintf(stderr, "replay: no seed file given (usage: %s [--no-mutate] DIR|FILE...)\n",
                argv[0]);
        return 2;
    }
    printf("replay: %zu inputs from %zu seed files, no crash\n", runs, files);
    return 0;
}
