/* Local workers: terrain-worker processes started by the coordinator on its own machine, connected
 * over ipc:// through a socket in a private directory, and stopped again whatever happens.
 *
 * The directory is made by mkdtemp under $TMPDIR (or /tmp), so it is mode 0700 and no other user
 * can reach the socket. Each child is started with fork + execv and asks the kernel for SIGTERM
 * when the coordinator dies (PR_SET_PDEATHSIG), so even a coordinator killed with SIGKILL leaves no
 * worker behind; stopping waits for the children to leave, then sends SIGTERM and finally SIGKILL,
 * and reaps every one. Destroying removes the socket file and the directory; a directory left by a
 * coordinator killed with SIGKILL is swept by the next one (it records its owner's pid). No signal
 * handler is installed here.
 *
 * Identity: each child gets a fresh random routing id in its environment (TB_PROTO_ROUTING_ENV of
 * proto.h, which terrain-worker sets on its socket before it connects), so the coordinator knows
 * its own helpers by their connection, never by the name they declare: a peer that says READY under
 * a helper's name cannot pass for it (docs/distribution.md, "Worker identity").
 */
#ifndef TB_LOCAL_WORKERS_H
#define TB_LOCAL_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

typedef struct tb_local_workers_t tb_local_workers_t;

/* Makes the private directory; `program` is the terrain-worker executable (NULL:
 * $TB_WORKER_PROGRAM, else terrain-worker beside this executable, else terrain-worker on $PATH). */
tb_local_workers_t *tb_local_workers_new(const char *program, tb_err_t *err);

/* Stops every child still running (grace_s to leave on their own, then SIGTERM, then SIGKILL),
 * removes the socket and the directory; accepts NULL and sets *self_p to NULL. */
void tb_local_workers_destroy(tb_local_workers_t **self_p);

/* "ipc://<dir>/coord.sock": where the coordinator binds for its local workers. */
const char *tb_local_workers_endpoint(const tb_local_workers_t *self);

/* The private directory. */
const char *tb_local_workers_dir(const tb_local_workers_t *self);

/* Starts one worker: `terrain-worker --connect <endpoint> --name <name> <args...>` (args is a
 * NULL-terminated list). Returns its slot (>= 0), or -1 with *err set. */
int tb_local_workers_spawn(tb_local_workers_t *self, const char *name, const char *const *args,
                           tb_err_t *err);

/* Reaps one child that has exited, without blocking: returns its slot and fills *status (as from
 * waitpid), or -1 when none has. */
int tb_local_workers_reap(tb_local_workers_t *self, int *status);

/* The number of slots ever spawned, and of children still running. */
int tb_local_workers_count(const tb_local_workers_t *self);
int tb_local_workers_running(const tb_local_workers_t *self);

/* A slot's process id (0 after it was reaped) and name; the slot whose name matches, or -1. */
pid_t tb_local_workers_pid(const tb_local_workers_t *self, int slot);
const char *tb_local_workers_name(const tb_local_workers_t *self, int slot);
int tb_local_workers_find(const tb_local_workers_t *self, const char *name);

/* Whether the child of slot `name` was handed exactly this routing id (the frame a ROUTER gives for
 * its connection). False for NULL self. */
bool tb_local_workers_owns(const tb_local_workers_t *self, const char *name, const void *routing_id,
                           size_t bytes);

/* Whether `name` has the form of a local helper's name ("local-" and digits): such names belong to
 * the coordinator's helpers alone. */
bool tb_local_workers_reserved(const char *name);

/* Stops every running child as destroy does, but keeps the directory. */
void tb_local_workers_stop(tb_local_workers_t *self, double grace_s);

#endif
