/* Atomic file output and whole-file reads; see fs.h. */
#include "common/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

static atomic_uint s_tmp_counter;

int tb_fs_tmp_open(tb_fs_tmp_t *tmp, const char *path, tb_err_t *err)
{
    memset(tmp, 0, sizeof *tmp);
    if (strlen(path) >= sizeof tmp->final_path)
        return tb_err_set(err, TB_E_INVALID, "%s: path too long", path);
    snprintf(tmp->final_path, sizeof tmp->final_path, "%s", path);
    snprintf(tmp->tmp_path, sizeof tmp->tmp_path, "%s.tmp.%ld.%u", path, (long)getpid(),
             atomic_fetch_add(&s_tmp_counter, 1));
    tmp->fp = fopen(tmp->tmp_path, "wb");
    if (!tmp->fp)
        return tb_err_set(err, TB_E_IO, "%s: cannot create: %s", tmp->tmp_path, strerror(errno));
    return 0;
}

int tb_fs_tmp_commit(tb_fs_tmp_t *tmp, tb_err_t *err)
{
    int bad = ferror(tmp->fp);
    if (fclose(tmp->fp) != 0 || bad) {
        tmp->fp = NULL;
        unlink(tmp->tmp_path);
        return tb_err_set(err, TB_E_IO, "%s: write failed: %s", tmp->final_path, strerror(errno));
    }
    tmp->fp = NULL;
    if (rename(tmp->tmp_path, tmp->final_path) != 0) {
        int e = errno;
        unlink(tmp->tmp_path);
        return tb_err_set(err, TB_E_IO, "%s: cannot rename into place: %s", tmp->final_path,
                          strerror(e));
    }
    return 0;
}

void tb_fs_tmp_abort(tb_fs_tmp_t *tmp)
{
    if (tmp->fp)
        fclose(tmp->fp);
    tmp->fp = NULL;
    if (tmp->tmp_path[0])
        unlink(tmp->tmp_path);
}

int tb_fs_write_atomic(const char *path, const void *data, size_t bytes, tb_err_t *err)
{
    tb_fs_tmp_t tmp;
    if (tb_fs_tmp_open(&tmp, path, err) != 0)
        return -1;
    if (bytes && fwrite(data, 1, bytes, tmp.fp) != bytes) {
        int e = errno;
        tb_fs_tmp_abort(&tmp);
        return tb_err_set(err, TB_E_IO, "%s: write failed: %s", path, strerror(e));
    }
    return tb_fs_tmp_commit(&tmp, err);
}

const char *tb_fs_kind_name(unsigned mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISREG(mode))
        return "a regular file";
    return "not a regular file";
}

int tb_fs_check_outputs(const char *dir, const char *const *names, size_t n_names,
                        const char *const *inputs, size_t n_inputs, tb_err_t *err)
{
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat in;
        if (!inputs[i] || !inputs[i][0] || stat(inputs[i], &in) != 0)
            continue;
        for (size_t k = 0; k < n_names; k++) {
            char path[4200];
            struct stat out;
            if (snprintf(path, sizeof path, "%s/%s", dir, names[k]) >= (int)sizeof path ||
                stat(path, &out) != 0)
                continue;
            if (out.st_dev == in.st_dev && out.st_ino == in.st_ino)
                return tb_err_set(err, TB_E_INVALID,
                                  "%s: an input the run would overwrite (it writes %s); choose "
                                  "another output directory",
                                  inputs[i], path);
        }
    }
    return 0;
}

int tb_fs_open_regular(const char *path, int *fd_out, uint64_t *bytes_out, tb_err_t *err)
{
    *fd_out = -1;
    *bytes_out = 0;
    /* O_NONBLOCK so that a FIFO cannot block the open; fstat before a byte is read, so that
     * only a regular file is read at all (docs/bake.md, "Inputs"). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        tb_err_set(err, e == EISDIR ? TB_E_INVALID : TB_E_IO, "%s: cannot open: %s", path,
                   strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return tb_err_set(err, TB_E_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return tb_err_set(err, TB_E_INVALID, "%s: not a regular file (%s)", path,
                          tb_fs_kind_name(st.st_mode));
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *fd_out = fd;
    *bytes_out = (uint64_t)st.st_size;
    return 0;
}

int tb_fs_read_all(const char *path, size_t max_bytes, char **data_out, size_t *bytes_out,
                   tb_err_t *err)
{
    *data_out = NULL;
    *bytes_out = 0;
    int fd;
    uint64_t size;
    if (tb_fs_open_regular(path, &fd, &size, err) != 0)
        return -1;
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        close(fd);
        return tb_err_set(err, TB_E_NOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    if (size > max_bytes) {
        fclose(fp);
        return tb_err_set(err, TB_E_INVALID, "%s: %llu bytes, larger than the %zu allowed", path,
                          (unsigned long long)size, max_bytes);
    }
    size_t n = (size_t)size;
    char *buf = tb_malloc(n + 1, path, err);
    if (!buf) {
        fclose(fp);
        return -1;
    }
    if (n && fread(buf, 1, n, fp) != n) {
        free(buf);
        fclose(fp);
        return tb_err_set(err, TB_E_IO, "%s: short read", path);
    }
    fclose(fp);
    buf[n] = '\0';
    *data_out = buf;
    *bytes_out = n;
    return 0;
}

int tb_fs_mkdir_p(const char *path, tb_err_t *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return tb_err_set(err, TB_E_INVALID, "%s: path too long", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return tb_err_set(err, TB_E_IO, "%s: cannot create directory: %s", buf,
                              strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return tb_err_set(err, TB_E_IO, "%s: cannot create directory: %s", buf, strerror(errno));
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        return tb_err_set(err, TB_E_INVALID, "%s: exists and is not a directory", buf);
    return 0;
}

int tb_fs_refuse_link(const char *path, const char *what, tb_err_t *err)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return 0;
    char target[1024];
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    return tb_err_set(err, TB_E_INVALID,
                      "%s: %s%sa symbolic link (to %s); refusing to write through it (remove the "
                      "link, or bake into another --out)",
                      path, what ? what : "", what ? " is " : "", n > 0 ? target : "?");
}

int tb_fs_mkdir_inside(const char *path, tb_err_t *err)
{
    if (tb_fs_refuse_link(path, NULL, err) != 0)
        return -1;
    return tb_fs_mkdir_p(path, err);
}

bool tb_fs_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int tb_fs_join(char *out, size_t n, const char *dir, const char *name, tb_err_t *err)
{
    size_t dl = strlen(dir);
    int w = (dl && dir[dl - 1] == '/') ? snprintf(out, n, "%s%s", dir, name)
                                       : snprintf(out, n, "%s/%s", dir, name);
    if (w < 0 || (size_t)w >= n)
        return tb_err_set(err, TB_E_INVALID, "%s/%s: path too long", dir, name);
    return 0;
}

void tb_fs_dirname(char *out, size_t n, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(out, n, ".");
        return;
    }
    if (slash == path) {
        snprintf(out, n, "/");
        return;
    }
    snprintf(out, n, "%.*s", (int)(slash - path), path);
}

int tb_fs_hash_file(const char *path, uint64_t *xxh3, tb_err_t *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return tb_err_set(err, TB_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    XXH3_state_t *h = NULL;
    char *buf = NULL;
    int rc = -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tb_err_set(err, TB_E_INVALID, "%s: not a regular file", path);
        goto done;
    }
    h = XXH3_createState();
    buf = malloc((size_t)1 << 20);
    if (!h || !buf) {
        tb_err_set(err, TB_E_NOMEM, "%s: out of memory to hash it", path);
        goto done;
    }
    XXH3_64bits_reset(h);
    for (;;) {
        ssize_t n = read(fd, buf, (size_t)1 << 20);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            tb_err_set(err, TB_E_IO, "%s: %s", path, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        XXH3_64bits_update(h, buf, (size_t)n);
    }
    *xxh3 = XXH3_64bits_digest(h);
    rc = 0;
done:
    XXH3_freeState(h);
    free(buf);
    close(fd);
    return rc;
}

void tb_fs_map_release(void *base, size_t map_bytes, size_t lo, size_t hi)
{
    /* asked each time: a lazily set static would be a data race between the helper threads */
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096;
    size_t end = (map_bytes + page - 1) / page * page;
    if (hi > map_bytes)
        hi = map_bytes;
    if (!base || lo >= hi)
        return;
    lo = lo / TB_FS_FAULT_AROUND_BYTES * TB_FS_FAULT_AROUND_BYTES;
    hi = (hi + page - 1) / page * page;
    if (hi > end)
        hi = end;
    if (hi > lo)
        madvise((char *)base + lo, hi - lo, MADV_DONTNEED);
}
