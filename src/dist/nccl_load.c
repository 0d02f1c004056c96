/* nccl_load.c — NCCL found at run time, for the collectives of cuda tensors
 * (docs/distributed.md): like MPI (mpi_load.c), no build-time dependency, and a tl
 * binary without NCCL (or without CUDA) stages device tensors through host memory.
 *
 * The library is opened at the first collective of a cuda tensor: TL_NCCL_LIB if set,
 * else libnccl.so.2 (the CUDA toolkit's, or a wheel's on LD_LIBRARY_PATH). Its ABI is
 * plain C and stable since 2.x (nccl_abi.h).
 *
 * The communicator is made once, at the first collective whose ranks all chose NCCL
 * (so every rank is here): rank 0 asks for a unique id, MPI broadcasts it, each rank
 * joins with ncclCommInitRank on its current CUDA context (the cuda backend's, bound
 * by the caller), and an MPI all-reduce says whether every rank succeeded. A failure
 * anywhere is known everywhere and turns NCCL off for the rest of the run (the
 * collectives stage through host memory); the communicator goes at MPI's finalize. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"
#include "dist/nccl_abi.h"

#define TL_NCCL_FIELD(ret, name, args) ret(*name) args;
static struct {
  bool tried, loaded, comm_tried, comm_ok;
  void *lib;
  int version;
  char why[400]; /* why not loaded, or why the communicator failed */
  tl_nccl_comm_t comm;
  struct {
    TL_NCCL_FUNCTIONS(TL_NCCL_FIELD)
  } f;
} N;
#undef TL_NCCL_FIELD

const char *const tl_nccl_symbols[] = {
#define TL_NCCL_NAME(ret, name, args) #name,
    TL_NCCL_FUNCTIONS(TL_NCCL_NAME)
#undef TL_NCCL_NAME
        NULL};

static bool load(void) {
  const char *env = getenv("TL_NCCL_LIB");
  const char *name = env && *env ? env : "libnccl.so.2";
  if (!(N.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
    const char *e = dlerror();
    snprintf(N.why, sizeof N.why, "%s could not be loaded (%s)", name, e ? e : "not found");
    return false;
  }
#define TL_NCCL_LOAD(ret, fn, args)                                                       \
  if (!(*(void **)&N.f.fn = dlsym(N.lib, #fn))) {                                         \
    snprintf(N.why, sizeof N.why, "%s lacks " #fn ": not an NCCL 2 TL can use", name);    \
    return false;                                                                         \
  }
  TL_NCCL_FUNCTIONS(TL_NCCL_LOAD)
#undef TL_NCCL_LOAD
  if (N.f.ncclGetVersion(&N.version) != TL_NCCL_SUCCESS || tl_nccl_major(N.version) != 2) {
    snprintf(N.why, sizeof N.why, "%s: version %d is not NCCL 2", name, N.version);
    return false;
  }
  return true;
}

bool tl_nccl_load(const char **why) {
  if (!N.tried) {
    N.tried = true;
    N.loaded = load();
    if (!N.loaded && N.lib) dlclose(N.lib);
    if (!N.loaded) N.lib = NULL;
  }
  if (why) *why = N.loaded ? NULL : N.why;
  return N.loaded;
}

int tl_nccl_version(void) { return N.loaded ? N.version : 0; }

bool tl_nccl_usable(const char **why) {
  if (!tl_nccl_load(why)) return false;
  if (N.comm_tried && !N.comm_ok) {
    if (why) *why = N.why;
    return false;
  }
  return true;
}

bool tl_nccl_ready(void) { return N.comm_ok; }

static const char *nccl_error(int rc) {
  const char *s = N.f.ncclGetErrorString ? N.f.ncclGetErrorString(rc) : NULL;
  return s ? s : "unknown error";
}

static tl_status comm_failed(tl_error *err) {
  /* said once: the run goes on, slower, and its user should know why */
  fprintf(stderr, "tl: rank %d: %s: cuda tensors' collectives go through host memory\n", tl_mpi_rank(), N.why);
  return tl_error_set(err, TL_ERR_BACKEND, "%s", N.why);
}

tl_status tl_nccl_comm_start(tl_error *err) {
  if (N.comm_tried)
    return N.comm_ok ? TL_OK : tl_error_set(err, TL_ERR_BACKEND, "%s", N.why);
  N.comm_tried = true;
  if (!N.loaded) return tl_error_set(err, TL_ERR_BACKEND, "NCCL is not loaded");
  /* the id and rank 0's status: one broadcast, so a failure there is everyone's */
  unsigned char msg[TL_NCCL_ID_BYTES + 4] = {0};
  int rc = TL_NCCL_SUCCESS;
  if (tl_mpi_rank() == 0 && (rc = N.f.ncclGetUniqueId((tl_nccl_id *)msg)) != TL_NCCL_SUCCESS) msg[TL_NCCL_ID_BYTES] = 1;
  tl_status st = tl_mpi_bcast(msg, sizeof msg, TL_BOOL, 0, err);
  if (st) return st;
  if (msg[TL_NCCL_ID_BYTES]) {
    snprintf(N.why, sizeof N.why, "NCCL's communicator could not be made (rank 0: ncclGetUniqueId: %s)",
             tl_mpi_rank() == 0 ? nccl_error(rc) : "failed");
    return comm_failed(err);
  }
  tl_nccl_id id;
  memcpy(&id, msg, sizeof id);
  rc = N.f.ncclCommInitRank(&N.comm, tl_mpi_size(), id, tl_mpi_rank());
  int64_t failed[2] = {rc != TL_NCCL_SUCCESS, rc != TL_NCCL_SUCCESS ? tl_mpi_rank() : -1};
  st = tl_mpi_allreduce(NULL, failed, 2, TL_I64, TL_MPI_MAX_OP, err);
  if (st) return st;
  if (!failed[0]) {
    N.comm_ok = true;
    return TL_OK;
  }
  if (rc == TL_NCCL_SUCCESS) N.f.ncclCommAbort(N.comm);
  N.comm = NULL;
  if (rc != TL_NCCL_SUCCESS)
    snprintf(N.why, sizeof N.why, "NCCL's communicator could not be made (rank %d: ncclCommInitRank: %s)",
             tl_mpi_rank(), nccl_error(rc));
  else
    snprintf(N.why, sizeof N.why, "NCCL's communicator could not be made (rank %lld: ncclCommInitRank failed)",
             (long long)failed[1]);
  return comm_failed(err);
}

void tl_nccl_close(void) {
  if (N.comm_ok) N.f.ncclCommDestroy(N.comm);
  N.comm = NULL;
  N.comm_ok = false;
  /* the library stays loaded: its threads and exit handlers may still run */
}

/* NCCL's type for one of the first five TL dtypes (bool is uint8: its sum is an "or",
 * NCCL's max); the later dtypes are broadcast as bytes and not reduced (dist.c) */
static int nccl_type(tl_dtype dt) {
  switch (dt) {
  case TL_BOOL: return TL_NCCL_UINT8;
  case TL_I32: return TL_NCCL_INT32;
  case TL_I64: return TL_NCCL_INT64;
  case TL_F64: return TL_NCCL_FLOAT64;
  default: return TL_NCCL_FLOAT32;
  }
}

static tl_status nccl_failed(tl_error *err, const char *call, int rc) {
  return tl_error_set(err, TL_ERR_BACKEND, "%s failed (NCCL error %d: %s)", call, rc, nccl_error(rc));
}

tl_status tl_nccl_allreduce(const void *in, void *out, int64_t count, tl_dtype dtype, tl_mpi_op op, void *stream,
                            tl_error *err) {
  if (!N.comm_ok) return tl_error_set(err, TL_ERR_INTERNAL, "ncclAllReduce without a communicator");
  if (count <= 0) return TL_OK;
  int rc = N.f.ncclAllReduce(in ? in : out, out, (size_t)count, nccl_type(dtype), op == TL_MPI_MAX_OP ? TL_NCCL_MAX : TL_NCCL_SUM,
                             N.comm, stream);
  return rc == TL_NCCL_SUCCESS ? TL_OK : nccl_failed(err, "ncclAllReduce", rc);
}

tl_status tl_nccl_bcast(const void *in, void *out, int64_t count, tl_dtype dtype, int root, void *stream, tl_error *err) {
  if (!N.comm_ok) return tl_error_set(err, TL_ERR_INTERNAL, "ncclBroadcast without a communicator");
  if (count <= 0) return TL_OK;
  bool bytes = dtype > TL_F64; /* as bytes, as tl_mpi_bcast */
  int rc = N.f.ncclBroadcast(in, out, (size_t)count * (bytes ? tl_dtype_size(dtype) : 1), bytes ? TL_NCCL_UINT8 : nccl_type(dtype),
                             root, N.comm, stream);
  return rc == TL_NCCL_SUCCESS ? TL_OK : nccl_failed(err, "ncclBroadcast", rc);
}
