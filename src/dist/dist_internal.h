/* dist_internal.h — MPI as the rest of src/dist sees it (mpi_load.c): loaded at run
 * time, started when the process was launched by mpirun (or mpiexec, srun) and used by
 * the collectives of dist.c and dist_grads.c. Every MPI call goes through here, from the
 * thread that runs the program: the engine's worker threads never call MPI. */
#ifndef TL_DIST_INTERNAL_H
#define TL_DIST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

/* Starts MPI once (later calls return the first result): TL_OK alone too (rank 0 of 1,
 * MPI not loaded), or an error (a launcher says N > 1 ranks but no MPI library loads,
 * or MPI's size disagrees with the launcher's). */
tl_status tl_mpi_start(tl_error *err);
bool tl_mpi_running(void); /* MPI started, not finalized */
int tl_mpi_rank(void);     /* 0 when MPI is not running */
int tl_mpi_size(void);     /* 1 when MPI is not running */
/* "openmpi" or "mpich" and the library's path; "none" alone */
const char *tl_mpi_library(void);
/* the launcher's rank from its environment (-1 when not launched): for messages
 * written before MPI starts */
int tl_mpi_env_rank(void);

typedef enum { TL_MPI_SUM_OP, TL_MPI_MAX_OP } tl_mpi_op;

/* count elements of dtype; chunked below INT_MAX. in == NULL: in place on out. */
tl_status tl_mpi_allreduce(const void *in, void *out, int64_t count, tl_dtype dtype, tl_mpi_op op, tl_error *err);
tl_status tl_mpi_bcast(void *buf, int64_t count, tl_dtype dtype, int root, tl_error *err);
tl_status tl_mpi_barrier(tl_error *err);
/* a non-blocking sum (count < 2^31; in == NULL: in place on out): *req to wait on */
typedef struct { uintptr_t h; } tl_mpi_request;
tl_status tl_mpi_iallreduce_sum(const void *in, void *out, int count, tl_dtype dtype, tl_mpi_request *req,
                                tl_error *err);
tl_status tl_mpi_wait(tl_mpi_request *req, tl_error *err);
/* MPI_Abort(MPI_COMM_WORLD, code) when MPI runs; returns otherwise */
void tl_mpi_abort(int code);
double tl_mpi_wtime(void); /* seconds, MPI_Wtime or the monotonic clock */

/* NCCL (nccl_load.c), for cuda tensors: loaded at run time at the first use. */
bool tl_nccl_load(const char **why); /* opened (once), or false and *why */
int tl_nccl_version(void);           /* ncclGetVersion's (22809 for 2.28.9); 0 when not loaded */
/* loaded, and no communicator has failed: else false and *why */
bool tl_nccl_usable(const char **why);
bool tl_nccl_ready(void); /* the communicator is made */
/* The communicator over MPI's ranks, made once: every rank calls it at the same
 * collective, with the CUDA context current. A failure (on any rank: all learn it)
 * is kept, and tl_nccl_usable says so from then on. */
tl_status tl_nccl_comm_start(tl_error *err);
void tl_nccl_close(void); /* the communicator destroyed (MPI's finalize) */
/* device memory, queued on the CUDA stream `stream`; in == NULL: in place on out */
tl_status tl_nccl_allreduce(const void *in, void *out, int64_t count, tl_dtype dtype, tl_mpi_op op, void *stream,
                            tl_error *err);
tl_status tl_nccl_bcast(const void *in, void *out, int64_t count, tl_dtype dtype, int root, void *stream, tl_error *err);
extern const char *const tl_nccl_symbols[]; /* the functions TL resolves, NULL-ended (tests) */

#endif
