/* `terrain studio`'s HTTP server (docs/studio.md): one page that paints a planet's painting and
 * edits its legend, saves both, runs `terrain plan` and `terrain bake --only ID` as a child process
 * and shows what they wrote. libmicrohttpd serves it from one internal thread, so the handlers
 * never run at once and share the studio's state without locks.
 *
 * Every request is hostile until checked: the token (from /dev/urandom) in its query string first
 * (403 without it), then the path (404) and the method (405), the body's size against the route's
 * limit before a byte of it is kept (413), and the body itself (400 malformed, 409 a file changed
 * behind the page or a child already running, 422 a painting or legend the plan would refuse).
 * Every refusal is JSON {"error": MESSAGE} naming what was wrong.
 */
#ifndef TB_STUDIO_H
#define TB_STUDIO_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

#define TB_STUDIO_TOKEN_HEX 32 /* 16 random bytes, hex */

typedef struct {
    const char *manifest_path; /* the planet edited: its painting and legend are rewritten */
    const char *out_dir;       /* OUT/plan, OUT/bake and the children's logs go here */
    const char *bind_addr;     /* dotted IPv4 address */
    int port;                  /* 0: any free port */
} tb_studio_config_t;

typedef struct tb_studio_t tb_studio_t;

/* Loads and checks the manifest (its painting's header against the planet) and makes a token.
 * NULL with *err naming the file, key or value. */
tb_studio_t *tb_studio_new(const tb_studio_config_t *cfg, tb_err_t *err);

/* Starts serving on cfg's address. 0, or -1 with *err (the address or port refused). */
int tb_studio_start(tb_studio_t *s, tb_err_t *err);

/* The port served (after start) and the token every request must carry (?token=). */
int tb_studio_port(const tb_studio_t *s);
const char *tb_studio_token(const tb_studio_t *s);

/* Stops serving, ends a running child and frees; sets *self_p to NULL; accepts NULL. */
void tb_studio_destroy(tb_studio_t **self_p);

/* True for an IPv4 address in 127.0.0.0/8; false for anything else or text that is no address. */
bool tb_studio_is_loopback(const char *addr);

#endif
