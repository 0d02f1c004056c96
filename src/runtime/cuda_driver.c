/* cuda_driver.c — CUDA through dlopen: the driver API (libcuda.so.1), its entry points
 * typed here (no CUDA headers or libraries at build time). The process opens the
 * driver, the first GPU's primary context and NVRTC once, and keeps them with every
 * kernel module it loaded until it exits: a second TL context costs no new CUDA
 * context and no kernel load. Each TL context has its own stream: its launches and
 * copies run in order there, and a copy to the host waits for them.
 * in: source, sizes, bytes; out: device buffers, results, errors with the reason. */
#include "runtime/cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash_mix.h"
#include "runtime/disk_entry.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct cu_opaque *CUhandle; /* contexts, modules, functions, streams, events */

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_ATTR_CC_MAJOR = 75,
  CU_ATTR_CC_MINOR = 76,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DISABLE_TIMING = 2,
  STAGE_BYTES = 4 << 20,   /* each half of a context's pinned staging buffer */
  STAGE_MIN = 256 << 10,   /* copies this large go through it */
};

#define TL_CU_FUNCTIONS(X)                                                                          \
  X(CUresult, cuInit, (unsigned))                                                                   \
  X(CUresult, cuDriverGetVersion, (int *))                                                          \
  X(CUresult, cuDeviceGetCount, (int *))                                                            \
  X(CUresult, cuDeviceGet, (CUdevice *, int))                                                       \
  X(CUresult, cuDeviceGetName, (char *, int, CUdevice))                                             \
  X(CUresult, cuDeviceGetAttribute, (int *, int, CUdevice))                                         \
  X(CUresult, cuDeviceTotalMem_v2, (size_t *, CUdevice))                                            \
  X(CUresult, cuDevicePrimaryCtxRetain, (CUhandle *, CUdevice))                                     \
  X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice))                                             \
  X(CUresult, cuCtxSetCurrent, (CUhandle))                                                          \
  X(CUresult, cuStreamCreate, (CUhandle *, unsigned))                                               \
  X(CUresult, cuStreamDestroy_v2, (CUhandle))                                                       \
  X(CUresult, cuStreamSynchronize, (CUhandle))                                                      \
  X(CUresult, cuEventCreate, (CUhandle *, unsigned))                                                \
  X(CUresult, cuEventDestroy_v2, (CUhandle))                                                        \
  X(CUresult, cuEventRecord, (CUhandle, CUhandle))                                                  \
  X(CUresult, cuEventSynchronize, (CUhandle))                                                       \
  X(CUresult, cuMemAlloc_v2, (CUdeviceptr *, size_t))                                               \
  X(CUresult, cuMemFree_v2, (CUdeviceptr))                                                          \
  X(CUresult, cuMemAllocHost_v2, (void **, size_t))                                                 \
  X(CUresult, cuMemFreeHost, (void *))                                                              \
  X(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, CUhandle))                  \
  X(CUresult, cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUhandle))                        \
  X(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUhandle))                   \
  X(CUresult, cuModuleLoadData, (CUhandle *, const void *))                                         \
  X(CUresult, cuModuleGetFunction, (CUhandle *, CUhandle, const char *))                            \
  X(CUresult, cuModuleUnload, (CUhandle))                                                           \
  X(CUresult, cuLaunchKernel,                                                                       \
    (CUhandle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUhandle, void **, void **)) \
  X(CUresult, cuGetErrorString, (CUresult, const char **))

#define TL_CU_FIELD(ret, name, args) ret(*name) args;
typedef struct {
  TL_CU_FUNCTIONS(TL_CU_FIELD)
} cu_api;

typedef struct cu_module {
  struct cu_module *next;
  uint64_t hash;
  char *source;
  CUhandle module, function;
} cu_module;

/* the process's: opened by the first tl_cuda_open, kept until exit */
typedef struct {
  pthread_mutex_t lock; /* opening, and the module list */
  bool open;
  void *lib;
  cu_api api;
  tl_nvrtc *nvrtc;
  CUdevice device;
  CUhandle context;
  int cc_major, cc_minor, driver_version, nvrtc_major, nvrtc_minor;
  char name[128];
  size_t total_mem;
  int max_threads, shared_bytes;
  cu_module *modules;
  char *cache_dir; /* kernels' code kept on disk (NULL: not kept) */
} cu_process;

static cu_process proc = {.lock = PTHREAD_MUTEX_INITIALIZER};
static _Thread_local CUhandle bound; /* the context current on this thread */

struct tl_cu_buf {
  CUdeviceptr ptr;
  size_t size;
};

struct tl_cuda {
  CUhandle stream;
  char *stage;          /* pinned host memory, two halves: large copies go through it */
  CUhandle staged[2];   /* each half's last copy */
  tl_cuda_stats stats;
};

/* ---- errors ---------------------------------------------------------------------------- */
static tl_status cu_fail(CUresult rc, const char *what, tl_error *err) {
  const char *why = NULL;
  if (proc.api.cuGetErrorString(rc, &why) != CUDA_SUCCESS || !why) why = "unknown error";
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of device memory %s", what);
  return tl_error_set(err, TL_ERR_BACKEND, "cuda: %s: %s (error %d)", what, why, rc);
}

/* driver calls go to the process's context, made current on each thread that calls */
static void bind(void) {
  if (bound != proc.context && proc.api.cuCtxSetCurrent(proc.context) == CUDA_SUCCESS) bound = proc.context;
}

/* ---- the process's GPU ----------------------------------------------------------------- */
static void close_process(void) {
  if (!proc.open) return;
  bind();
  for (cu_module *m = proc.modules, *next; m; m = next) {
    next = m->next;
    proc.api.cuModuleUnload(m->module);
    free(m->source);
    free(m);
  }
  proc.modules = NULL;
  proc.api.cuDevicePrimaryCtxRelease_v2(proc.device);
  tl_nvrtc_close(proc.nvrtc);
  free(proc.cache_dir);
  proc.open = false;
  /* libcuda stays loaded: its own exit handlers run after this one */
}

static tl_status unavailable(const char *why, tl_error *err) {
  if (proc.lib) dlclose(proc.lib);
  proc.lib = NULL;
  return tl_error_set(err, TL_ERR_BACKEND, "cuda: not available (%s)", why);
}

static void describe_device(void) {
  CUdevice d = proc.device;
  proc.api.cuDeviceGetName(proc.name, sizeof proc.name - 1, d);
  proc.api.cuDeviceGetAttribute(&proc.cc_major, CU_ATTR_CC_MAJOR, d);
  proc.api.cuDeviceGetAttribute(&proc.cc_minor, CU_ATTR_CC_MINOR, d);
  proc.api.cuDeviceGetAttribute(&proc.max_threads, CU_ATTR_MAX_THREADS_PER_BLOCK, d);
  proc.api.cuDeviceGetAttribute(&proc.shared_bytes, CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, d);
  proc.api.cuDeviceTotalMem_v2(&proc.total_mem, d);
}

static void open_disk_cache(void) {
  char *dir = NULL;
  tl_error e = {0};
  int repaired = 0;
  if (tl_entry_default_dir(&dir) == TL_OK && dir && tl_entry_check_private_dir(dir, "kernel cache directory", &repaired, &e) == TL_OK)
    proc.cache_dir = dir;
  else
    free(dir);
}

int tl_cuda_device_index(int count) {
  const char *e = getenv("TL_CUDA_DEVICE");
  if (e && *e) {
    long i = strtol(e, NULL, 10);
    return i >= 0 && i < count ? (int)i : 0;
  }
  /* ranks of one machine (mpirun, MPICH's hydra, MVAPICH, Slurm) on different GPUs:
   * NCCL needs one GPU per rank */
  static const char *const local[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                                      "SLURM_LOCALID"};
  for (size_t k = 0; k < sizeof local / sizeof local[0] && count > 0; k++)
    if ((e = getenv(local[k])) && *e) {
      long r = strtol(e, NULL, 10);
      return r >= 0 ? (int)(r % count) : 0;
    }
  return 0;
}

/* under proc.lock; a failure leaves nothing open, so a later call tries again */
static tl_status open_process(tl_error *err) {
  const char *lib = getenv("TL_CUDA_LIB");
  if (!(proc.lib = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL)))
    return unavailable("libcuda.so.1 not found: no NVIDIA driver", err);
#define TL_CU_LOAD(ret, name, args) \
  if (!(*(void **)&proc.api.name = dlsym(proc.lib, #name))) return unavailable("the driver lacks " #name ": too old", err);
  TL_CU_FUNCTIONS(TL_CU_LOAD)
#undef TL_CU_LOAD
  int count = 0;
  if (proc.api.cuInit(0) != CUDA_SUCCESS || proc.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1)
    return unavailable("no CUDA device", err);
  proc.api.cuDriverGetVersion(&proc.driver_version);
  if (proc.api.cuDeviceGet(&proc.device, tl_cuda_device_index(count)) != CUDA_SUCCESS ||
      proc.api.cuDevicePrimaryCtxRetain(&proc.context, proc.device) != CUDA_SUCCESS)
    return unavailable("the GPU's context cannot be made", err);
  tl_status st = tl_nvrtc_open(&proc.nvrtc, err);
  if (st) {
    proc.api.cuDevicePrimaryCtxRelease_v2(proc.device);
    dlclose(proc.lib);
    proc.lib = NULL;
    return st;
  }
  tl_nvrtc_version(proc.nvrtc, &proc.nvrtc_major, &proc.nvrtc_minor);
  describe_device();
  open_disk_cache();
  static bool registered;
  if (!registered) registered = atexit(close_process) == 0;
  proc.open = true;
  return TL_OK;
}

tl_status tl_cuda_open(tl_cuda **out, tl_error *err) {
  *out = NULL;
  pthread_mutex_lock(&proc.lock);
  tl_status st = proc.open ? TL_OK : open_process(err);
  pthread_mutex_unlock(&proc.lock);
  if (st) return st;
  tl_cuda *c = calloc(1, sizeof *c);
  if (!c) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  bind();
  CUresult rc = proc.api.cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING);
  if (rc != CUDA_SUCCESS) {
    free(c);
    return cu_fail(rc, "making a stream", err);
  }
  *out = c;
  return TL_OK;
}

uint64_t tl_cuda_close(tl_cuda *c) {
  if (!c) return 0;
  bind();
  proc.api.cuStreamSynchronize(c->stream);
  for (int i = 0; i < 2; i++)
    if (c->staged[i]) proc.api.cuEventDestroy_v2(c->staged[i]);
  if (c->stage) proc.api.cuMemFreeHost(c->stage);
  proc.api.cuStreamDestroy_v2(c->stream);
  uint64_t live = c->stats.live_buffers;
  free(c);
  return live;
}

void tl_cuda_describe(const tl_cuda *c, char *out, size_t cap, int *cc_major, int *cc_minor, int *max_threads,
                      size_t *shared_bytes) {
  (void)c;
  snprintf(out, cap, "%s, compute capability %d.%d, %.1f GiB, driver %d.%d, NVRTC %d.%d", proc.name, proc.cc_major,
           proc.cc_minor, (double)proc.total_mem / (1 << 30), proc.driver_version / 1000,
           proc.driver_version % 1000 / 10, proc.nvrtc_major, proc.nvrtc_minor);
  *cc_major = proc.cc_major, *cc_minor = proc.cc_minor, *max_threads = proc.max_threads;
  *shared_bytes = (size_t)proc.shared_bytes;
}

tl_cuda_stats tl_cuda_get_stats(const tl_cuda *c) { return c->stats; }

/* ---- memory ---------------------------------------------------------------------------- */
tl_status tl_cuda_alloc(tl_cuda *c, size_t bytes, tl_cu_buf **out, tl_error *err) {
  *out = NULL;
  tl_cu_buf *b = malloc(sizeof *b);
  if (!b) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  bind();
  CUresult rc = proc.api.cuMemAlloc_v2(&b->ptr, bytes ? bytes : 1);
  if (rc != CUDA_SUCCESS) {
    free(b);
    char what[64];
    snprintf(what, sizeof what, "for %zu bytes", bytes);
    return cu_fail(rc, what, err);
  }
  b->size = bytes;
  c->stats.live_buffers++;
  c->stats.allocs++;
  if ((c->stats.live_bytes += bytes) > c->stats.peak_bytes) c->stats.peak_bytes = c->stats.live_bytes;
  *out = b;
  return TL_OK;
}

/* the stream's kernels may still read b: they finish first */
void tl_cuda_free(tl_cuda *c, tl_cu_buf *b) {
  if (!b) return;
  bind();
  proc.api.cuStreamSynchronize(c->stream);
  proc.api.cuMemFree_v2(b->ptr);
  c->stats.live_buffers--;
  c->stats.live_bytes -= b->size;
  free(b);
}

size_t tl_cu_buf_size(const tl_cu_buf *b) { return b->size; }

static tl_status range(const tl_cu_buf *b, size_t off, size_t n, const char *what, tl_error *err) {
  if (off > b->size || n > b->size - off)
    return tl_error_set(err, TL_ERR_ARG, "cuda: %s of %zu bytes at %zu is outside a buffer of %zu", what, n, off, b->size);
  return TL_OK;
}

/* the pinned staging buffer and its two events, made when first needed (NULL: none,
 * and copies go straight from pageable memory) */
static char *stage_of(tl_cuda *c) {
  if (c->stage || getenv("TL_CUDA_NO_PINNED")) return c->stage;
  void *p = NULL;
  if (proc.api.cuMemAllocHost_v2(&p, 2 * (size_t)STAGE_BYTES) != CUDA_SUCCESS) return NULL;
  for (int i = 0; i < 2; i++)
    if (proc.api.cuEventCreate(&c->staged[i], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      for (int j = 0; j < i; j++) proc.api.cuEventDestroy_v2(c->staged[j]), c->staged[j] = NULL;
      proc.api.cuMemFreeHost(p);
      return NULL;
    }
  return c->stage = p;
}

/* host to device through the staging halves in turn: the host fills one while the
 * other's copy runs */
static CUresult write_staged(tl_cuda *c, CUdeviceptr dst, const char *src, size_t n) {
  CUresult rc = CUDA_SUCCESS;
  for (size_t done = 0, i = 0; done < n && rc == CUDA_SUCCESS; i ^= 1) {
    size_t part = n - done < STAGE_BYTES ? n - done : STAGE_BYTES;
    char *half = c->stage + i * STAGE_BYTES;
    if ((rc = proc.api.cuEventSynchronize(c->staged[i])) != CUDA_SUCCESS) break;
    memcpy(half, src + done, part);
    rc = proc.api.cuMemcpyHtoDAsync_v2(dst + done, half, part, c->stream);
    if (rc == CUDA_SUCCESS) rc = proc.api.cuEventRecord(c->staged[i], c->stream);
    done += part;
  }
  return rc;
}

/* device to host: the next half's copy is queued before the host takes this one's */
static CUresult read_staged(tl_cuda *c, char *dst, CUdeviceptr src, size_t n) {
  size_t parts = (n + STAGE_BYTES - 1) / STAGE_BYTES;
  CUresult rc = CUDA_SUCCESS;
  for (size_t p = 0; p < parts + 1 && rc == CUDA_SUCCESS; p++) {
    if (p < parts) { /* queue part p into half p % 2 */
      size_t off = p * STAGE_BYTES, part = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
      rc = proc.api.cuMemcpyDtoHAsync_v2(c->stage + (p % 2) * STAGE_BYTES, src + off, part, c->stream);
      if (rc == CUDA_SUCCESS) rc = proc.api.cuEventRecord(c->staged[p % 2], c->stream);
    }
    if (p > 0 && rc == CUDA_SUCCESS) { /* take part p - 1 */
      size_t q = p - 1, off = q * STAGE_BYTES, part = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
      if ((rc = proc.api.cuEventSynchronize(c->staged[q % 2])) == CUDA_SUCCESS)
        memcpy(dst + off, c->stage + (q % 2) * STAGE_BYTES, part);
    }
  }
  return rc;
}

tl_status tl_cuda_write(tl_cuda *c, tl_cu_buf *b, size_t off, const void *src, size_t n, tl_error *err) {
  tl_status st = range(b, off, n, "write", err);
  if (st || !n) return st;
  bind();
  /* from pageable memory the driver returns once it has taken the bytes: src may go */
  CUresult rc = n >= STAGE_MIN && stage_of(c) ? write_staged(c, b->ptr + off, src, n)
                                              : proc.api.cuMemcpyHtoDAsync_v2(b->ptr + off, src, n, c->stream);
  return rc ? cu_fail(rc, "writing a buffer", err) : TL_OK;
}

tl_status tl_cuda_read(tl_cuda *c, const tl_cu_buf *b, size_t off, void *dst, size_t n, tl_error *err) {
  tl_status st = range(b, off, n, "read", err);
  if (st || !n) return st;
  bind();
  CUresult rc = n >= STAGE_MIN && stage_of(c) ? read_staged(c, dst, b->ptr + off, n)
                                              : proc.api.cuMemcpyDtoHAsync_v2(dst, b->ptr + off, n, c->stream);
  if (rc == CUDA_SUCCESS) rc = proc.api.cuStreamSynchronize(c->stream);
  return rc ? cu_fail(rc, "reading a buffer", err) : TL_OK;
}

tl_status tl_cuda_copy(tl_cuda *c, const tl_cu_buf *src, size_t src_off, tl_cu_buf *dst, size_t dst_off, size_t n,
                       tl_error *err) {
  tl_status st = range(src, src_off, n, "copy from", err);
  if (!st) st = range(dst, dst_off, n, "copy to", err);
  if (st || !n) return st;
  bind();
  CUresult rc = proc.api.cuMemcpyDtoDAsync_v2(dst->ptr + dst_off, src->ptr + src_off, n, c->stream);
  return rc ? cu_fail(rc, "copying a buffer", err) : TL_OK;
}

/* ---- kernels --------------------------------------------------------------------------- */
/* src's machine code (a cubin where NVRTC makes one, else PTX): from the kernel cache
 * directory (keyed by the source, the GPU's compute capability, NVRTC's and the
 * driver's versions; checked as the C kernels' entries are), else compiled by NVRTC
 * and kept there, under the entry's lock */
static tl_status code_of(tl_cuda *c, const char *src, bool cubin, char **code, tl_error *err) {
  tl_hash128 h;
  uint64_t key[2];
  char v[96];
  snprintf(v, sizeof v, "%d.%d %d.%d %d %s", proc.cc_major, proc.cc_minor, proc.nvrtc_major, proc.nvrtc_minor,
           proc.driver_version, cubin ? "cubin" : "ptx");
  tl_hash128_init(&h);
  tl_hash128_str(&h, "tl-cuda-code-2");
  tl_hash128_str(&h, src);
  tl_hash128_str(&h, v);
  tl_hash128_final(&h, key);
  tl_blob_paths p;
  size_t len = 0;
  if (!proc.cache_dir || !tl_blob_paths_of(proc.cache_dir, key, cubin ? "cubin" : "ptx", &p))
    return tl_nvrtc_compile(proc.nvrtc, src, proc.cc_major, proc.cc_minor, cubin, code, &len, err);
  tl_entry_state why;
  int fd = -1;
  unsigned char *blob = tl_blob_read(&p, &len, &why);
  if (!blob) {
    fd = tl_entry_take_lock(p.lock);
    blob = tl_blob_read(&p, &len, &why); /* its builder held the lock */
  }
  tl_status st = TL_OK;
  if (blob && (*code = malloc(len + 1))) {
    memcpy(*code, blob, len);
    (*code)[len] = 0;
    c->stats.disk_hits++;
  } else if (!blob) {
    st = tl_nvrtc_compile(proc.nvrtc, src, proc.cc_major, proc.cc_minor, cubin, code, &len, err);
    if (!st) {
      c->stats.builds++;
      tl_blob_store(&p, *code, len);
    }
  } else {
    st = tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  }
  free(blob);
  tl_entry_drop_lock(fd);
  return st;
}

/* a module for src: its cubin, or its PTX where the driver refuses the cubin */
static tl_status load_module(tl_cuda *c, const char *src, CUhandle *module, tl_error *err) {
  char *code = NULL;
  CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
  tl_status st = TL_ERR_BACKEND;
  if (tl_nvrtc_has_cubin(proc.nvrtc) && !getenv("TL_CUDA_PTX") && !(st = code_of(c, src, true, &code, err)))
    rc = proc.api.cuModuleLoadData(module, code);
  free(code);
  if (rc == CUDA_SUCCESS) return TL_OK;
  if (st == TL_ERR_COMPILER || st == TL_ERR_NOMEM) return st;
  code = NULL;
  if ((st = code_of(c, src, false, &code, err))) return st;
  rc = proc.api.cuModuleLoadData(module, code);
  free(code);
  return rc == CUDA_SUCCESS ? TL_OK : cu_fail(rc, "loading a kernel's PTX", err);
}

static cu_module *find_module(uint64_t hash, const char *src) {
  for (cu_module *m = proc.modules; m; m = m->next)
    if (m->hash == hash && !strcmp(m->source, src)) return m;
  return NULL;
}

/* a new module for src, its function found */
static tl_status new_module(tl_cuda *c, const char *src, size_t len, uint64_t hash, cu_module **out, tl_error *err) {
  cu_module *m = calloc(1, sizeof *m);
  if (!m || !(m->source = malloc(len + 1))) {
    free(m);
    return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  }
  tl_status st = load_module(c, src, &m->module, err);
  CUresult rc = st ? CUDA_SUCCESS : proc.api.cuModuleGetFunction(&m->function, m->module, "tl_kernel");
  if (rc != CUDA_SUCCESS) {
    proc.api.cuModuleUnload(m->module);
    st = cu_fail(rc, "finding `tl_kernel` in the module", err);
  }
  if (st) {
    free(m->source);
    free(m);
    return st;
  }
  memcpy(m->source, src, len + 1);
  m->hash = hash;
  *out = m;
  return TL_OK;
}

tl_status tl_cuda_kernel(tl_cuda *c, const char *src, void **fn, tl_error *err) {
  *fn = NULL;
  size_t len = strlen(src);
  uint64_t hash = tl_hash_final(tl_hash_bytes(TL_HASH_INIT, src, len));
  pthread_mutex_lock(&proc.lock);
  bind();
  cu_module *m = find_module(hash, src);
  tl_status st = TL_OK;
  if (m) {
    c->stats.module_hits++;
  } else if (!(st = new_module(c, src, len, hash, &m, err))) { /* kept for the process */
    m->next = proc.modules;
    proc.modules = m;
  }
  if (!st) *fn = m->function;
  pthread_mutex_unlock(&proc.lock);
  return st;
}

tl_status tl_cuda_launch(tl_cuda *c, void *fn, int nargs, void **params, int dims, const size_t *global,
                         const size_t *local, tl_error *err) {
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  for (int d = 0; d < dims && d < 3; d++) {
    size_t l = local && local[d] ? local[d] : 1;
    if (global[d] == 0) return TL_OK; /* nothing to run */
    block[d] = (unsigned)l;
    grid[d] = (unsigned)((global[d] + l - 1) / l);
  }
  (void)nargs;
  bind();
  CUresult rc = proc.api.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, c->stream,
                                        params, NULL);
  return rc == CUDA_SUCCESS ? TL_OK : cu_fail(rc, "launching a kernel", err);
}

tl_status tl_cuda_finish(tl_cuda *c, tl_error *err) {
  bind();
  CUresult rc = proc.api.cuStreamSynchronize(c->stream);
  return rc == CUDA_SUCCESS ? TL_OK : cu_fail(rc, "waiting for the GPU", err);
}

const void *tl_cu_buf_handle(const tl_cu_buf *b) { return &b->ptr; }

void *tl_cuda_stream(tl_cuda *c) {
  bind();
  return c->stream;
}

uint64_t tl_cu_buf_address(const tl_cu_buf *b) { return b->ptr; }
