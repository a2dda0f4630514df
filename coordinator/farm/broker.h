/* The coordinator's socket: one ROUTER that local workers reach over a private ipc:// endpoint and
 * farm workers over the endpoint given to --bind (docs/distribution.md).
 *
 * ROUTER_MANDATORY is on, so a message to a worker that has gone is an error (EHOSTUNREACH) rather
 * than silence; ZMQ_MAXMSGSIZE drops a peer that sends a frame larger than the protocol allows
 * before it is buffered. Security: an ipc:// endpoint lives in a 0700 directory and a loopback
 * tcp:// one is reachable only from this host, so both may run without keys; any other bind needs
 * CURVE (a server certificate, and optionally a directory of the workers' public certificates
 * checked by zauth) or an explicit `insecure`. The ipc endpoint is bound before the CURVE options
 * are set, and libzmq fixes a listener's options when it binds, so local workers never need keys.
 */
#ifndef TB_BROKER_H
#define TB_BROKER_H

#include <stdbool.h>

#include "common/error.h"

typedef struct {
    const char *bind; /* farm endpoint ("tcp://0.0.0.0:5555", "tcp://127.0.0.1:*"), or NULL */
    const char *local_endpoint; /* ipc endpoint for local workers, or NULL */
    bool insecure;              /* allow a non-loopback bind without CURVE */
    const char *curve_cert;     /* the coordinator's certificate file (secret part beside it) */
    const char *curve_clients;  /* directory of allowed worker certificates; NULL: any worker
                                   that knows the coordinator's public key */
} tb_broker_opts_t;

typedef struct tb_broker_t tb_broker_t;

/* Creates and binds the ROUTER. Fails with TB_E_REFUSED for a non-loopback bind with neither CURVE
 * nor `insecure`, TB_E_INVALID for an endpoint that cannot be bound or a bad certificate. */
tb_broker_t *tb_broker_new(const tb_broker_opts_t *opts, tb_err_t *err);

/* Closes the socket (waiting up to linger_ms to deliver what is queued) and stops zauth; accepts
 * NULL and sets *self_p to NULL. */
void tb_broker_destroy(tb_broker_t **self_p, int linger_ms);

/* The raw libzmq socket, for tb_proto_send/recv and zmq_poll. */
void *tb_broker_socket(tb_broker_t *self);

/* The farm endpoint as bound, with a wildcard port resolved ("tcp://127.0.0.1:41234"), or NULL. */
const char *tb_broker_endpoint(const tb_broker_t *self);

/* Whether the broker uses CURVE on its farm endpoint, and the coordinator's public key (Z85). */
bool tb_broker_secure(const tb_broker_t *self);

/* Judges a farm bind before anything is set up: a non-loopback endpoint without CURVE keys and
 * without insecure, a certificate that does not load or has no secret, a missing client directory.
 * Returns 0, or -1 with TB_E_INVALID. tb_broker_new checks the same. */
int tb_broker_check(const char *bind, bool insecure, const char *curve_cert,
                    const char *curve_clients, tb_err_t *err);

/* Logs (rate-limited) the connections CURVE refused since the last call; call once a loop turn. */
void tb_broker_poll_events(tb_broker_t *self);
const char *tb_broker_public_key(const tb_broker_t *self);

/* True for ipc:// and inproc:// endpoints and tcp:// on a loopback address (127.x.x.x, ::1,
 * localhost, lo): endpoints no other host can reach. */
bool tb_endpoint_is_local(const char *endpoint);

#endif
