/* The coordinator's ROUTER; see broker.h. */
#include "coordinator/farm/broker.h"

#include "common/fs.h"

#include <czmq.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
#include "coordinator/farm/proto.h"

struct tb_broker_t {
    zsock_t *sock;
    zactor_t *auth;
    zcert_t *cert;
    char endpoint[1024];
    bool has_endpoint;
    void *monitor; /* PAIR receiving the ROUTER's handshake failures (CURVE refusals) */
    double window_start_s;
    long in_window, suppressed;
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

int tb_broker_check(const char *bind, bool insecure, const char *curve_cert,
                    const char *curve_clients, tb_err_t *err)
{
    if (bind && !tb_endpoint_is_local(bind) && !curve_cert && !insecure)
        return tb_err_set(err, TB_E_INVALID,
                          "--bind %s is reachable from other hosts: give CURVE keys (--curve-cert, "
                          "see `terrain farm-keys`) or say --insecure explicitly",
                          bind);
    if (curve_cert) {
        /* zcert_load opens the file and FILE_secret blindly: a FIFO would block it */
        char secret[1100];
        snprintf(secret, sizeof secret, "%s_secret", curve_cert);
        const char *files[] = {curve_cert, secret};
        for (int i = 0; i < 2; i++) {
            struct stat st;
            if (stat(files[i], &st) == 0 && !S_ISREG(st.st_mode))
                return tb_err_set(err, TB_E_INVALID, "%s: not a regular file (%s)", files[i],
                                  tb_fs_kind_name(st.st_mode));
        }
        zcert_t *cert = zcert_load(curve_cert);
        if (!cert)
            return tb_err_set(err, TB_E_INVALID, "%s: not a ZeroMQ certificate", curve_cert);
        static const char zero_key[] = "0000000000000000000000000000000000000000";
        bool no_secret = strcmp(zcert_secret_txt(cert), zero_key) == 0;
        zcert_destroy(&cert);
        if (no_secret)
            return tb_err_set(err, TB_E_INVALID,
                              "%s: no secret key (expected %s_secret beside it; see terrain "
                              "farm-keys)",
                              curve_cert, curve_cert);
    }
    if (curve_clients && !zsys_file_exists(curve_clients))
        return tb_err_set(err, TB_E_INVALID, "%s: no such directory of worker certificates",
                          curve_clients);
    if (curve_clients) {
        /* a directory with no certificate admits no worker: the bake would wait for ever */
        DIR *d = opendir(curve_clients);
        if (!d)
            return tb_err_set(err, TB_E_INVALID, "--curve-clients %s: not a readable directory",
                              curve_clients);
        size_t certs = 0;
        struct dirent *e;
        while ((e = readdir(d)))
            certs += e->d_name[0] != '.' && !strstr(e->d_name, "_secret");
        closedir(d);
        if (certs == 0)
            return tb_err_set(err, TB_E_INVALID,
                              "--curve-clients %s: no worker certificate in it (no worker could "
                              "join; copy the workers' public certificates there, see terrain "
                              "farm-keys)",
                              curve_clients);
    }
    return 0;
}

tb_broker_t *tb_broker_new(const tb_broker_opts_t *o, tb_err_t *err)
{
    if (o->bind && !tb_endpoint_is_local(o->bind) && !o->curve_cert && !o->insecure) {
        tb_err_set(err, TB_E_INVALID,
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
        /* libzmq binds interfaces and addresses, not host names: localhost is 127.0.0.1, and
         * [::1] needs IPv6 on the socket. */
        char bind[1024];
        snprintf(bind, sizeof bind, "%s", o->bind);
        if (strncmp(o->bind, "tcp://localhost:", 16) == 0)
            snprintf(bind, sizeof bind, "tcp://127.0.0.1:%s", o->bind + 16);
        if (strncmp(o->bind, "tcp://[", 7) == 0 || strncmp(o->bind, "tcp://::", 8) == 0)
            zsock_set_ipv6(self->sock, 1);
        if (zsock_bind(self->sock, "%s", bind) < 0) {
            tb_err_set(err, TB_E_INVALID, "cannot bind %s: %s", o->bind, zmq_strerror(zmq_errno()));
            goto failed;
        }
        /* A worker refused by CURVE (zauth) is logged here: libzmq reports the failed handshake
         * to a socket monitor, not to the ROUTER (docs/distribution.md, "Security"). */
        if (o->curve_cert) {
            char mon[64];
            snprintf(mon, sizeof mon, "inproc://tb-broker-monitor-%p", (void *)self);
            if (zmq_socket_monitor(zsock_resolve(self->sock), mon,
                                   ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                       ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                       ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0) {
                self->monitor = zmq_socket(zsys_init(), ZMQ_PAIR);
                if (self->monitor && zmq_connect(self->monitor, mon) != 0) {
                    zmq_close(self->monitor);
                    self->monitor = NULL;
                }
            }
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
    if (self->monitor) {
        zmq_socket_monitor(zsock_resolve(self->sock), NULL, 0);
        int zero = 0;
        zmq_setsockopt(self->monitor, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(self->monitor);
        self->monitor = NULL;
    }
    if (self->sock) {
        zsock_set_linger(self->sock, linger_ms);
        zsock_destroy(&self->sock);
    }
    zactor_destroy(&self->auth);
    zcert_destroy(&self->cert);
    free(self);
    *self_p = NULL;
}

void tb_broker_poll_events(tb_broker_t *self)
{
    for (int k = 0; self->monitor && k < 100; k++) {
        zmq_msg_t ev, addr;
        zmq_msg_init(&ev);
        if (zmq_msg_recv(&ev, self->monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&ev);
            return;
        }
        uint16_t event = 0;
        uint32_t value = 0;
        if (zmq_msg_size(&ev) >= 6) {
            memcpy(&event, zmq_msg_data(&ev), 2);
            memcpy(&value, (char *)zmq_msg_data(&ev) + 2, 4);
        }
        zmq_msg_close(&ev);
        zmq_msg_init(&addr);
        zmq_msg_recv(&addr, self->monitor, 0);
        zmq_msg_close(&addr);
        const char *why = event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                              ? "its key is not among --curve-clients (or it sent none)"
                          : event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                              ? "a broken CURVE handshake (a wrong --server-key?)"
                              : "no CURVE handshake (a worker without --server-key?)";
        /* at most 5 a 10-second window, then one line with the count */
        double now = zclock_mono() / 1000.0;
        if (now - self->window_start_s >= 10) {
            if (self->suppressed)
                tb_log_warn("%ld more connections refused by CURVE", self->suppressed);
            self->window_start_s = now;
            self->in_window = 0;
            self->suppressed = 0;
        }
        if (self->in_window++ < 5)
            tb_log_warn("refused a connection on %s: %s (handshake error %u)", self->endpoint, why,
                        (unsigned)value);
        else
            self->suppressed++;
    }
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
