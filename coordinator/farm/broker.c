/* The coordinator's ROUTER; see broker.h. */
#include "coordinator/farm/broker.h"

#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "coordinator/farm/proto.h"

struct tb_broker_t {
    zsock_t *sock;
    zactor_t *auth;
    zcert_t *cert;
    char endpoint[1024];
    bool has_endpoint;
};

bool tb_endpoint_is_local(const char *ep)
{
    if (!ep)
        return false;
    if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0)
        return true;
    if (strncmp(ep, "tcp://", 6) != 0)
        return false;
    const char *host = ep + 6;
    /* A "source;destination" form binds nothing we can judge; treat it as remote. */
    if (strchr(host, ';'))
        return false;
    const char *colon = strrchr(host, ':');
    size_t n = colon ? (size_t)(colon - host) : strlen(host);
    char h[256];
    if (n >= sizeof h)
        return false;
    memcpy(h, host, n);
    h[n] = '\0';
    if (strncmp(h, "127.", 4) == 0)
        return strspn(h + 4, "0123456789.") == strlen(h + 4);
    return strcmp(h, "localhost") == 0 || strcmp(h, "[::1]") == 0 || strcmp(h, "::1") == 0 ||
           strcmp(h, "lo") == 0;
}

static int s_setup_curve(tb_broker_t *self, const tb_broker_opts_t *o, tb_err_t *err)
{
    self->cert = zcert_load(o->curve_cert);
    if (!self->cert)
        return tb_err_set(err, TB_E_INVALID, "%s: not a ZeroMQ certificate", o->curve_cert);
    static const char zero_key[] = "0000000000000000000000000000000000000000";
    if (strcmp(zcert_secret_txt(self->cert), zero_key) == 0)
        return tb_err_set(err, TB_E_INVALID,
                          "%s: no secret key (expected %s_secret beside it; see terrain farm-keys)",
                          o->curve_cert, o->curve_cert);
    if (o->curve_clients && !zsys_file_exists(o->curve_clients))
        return tb_err_set(err, TB_E_INVALID, "%s: no such directory of worker certificates",
                          o->curve_clients);
    self->auth = zactor_new(zauth, NULL);
    if (!self->auth)
        return tb_err_set(err, TB_E_INTERNAL, "cannot start the ZeroMQ authenticator");
    zstr_sendx(self->auth, "CURVE", o->curve_clients ? o->curve_clients : CURVE_ALLOW_ANY, NULL);
    zsock_wait(self->auth);
    if (!o->curve_clients)
        tb_log_warn("CURVE without --curve-clients: traffic is encrypted, but any worker that "
                    "knows the coordinator's public key may join");
    zcert_apply(self->cert, self->sock);
    zsock_set_curve_server(self->sock, 1);
    zsock_set_zap_domain(self->sock, "terrain");
    return 0;
}

tb_broker_t *tb_broker_new(const tb_broker_opts_t *o, tb_err_t *err)
{
    if (o->bind && !tb_endpoint_is_local(o->bind) && !o->curve_cert && !o->insecure) {
        tb_err_set(err, TB_E_REFUSED,
                   "--bind %s is reachable from other hosts: give CURVE keys (--curve-cert, see "
                   "`terrain farm-keys`) or say --insecure explicitly",
                   o->bind);
        return NULL;
    }
    tb_broker_t *self = tb_calloc(1, sizeof *self, "the broker", err);
    if (!self)
        return NULL;
    self->sock = zsock_new(ZMQ_ROUTER);
    if (!self->sock) {
        tb_err_set(err, TB_E_IO, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
        goto failed;
    }
    zsock_set_router_mandatory(self->sock, 1);
    zsock_set_maxmsgsize(self->sock, (int)TB_PROTO_MAXMSGSIZE);
    zsock_set_sndhwm(self->sock, 100000);
    zsock_set_rcvhwm(self->sock, 100000);
    zsock_set_linger(self->sock, 0);
    if (o->local_endpoint && zsock_bind(self->sock, "%s", o->local_endpoint) < 0) {
        tb_err_set(err, TB_E_IO, "cannot bind %s: %s", o->local_endpoint,
                   zmq_strerror(zmq_errno()));
        goto failed;
    }
    if (o->bind) {
        if (o->curve_cert && s_setup_curve(self, o, err) != 0)
            goto failed;
        if (!o->curve_cert && !tb_endpoint_is_local(o->bind))
            tb_log_warn("--insecure: %s takes jobs and results from anyone who can reach it, "
                        "unencrypted",
                        o->bind);
        if (zsock_bind(self->sock, "%s", o->bind) < 0) {
            tb_err_set(err, TB_E_INVALID, "cannot bind %s: %s", o->bind, zmq_strerror(zmq_errno()));
            goto failed;
        }
        char *last = zsock_last_endpoint(self->sock);
        snprintf(self->endpoint, sizeof self->endpoint, "%s", last ? last : o->bind);
        zstr_free(&last);
        self->has_endpoint = true;
    }
    return self;
failed:
    tb_broker_destroy(&self, 0);
    return NULL;
}

void tb_broker_destroy(tb_broker_t **self_p, int linger_ms)
{
    if (!self_p || !*self_p)
        return;
    tb_broker_t *self = *self_p;
    if (self->sock) {
        zsock_set_linger(self->sock, linger_ms);
        zsock_destroy(&self->sock);
    }
    zactor_destroy(&self->auth);
    zcert_destroy(&self->cert);
    free(self);
    *self_p = NULL;
}

void *tb_broker_socket(tb_broker_t *self)
{
    return zsock_resolve(self->sock);
}

const char *tb_broker_endpoint(const tb_broker_t *self)
{
    return self->has_endpoint ? self->endpoint : NULL;
}

bool tb_broker_secure(const tb_broker_t *self)
{
    return self->cert != NULL;
}

const char *tb_broker_public_key(const tb_broker_t *self)
{
    return self->cert ? zcert_public_txt(self->cert) : NULL;
}
