/* mpi_load.c — MPI found at run time (LANGUAGE.md §13, docs/distributed.md).
 *
 * One tl binary runs alone without MPI installed and as N ranks under mpirun: a
 * launcher is recognised by its environment (OMPI_COMM_WORLD_SIZE from OpenMPI's
 * mpirun, PMI_SIZE from MPICH's hydra and Slurm, MV2_COMM_WORLD_SIZE from MVAPICH),
 * and only then is the library opened: TL_MPI_LIB if set, else libmpi.so.40 (OpenMPI),
 * else libmpi.so.12 (MPICH's ABI). The two families spell handles differently
 * (mpi_abi.h): each call below casts its function pointer to the family's signature.
 * MPI starts with MPI_THREAD_SERIALIZED asked (FUNNELED at least: only the program's
 * thread calls MPI, the engine's workers never do) and is finalized at exit. */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist.h"
#include "dist/dist_internal.h"
#include "dist/mpi_abi.h"

typedef int (*fn_init_thread)(int *, char ***, int, int *);
typedef int (*fn_void)(void);
typedef int (*fn_flag)(int *);
typedef double (*fn_wtime)(void);

static struct {
  bool tried, running, mpich;
  tl_status st;
  char msg[1024];
  int rank, size;
  void *lib;
  char lib_name[300];
  uintptr_t h[TL_MPI_NHANDLES];
  void *in_place, *status_ignore;
  fn_init_thread init_thread;
  fn_void finalize;
  fn_flag initialized, finalized;
  fn_wtime wtime;
  void *comm_rank, *comm_size, *allreduce, *iallreduce, *bcast, *barrier, *abort, *wait;
} M = {.rank = 0, .size = 1};

/* the launcher's world size from its environment: 0 when not launched */
static int env_size(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) {
      long n = strtol(v, NULL, 10);
      return n > 0 && n < INT_MAX ? (int)n : 0;
    }
  }
  return 0;
}

int tl_mpi_env_rank(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return (int)strtol(v, NULL, 10);
  }
  return -1;
}

/* the start failed: kept, so every later call reports the same */
static tl_status fail(tl_error *err, const char *fmt, ...) TL_PRINTF(2, 3);
static tl_status fail(tl_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(M.msg, sizeof M.msg, fmt, ap);
  va_end(ap);
  M.st = TL_ERR_BACKEND;
  return tl_error_set(err, M.st, "%s", M.msg);
}

static void *sym(const char *name, bool *missing) {
  void *p = dlsym(M.lib, name);
  if (!p) *missing = true;
  return p;
}

/* opens the library and finds what TL calls; false when it is no MPI TL knows */
static bool open_library(const char *name) {
  M.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL); /* OpenMPI's plugins need its symbols global */
  if (!M.lib) return false;
  snprintf(M.lib_name, sizeof M.lib_name, "%s", name);
  bool missing = false;
  M.init_thread = (fn_init_thread)sym("MPI_Init_thread", &missing);
  M.finalize = (fn_void)sym("MPI_Finalize", &missing);
  M.initialized = (fn_flag)sym("MPI_Initialized", &missing);
  M.finalized = (fn_flag)sym("MPI_Finalized", &missing);
  M.wtime = (fn_wtime)sym("MPI_Wtime", &missing);
  M.comm_rank = sym("MPI_Comm_rank", &missing);
  M.comm_size = sym("MPI_Comm_size", &missing);
  M.allreduce = sym("MPI_Allreduce", &missing);
  M.iallreduce = sym("MPI_Iallreduce", &missing);
  M.bcast = sym("MPI_Bcast", &missing);
  M.barrier = sym("MPI_Barrier", &missing);
  M.abort = sym("MPI_Abort", &missing);
  M.wait = sym("MPI_Wait", &missing);
  M.mpich = !dlsym(M.lib, tl_mpi_handle_rows[TL_MPI_COMM_WORLD].ompi_symbol);
  for (int i = 0; i < TL_MPI_NHANDLES && !missing; i++)
    M.h[i] = M.mpich ? (uintptr_t)tl_mpi_handle_rows[i].mpich_value
                     : (uintptr_t)sym(tl_mpi_handle_rows[i].ompi_symbol, &missing);
  M.in_place = M.mpich ? TL_MPICH_IN_PLACE : TL_OMPI_IN_PLACE;
  M.status_ignore = M.mpich ? TL_MPICH_STATUS_IGNORE : TL_OMPI_STATUS_IGNORE;
  return !missing;
}

/* The handles' C types differ by family: MPICH's are int, OpenMPI's pointers. */
static int call_comm_int(void *fn, int *out) {
  if (M.mpich) return ((int (*)(int, int *))fn)((int)M.h[TL_MPI_COMM_WORLD], out);
  return ((int (*)(void *, int *))fn)((void *)M.h[TL_MPI_COMM_WORLD], out);
}

static void finalize_at_exit(void) {
  if (!M.running) return;
  tl_error e = {0};
  if (!tl_dist_exit_agrees(&e)) { /* another rank waits in a collective: end the job, not hang */
    fprintf(stderr, "rank %d: %s\n", M.rank, e.msg);
    fflush(stderr);
    tl_mpi_abort(1);
  }
  tl_nccl_close(); /* it was made over MPI: it goes first */
  int done = 0;
  M.finalized(&done);
  if (!done) M.finalize();
  M.running = false;
}

tl_status tl_mpi_start(tl_error *err) {
  if (M.tried) return M.st ? tl_error_set(err, M.st, "%s", M.msg) : TL_OK;
  M.tried = true;
  int want = env_size();
  if (!want) return TL_OK; /* not launched: one process, MPI never loaded */
  const char *env = getenv("TL_MPI_LIB");
  bool ok = env && *env ? open_library(env) : open_library("libmpi.so.40") || open_library("libmpi.so.12");
  if (!ok) {
    const char *why = M.lib ? "it lacks MPI functions TL calls" : dlerror();
    if (M.lib) dlclose(M.lib);
    M.lib = NULL;
    if (want == 1) return TL_OK; /* mpirun -np 1 on a machine without the library: alone */
    return fail(err, "launched as %d ranks, but MPI could not be loaded (%s): install OpenMPI or MPICH, or set TL_MPI_LIB",
                want, why ? why : env);
  }
  int already = 0, provided = 0;
  M.initialized(&already);
  if (!already && M.init_thread(NULL, NULL, TL_MPI_THREAD_SERIALIZED, &provided) != TL_MPI_SUCCESS)
    return fail(err, "MPI_Init_thread failed (%s)", M.lib_name);
  if (!already && provided < TL_MPI_THREAD_FUNNELED)
    return fail(err, "%s gives no MPI_THREAD_FUNNELED support", M.lib_name);
  M.running = true;
  if (!already) atexit(finalize_at_exit);
  call_comm_int(M.comm_rank, &M.rank);
  call_comm_int(M.comm_size, &M.size);
  if (M.size != want)
    return fail(err, "the launcher started %d ranks but %s says %d: is it the launcher of this MPI library?", want,
                M.lib_name, M.size);
  return TL_OK;
}

bool tl_mpi_running(void) { return M.running; }
int tl_mpi_rank(void) { return M.running ? M.rank : 0; }
int tl_mpi_size(void) { return M.running ? M.size : 1; }

const char *tl_mpi_library(void) {
  static char buf[340];
  if (!M.running) return "none";
  snprintf(buf, sizeof buf, "%s (%s)", M.mpich ? "mpich" : "openmpi", M.lib_name);
  return buf;
}

static uintptr_t mpi_type(tl_dtype dt) {
  switch (dt) {
  case TL_BOOL: return M.h[TL_MPI_UNSIGNED_CHAR];
  case TL_I32: return M.h[TL_MPI_INT32];
  case TL_I64: return M.h[TL_MPI_INT64];
  case TL_F64: return M.h[TL_MPI_DOUBLE];
  default: return M.h[TL_MPI_FLOAT];
  }
}

static tl_status mpi_failed(tl_error *err, const char *call, int rc) {
  return tl_error_set(err, TL_ERR_BACKEND, "%s failed (MPI error %d)", call, rc);
}

tl_status tl_mpi_allreduce(const void *in, void *out, int64_t count, tl_dtype dtype, tl_mpi_op op, tl_error *err) {
  if (!M.running) return TL_OK;
  size_t es = tl_dtype_size(dtype);
  uintptr_t t = mpi_type(dtype), o = M.h[op == TL_MPI_MAX_OP ? TL_MPI_OP_MAX : TL_MPI_OP_SUM];
  for (int64_t at = 0; at < count;) {
    int n = (int)(count - at < (1 << 30) ? count - at : (1 << 30));
    const void *src = in ? (const char *)in + at * es : M.in_place;
    void *dst = (char *)out + at * es;
    int rc = M.mpich ? ((int (*)(const void *, void *, int, int, int, int))M.allreduce)(
                           src, dst, n, (int)t, (int)o, (int)M.h[TL_MPI_COMM_WORLD])
                     : ((int (*)(const void *, void *, int, void *, void *, void *))M.allreduce)(
                           src, dst, n, (void *)t, (void *)o, (void *)M.h[TL_MPI_COMM_WORLD]);
    if (rc != TL_MPI_SUCCESS) return mpi_failed(err, "MPI_Allreduce", rc);
    at += n;
  }
  return TL_OK;
}

tl_status tl_mpi_bcast(void *buf, int64_t count, tl_dtype dtype, int root, tl_error *err) {
  if (!M.running) return TL_OK;
  size_t es = tl_dtype_size(dtype);
  uintptr_t t = mpi_type(dtype);
  if (dtype > TL_F64) { /* the dtypes with no MPI type here travel as bytes: a copy is bitwise */
    count *= (int64_t)es;
    es = 1;
    t = M.h[TL_MPI_UNSIGNED_CHAR];
  }
  for (int64_t at = 0; at < count;) {
    int n = (int)(count - at < (1 << 30) ? count - at : (1 << 30));
    void *p = (char *)buf + at * es;
    int rc = M.mpich ? ((int (*)(void *, int, int, int, int))M.bcast)(p, n, (int)t, root, (int)M.h[TL_MPI_COMM_WORLD])
                     : ((int (*)(void *, int, void *, int, void *))M.bcast)(p, n, (void *)t, root,
                                                                         (void *)M.h[TL_MPI_COMM_WORLD]);
    if (rc != TL_MPI_SUCCESS) return mpi_failed(err, "MPI_Bcast", rc);
    at += n;
  }
  return TL_OK;
}

tl_status tl_mpi_barrier(tl_error *err) {
  if (!M.running) return TL_OK;
  int rc = M.mpich ? ((int (*)(int))M.barrier)((int)M.h[TL_MPI_COMM_WORLD])
                   : ((int (*)(void *))M.barrier)((void *)M.h[TL_MPI_COMM_WORLD]);
  return rc == TL_MPI_SUCCESS ? TL_OK : mpi_failed(err, "MPI_Barrier", rc);
}

tl_status tl_mpi_iallreduce_sum(const void *in, void *out, int count, tl_dtype dtype, tl_mpi_request *req,
                                tl_error *err) {
  req->h = 0;
  if (!M.running) return TL_OK;
  uintptr_t t = mpi_type(dtype), o = M.h[TL_MPI_OP_SUM];
  int rc;
  if (M.mpich) {
    int r = 0;
    rc = ((int (*)(const void *, void *, int, int, int, int, int *))M.iallreduce)(in ? in : M.in_place, out, count, (int)t,
                                                                               (int)o, (int)M.h[TL_MPI_COMM_WORLD], &r);
    req->h = (uintptr_t)(unsigned)r;
  } else {
    void *r = NULL;
    rc = ((int (*)(const void *, void *, int, void *, void *, void *, void **))M.iallreduce)(
        in ? in : M.in_place, out, count, (void *)t, (void *)o, (void *)M.h[TL_MPI_COMM_WORLD], &r);
    req->h = (uintptr_t)r;
  }
  return rc == TL_MPI_SUCCESS ? TL_OK : mpi_failed(err, "MPI_Iallreduce", rc);
}

tl_status tl_mpi_wait(tl_mpi_request *req, tl_error *err) {
  if (!M.running) return TL_OK;
  int rc;
  if (M.mpich) {
    int r = (int)req->h;
    rc = ((int (*)(int *, void *))M.wait)(&r, M.status_ignore);
    req->h = (uintptr_t)(unsigned)r;
  } else {
    void *r = (void *)req->h;
    rc = ((int (*)(void **, void *))M.wait)(&r, M.status_ignore);
    req->h = (uintptr_t)r;
  }
  return rc == TL_MPI_SUCCESS ? TL_OK : mpi_failed(err, "MPI_Wait", rc);
}

void tl_mpi_abort(int code) {
  if (!M.running) return;
  if (M.mpich) ((int (*)(int, int))M.abort)((int)M.h[TL_MPI_COMM_WORLD], code);
  else ((int (*)(void *, int))M.abort)((void *)M.h[TL_MPI_COMM_WORLD], code);
}

double tl_mpi_wtime(void) {
  if (M.running) return M.wtime();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
