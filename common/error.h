/* One error convention for the whole project.
 *
 * A function that can fail returns 0 on success and -1 on failure, and fills the caller's tb_err_t
 * with a code the caller can act on and a message that names the file, key, frame or value and what
 * was expected. The message is complete on its own: callers add context by prefixing, never by
 * guessing. A NULL tb_err_t is allowed and discards the detail. No global state, so it is
 * thread-safe.
 */
#ifndef TB_ERROR_H
#define TB_ERROR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum {
    TB_OK = 0,
    TB_E_IO,          /* a file could not be opened, read, written or renamed */
    TB_E_FORMAT,      /* a file's bytes are not what its type promises (PNG, JSON, stored result) */
    TB_E_INVALID,     /* a value is out of range, of the wrong type, or inconsistent with another */
    TB_E_UNKNOWN_KEY, /* a manifest or legend key that nothing reads */
    TB_E_NOMEM,       /* an allocation failed */
    TB_E_PROTOCOL,    /* a malformed or unexpected frame from a peer */
    TB_E_CHECKSUM,    /* a blob whose XXH3 does not match the bytes */
    TB_E_REFUSED,     /* a peer or request refused by policy (build id, lease) */
    TB_E_INTERRUPTED, /* stopped by a signal or by the caller */
    TB_E_JOB,         /* a job failed while running */
    TB_E_INTERNAL     /* an invariant broke: a bug, never caused by input */
} tb_errcode_t;

#define TB_ERR_MSG_MAX 1024

typedef struct {
    tb_errcode_t code;
    char msg[TB_ERR_MSG_MAX];
} tb_err_t;

/* Copies src into dst[0..n) for a message: control characters as \xNN, and when it is too long,
 * the longest word (a path) shortened in the middle ("/very/lo...name.png") so the end (the reason)
 * still fits. tb_err_set and tb_err_prefix pass every message through it. */
void tb_text_fit(char *dst, size_t n, const char *src);

/* Sets *err (when not NULL) to code and the formatted message; returns -1 so a failure path can
 * read `return tb_err_set(err, TB_E_IO, "%s: cannot open: %s", path, strerror(errno));`. */
int tb_err_set(tb_err_t *err, tb_errcode_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Puts "prefix: " in front of the message already in *err and keeps its code; returns -1. */
int tb_err_prefix(tb_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears *err to TB_OK and an empty message. */
void tb_err_clear(tb_err_t *err);

/* A short stable name for a code ("io", "format", ...), for logs and meta.json. */
const char *tb_err_name(tb_errcode_t code);

/* malloc/calloc that set *err to TB_E_NOMEM naming what was being allocated and its size. */
void *tb_malloc(size_t bytes, const char *what, tb_err_t *err);
void *tb_calloc(size_t count, size_t size, const char *what, tb_err_t *err);

#endif
