/* tb_misbehave: a deliberately broken worker, for tests/test_farm_misbehave.sh. It connects to a
 * coordinator and, in order:
 *
 *   1. sends a frame of random bytes                      (expect: logged, rejected)
 *   2. sends a truncated READY                            (expect: logged, rejected)
 *   3. says READY with another build id                   (expect: DISCONNECT "refused")
 *   4. says READY properly, waits for a JOB, then sends
 *      a. a RESULT for a job that was not leased to it    (expect: logged, rejected)
 *      b. a RESULT for its job whose blob checksum lies   (expect: logged, rejected, job re-run)
 *   5. says DISCONNECT and leaves.
 *
 * Prints one line per step to stdout and exits 0 when every step could be carried out and the
 * refusal in step 3 arrived; 1 otherwise. The coordinator's side (that each message was logged and
 * rejected and the run still completed correctly) is checked by the test script.
 *
 *   tb_misbehave --connect ENDPOINT [--timeout S]
 */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/blob.h"
#include "common/hash.h"
#include "common/log.h"
#include "coordinator/farm/proto.h"
#include "common/version.h"

static zsock_t *s_dealer(const char *endpoint)
{
    zsock_t *s = zsock_new(ZMQ_DEALER);
    zsock_set_linger(s, 1000);
    if (!s || zsock_connect(s, "%s", endpoint) != 0) {
        fprintf(stderr, "tb_misbehave: cannot connect to %s\n", endpoint);
        exit(1);
    }
    return s;
}

static void s_send(zsock_t *s, const tb_msg_t *m)
{
    tb_err_t err;
    if (tb_proto_send(zsock_resolve(s), NULL, 0, m, 0, &err) != 0) {
        fprintf(stderr, "tb_misbehave: %s\n", err.msg);
        exit(1);
    }
}

/* Waits up to timeout_s for a message of command `want`, skipping heartbeats; 0 when it came. */
static int s_wait_for(zsock_t *s, tb_cmd_t want, tb_msg_t *m, tb_proto_rx_t *rx, double timeout_s)
{
    double until = tb_now_s() + timeout_s;
    while (tb_now_s() < until) {
        zmq_pollitem_t item = {zsock_resolve(s), 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0)
            continue;
        if (tb_proto_recv(zsock_resolve(s), rx, 0) != 0)
            continue;
        tb_err_t err;
        if (tb_proto_rx_decode(rx, 0, m, &err) == 0 && m->cmd == want)
            return 0;
        tb_proto_rx_close(rx);
    }
    return -1;
}

static void s_ready(tb_msg_t *m, const char *name, const char *build_id)
{
    tb_msg_init(m, TB_CMD_READY);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->build_id, sizeof m->build_id, "%s", build_id);
    m->threads = 1;
    m->memory_bytes = 1 << 30;
}

int main(int argc, char **argv)
{
    const char *endpoint = NULL;
    double timeout_s = 10;
    tb_opt_t opts[] = {
        {"connect", TB_OPT_STRING, &endpoint, NULL, "ENDPOINT", "the coordinator"},
        {"timeout", TB_OPT_DOUBLE, &timeout_s, NULL, "S", "how long to wait for replies (10)"},
    };
    tb_err_t err;
    int n_pos;
    if (tb_args_parse(argc - 1, argv + 1, opts, 2, NULL, 0, &n_pos, &err) != 0 || !endpoint) {
        fprintf(stderr, "usage: tb_misbehave --connect ENDPOINT [--timeout S]\n");
        return 2;
    }
    zsys_handler_set(NULL);
    int status = 0;

    /* 1. Random bytes. */
    zsock_t *a = s_dealer(endpoint);
    unsigned char noise[200];
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)tb_hash(99, TB_SALT_TEST, (int64_t)i, 0, 0);
    zmq_send(zsock_resolve(a), noise, sizeof noise, 0);
    printf("step 1: sent %zu random bytes\n", sizeof noise);

    /* 2. A READY cut off in the middle of its build id. */
    tb_msg_t m;
    s_ready(&m, "truncated", tb_build_id());
    unsigned char header[TB_PROTO_HEADER_MAX];
    size_t len;
    tb_proto_encode(&m, header, sizeof header, &len, &err);
    zmq_send(zsock_resolve(a), header, len - 12, 0);
    printf("step 2: sent a READY truncated to %zu of %zu bytes\n", len - 12, len);

    /* 3. Another build id: the coordinator must refuse. */
    zsock_t *b = s_dealer(endpoint);
    s_ready(&m, "other-build", "0.0.0+not-this-build");
    s_send(b, &m);
    tb_proto_rx_t rx;
    if (s_wait_for(b, TB_CMD_DISCONNECT, &m, &rx, timeout_s) == 0 && m.code == TB_BYE_REFUSED) {
        printf("step 3: refused: %s\n", m.text);
        tb_proto_rx_close(&rx);
    } else {
        printf("step 3: FAILED: no refusal for another build id\n");
        status = 1;
    }

    /* 4. A proper worker that answers badly. */
    zsock_t *c = s_dealer(endpoint);
    s_ready(&m, "misbehave", tb_build_id());
    s_send(c, &m);
    if (s_wait_for(c, TB_CMD_JOB, &m, &rx, timeout_s) != 0) {
        printf("step 4: FAILED: no JOB arrived\n");
        status = 1;
    } else {
        uint64_t job = m.job_id;
        uint32_t attempt = m.attempt;
        tb_proto_rx_close(&rx);
        printf("step 4: got job %llu attempt %u\n", (unsigned long long)job, attempt);
        /* a. A result for a job that is not ours. */
        const char payload[] = "not the result you are looking for";
        void *blob;
        size_t blob_bytes;
        tb_blob_encode(payload, sizeof payload, 1, &blob, &blob_bytes, &err);
        tb_msg_init(&m, TB_CMD_RESULT);
        m.job_id = job ^ 1;
        m.attempt = attempt + 7;
        m.chunk_index = 0;
        m.chunk_count = 1;
        m.total_bytes = blob_bytes;
        m.chunk = blob;
        m.chunk_bytes = blob_bytes;
        s_send(c, &m);
        printf("step 4a: sent a RESULT for job %llu attempt %u, not leased to us\n",
               (unsigned long long)m.job_id, m.attempt);
        /* b. Our job, with a blob whose checksum does not match its bytes. */
        ((unsigned char *)blob)[16] ^= 0xff;
        m.job_id = job;
        m.attempt = attempt;
        s_send(c, &m);
        printf("step 4b: sent a RESULT for job %llu attempt %u with a wrong checksum\n",
               (unsigned long long)job, attempt);
        free(blob);
    }
    /* 5. Leave; let the coordinator read everything first. */
    zclock_sleep(300);
    tb_msg_init(&m, TB_CMD_DISCONNECT);
    m.code = TB_BYE_LEAVING;
    snprintf(m.text, sizeof m.text, "misbehaving client done");
    s_send(c, &m);
    printf("step 5: left\n");
    zsock_destroy(&a);
    zsock_destroy(&b);
    zsock_destroy(&c);
    return status;
}
