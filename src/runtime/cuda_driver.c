/* cuda_driver.c — CUDA through dlopen: the driver API (libcuda.so.1) and NVRTC
 * (libnvrtc.so), their entry points typed here (no CUDA headers or libraries at build
 * time), the first GPU's primary context, its memory, kernels compiled from CUDA C to
 * PTX by NVRTC and loaded as modules (once per process), launches on the legacy
 * default stream (in order; a copy to the host waits for them).
 * in: source, sizes, bytes; out: device buffers, results, errors with the reason. */
#include "runtime/cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash_mix.h"
#include "runtime/disk_entry.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct cu_opaque *CUhandle; /* contexts, modules, functions, streams */
typedef int nvrtcResult;
typedef struct nvrtc_opaque *nvrtcProgram;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_ATTR_CC_MAJOR = 75,
  CU_ATTR_CC_MINOR = 76,
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
  X(CUresult, cuCtxSynchronize, (void))                                                             \
  X(CUresult, cuMemAlloc_v2, (CUdeviceptr *, size_t))                                               \
  X(CUresult, cuMemFree_v2, (CUdeviceptr))                                                          \
  X(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                                 \
  X(CUresult, cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                                       \
  X(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t))                                  \
  X(CUresult, cuModuleLoadData, (CUhandle *, const void *))                                         \
  X(CUresult, cuModuleGetFunction, (CUhandle *, CUhandle, const char *))                            \
  X(CUresult, cuModuleUnload, (CUhandle))                                                           \
  X(CUresult, cuLaunchKernel,                                                                       \
    (CUhandle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUhandle, void **, void **)) \
  X(CUresult, cuGetErrorString, (CUresult, const char **))

#define TL_NVRTC_FUNCTIONS(X)                                                                       \
  X(nvrtcResult, nvrtcVersion, (int *, int *))                                                      \
  X(nvrtcResult, nvrtcCreateProgram,                                                                \
    (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *))    \
  X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram, int, const char *const *))                     \
  X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram, size_t *))                                  \
  X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram, char *))                                        \
  X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram, size_t *))                                         \
  X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram, char *))                                               \
  X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *))                                             \
  X(const char *, nvrtcGetErrorString, (nvrtcResult))

#define TL_CU_FIELD(ret, name, args) ret(*name) args;
typedef struct {
  TL_CU_FUNCTIONS(TL_CU_FIELD)
} cu_api;
typedef struct {
  TL_NVRTC_FUNCTIONS(TL_CU_FIELD)
} nvrtc_api;

typedef struct cu_module {
  struct cu_module *next;
  uint64_t hash;
  char *source;
  CUhandle module, function;
} cu_module;

struct tl_cu_buf {
  CUdeviceptr ptr;
  size_t size;
};

struct tl_cuda {
  void *lib;
  cu_api api;
  tl_nvrtc *nvrtc;
  CUdevice device;
  CUhandle context;
  int cc_major, cc_minor, driver_version;
  tl_cuda_stats stats;
  char name[128];
  size_t total_mem;
  int max_threads, shared_bytes;
  cu_module *modules;
  char *cache_dir; /* PTX kept on disk (NULL: not kept) */
};

struct tl_nvrtc {
  void *lib;
  nvrtc_api api;
  int major, minor;
};

/* ---- NVRTC ---------------------------------------------------------------------------- */
static void *open_nvrtc_lib(void) {
  const char *own = getenv("TL_NVRTC");
  if (own && *own) return dlopen(own, RTLD_NOW | RTLD_LOCAL);
  static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

tl_status tl_nvrtc_open(tl_nvrtc **out, tl_error *err) {
  *out = NULL;
  tl_nvrtc *n = calloc(1, sizeof *n);
  if (!n) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  if (!(n->lib = open_nvrtc_lib())) {
    free(n);
    return tl_error_set(err, TL_ERR_BACKEND,
                        "cuda: not available (NVRTC not found: install the CUDA toolkit's libnvrtc, or set TL_NVRTC)");
  }
#define TL_NVRTC_LOAD(ret, name, args)                                                                  \
  if (!(*(void **)&n->api.name = dlsym(n->lib, #name))) {                                               \
    dlclose(n->lib);                                                                                    \
    free(n);                                                                                            \
    return tl_error_set(err, TL_ERR_BACKEND, "cuda: not available (NVRTC lacks %s: too old)", #name);   \
  }
  TL_NVRTC_FUNCTIONS(TL_NVRTC_LOAD)
#undef TL_NVRTC_LOAD
  n->api.nvrtcVersion(&n->major, &n->minor);
  *out = n;
  return TL_OK;
}

/* The library stays loaded (each open takes one more reference of the loader's): NVRTC
 * keeps C++ runtime state in its static data, which unloading would strand. */
void tl_nvrtc_close(tl_nvrtc *n) { free(n); }

/* the compiler's log, its first lines, into the error (a kernel's source is long) */
static tl_status compile_failed(tl_nvrtc *n, nvrtcProgram p, nvrtcResult rc, tl_error *err) {
  size_t len = 0;
  char *log = NULL;
  if (n->api.nvrtcGetProgramLogSize(p, &len) == 0 && len > 1 && (log = malloc(len)) &&
      n->api.nvrtcGetProgramLog(p, log) == 0)
    log[len - 1] = 0;
  tl_status st = tl_error_set(err, TL_ERR_COMPILER, "cuda: the kernel did not compile (%s):\n%.1500s",
                              n->api.nvrtcGetErrorString(rc), log ? log : "(no log)");
  free(log);
  return st;
}

tl_status tl_nvrtc_ptx(tl_nvrtc *n, const char *src, int cc_major, int cc_minor, char **ptx, tl_error *err) {
  *ptx = NULL;
  char arch[48];
  snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", cc_major, cc_minor);
  /* -default-device: the prelude's functions are the device's; --fmad=false: each
   * operation rounded on its own, as on the host */
  const char *opts[] = {arch, "-default-device", "--fmad=false", "-w"};
  nvrtcProgram p = NULL;
  nvrtcResult rc = n->api.nvrtcCreateProgram(&p, src, "tl_kernel.cu", 0, NULL, NULL);
  if (rc) return tl_error_set(err, TL_ERR_COMPILER, "cuda: NVRTC: %s", n->api.nvrtcGetErrorString(rc));
  rc = n->api.nvrtcCompileProgram(p, (int)(sizeof opts / sizeof opts[0]), opts);
  tl_status st = rc ? compile_failed(n, p, rc, err) : TL_OK;
  size_t len = 0;
  if (!st && (rc = n->api.nvrtcGetPTXSize(p, &len)) == 0 && !(*ptx = malloc(len + 1)))
    st = tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  if (!st && !rc && (rc = n->api.nvrtcGetPTX(p, *ptx)) == 0) (*ptx)[len] = 0;
  if (!st && rc) st = tl_error_set(err, TL_ERR_COMPILER, "cuda: NVRTC: %s", n->api.nvrtcGetErrorString(rc));
  if (st) {
    free(*ptx);
    *ptx = NULL;
  }
  n->api.nvrtcDestroyProgram(&p);
  return st;
}

/* ---- the driver ------------------------------------------------------------------------ */
static tl_status cu_fail(tl_cuda *c, CUresult rc, const char *what, tl_error *err) {
  const char *why = NULL;
  if (c->api.cuGetErrorString(rc, &why) != CUDA_SUCCESS || !why) why = "unknown error";
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of device memory %s", what);
  return tl_error_set(err, TL_ERR_BACKEND, "cuda: %s: %s (error %d)", what, why, rc);
}

static tl_status unavailable(tl_cuda *c, const char *why, tl_error *err) {
  tl_cuda_close(c);
  return tl_error_set(err, TL_ERR_BACKEND, "cuda: not available (%s)", why);
}

tl_status tl_cuda_open(tl_cuda **out, tl_error *err) {
  *out = NULL;
  tl_cuda *c = calloc(1, sizeof *c);
  if (!c) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  const char *lib = getenv("TL_CUDA_LIB");
  if (!(c->lib = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL)))
    return unavailable(c, "libcuda.so.1 not found: no NVIDIA driver", err);
#define TL_CU_LOAD(ret, name, args) \
  if (!(*(void **)&c->api.name = dlsym(c->lib, #name))) return unavailable(c, "the driver lacks " #name ": too old", err);
  TL_CU_FUNCTIONS(TL_CU_LOAD)
#undef TL_CU_LOAD
  int count = 0;
  if (c->api.cuInit(0) != CUDA_SUCCESS || c->api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1)
    return unavailable(c, "no CUDA device", err);
  c->api.cuDriverGetVersion(&c->driver_version);
  if (c->api.cuDeviceGet(&c->device, 0) != CUDA_SUCCESS ||
      c->api.cuDevicePrimaryCtxRetain(&c->context, c->device) != CUDA_SUCCESS ||
      c->api.cuCtxSetCurrent(c->context) != CUDA_SUCCESS)
    return unavailable(c, "the GPU's context cannot be made", err);
  c->api.cuDeviceGetName(c->name, sizeof c->name - 1, c->device);
  c->api.cuDeviceGetAttribute(&c->cc_major, CU_ATTR_CC_MAJOR, c->device);
  c->api.cuDeviceGetAttribute(&c->cc_minor, CU_ATTR_CC_MINOR, c->device);
  c->api.cuDeviceGetAttribute(&c->max_threads, CU_ATTR_MAX_THREADS_PER_BLOCK, c->device);
  c->api.cuDeviceGetAttribute(&c->shared_bytes, CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, c->device);
  c->api.cuDeviceTotalMem_v2(&c->total_mem, c->device);
  tl_status st = tl_nvrtc_open(&c->nvrtc, err);
  if (st) {
    tl_cuda_close(c);
    return st;
  }
  char *dir = NULL;
  tl_error e = {0};
  int repaired = 0;
  if (tl_entry_default_dir(&dir) == TL_OK && dir && tl_entry_check_private_dir(dir, "kernel cache directory", &repaired, &e) == TL_OK)
    c->cache_dir = dir;
  else
    free(dir);
  *out = c;
  return TL_OK;
}

/* src's PTX: from the kernel cache directory (keyed by the source, the GPU's compute
 * capability and NVRTC's version; checked as the C kernels' entries are), else
 * compiled by NVRTC and kept there, under the entry's lock */
static tl_status ptx_of(tl_cuda *c, const char *src, char **ptx, tl_error *err) {
  tl_hash128 h;
  uint64_t key[2];
  char v[64];
  snprintf(v, sizeof v, "%d.%d %d.%d", c->cc_major, c->cc_minor, c->nvrtc->major, c->nvrtc->minor);
  tl_hash128_init(&h);
  tl_hash128_str(&h, "tl-cuda-ptx-1");
  tl_hash128_str(&h, src);
  tl_hash128_str(&h, v);
  tl_hash128_final(&h, key);
  tl_blob_paths p;
  if (!c->cache_dir || !tl_blob_paths_of(c->cache_dir, key, "ptx", &p))
    return tl_nvrtc_ptx(c->nvrtc, src, c->cc_major, c->cc_minor, ptx, err);
  size_t len = 0;
  tl_entry_state why;
  int fd = -1;
  unsigned char *blob = tl_blob_read(&p, &len, &why);
  if (!blob) {
    fd = tl_entry_take_lock(p.lock);
    blob = tl_blob_read(&p, &len, &why); /* its builder held the lock */
  }
  tl_status st = TL_OK;
  if (blob && (*ptx = malloc(len + 1))) {
    memcpy(*ptx, blob, len);
    (*ptx)[len] = 0;
    c->stats.disk_hits++;
  } else if (!blob) {
    st = tl_nvrtc_ptx(c->nvrtc, src, c->cc_major, c->cc_minor, ptx, err);
    if (!st) {
      c->stats.builds++;
      tl_blob_store(&p, *ptx, strlen(*ptx));
    }
  } else {
    st = tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  }
  free(blob);
  tl_entry_drop_lock(fd);
  return st;
}

uint64_t tl_cuda_close(tl_cuda *c) {
  if (!c) return 0;
  uint64_t live = c->stats.live_buffers;
  for (cu_module *m = c->modules, *next; m; m = next) {
    next = m->next;
    c->api.cuModuleUnload(m->module);
    free(m->source);
    free(m);
  }
  if (c->context) c->api.cuDevicePrimaryCtxRelease_v2(c->device);
  tl_nvrtc_close(c->nvrtc);
  if (c->lib) dlclose(c->lib);
  free(c->cache_dir);
  free(c);
  return live;
}

void tl_cuda_describe(const tl_cuda *c, char *out, size_t cap, int *cc_major, int *cc_minor, int *max_threads,
                      size_t *shared_bytes) {
  snprintf(out, cap, "%s, compute capability %d.%d, %.1f GiB, driver %d.%d, NVRTC %d.%d", c->name, c->cc_major,
           c->cc_minor, (double)c->total_mem / (1 << 30), c->driver_version / 1000, c->driver_version % 1000 / 10,
           c->nvrtc->major, c->nvrtc->minor);
  *cc_major = c->cc_major, *cc_minor = c->cc_minor, *max_threads = c->max_threads;
  *shared_bytes = (size_t)c->shared_bytes;
}

tl_cuda_stats tl_cuda_get_stats(const tl_cuda *c) { return c->stats; }

tl_status tl_cuda_alloc(tl_cuda *c, size_t bytes, tl_cu_buf **out, tl_error *err) {
  *out = NULL;
  tl_cu_buf *b = malloc(sizeof *b);
  if (!b) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  CUresult rc = c->api.cuMemAlloc_v2(&b->ptr, bytes ? bytes : 1);
  if (rc != CUDA_SUCCESS) {
    free(b);
    char what[64];
    snprintf(what, sizeof what, "for %zu bytes", bytes);
    return cu_fail(c, rc, what, err);
  }
  b->size = bytes;
  c->stats.live_buffers++;
  c->stats.allocs++;
  if ((c->stats.live_bytes += bytes) > c->stats.peak_bytes) c->stats.peak_bytes = c->stats.live_bytes;
  *out = b;
  return TL_OK;
}

void tl_cuda_free(tl_cuda *c, tl_cu_buf *b) {
  if (!b) return;
  c->api.cuMemFree_v2(b->ptr);
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

tl_status tl_cuda_write(tl_cuda *c, tl_cu_buf *b, size_t off, const void *src, size_t n, tl_error *err) {
  tl_status st = range(b, off, n, "write", err);
  CUresult rc = st || !n ? CUDA_SUCCESS : c->api.cuMemcpyHtoD_v2(b->ptr + off, src, n);
  return st ? st : rc ? cu_fail(c, rc, "writing a buffer", err) : TL_OK;
}

tl_status tl_cuda_read(tl_cuda *c, const tl_cu_buf *b, size_t off, void *dst, size_t n, tl_error *err) {
  tl_status st = range(b, off, n, "read", err);
  CUresult rc = st || !n ? CUDA_SUCCESS : c->api.cuMemcpyDtoH_v2(dst, b->ptr + off, n);
  return st ? st : rc ? cu_fail(c, rc, "reading a buffer", err) : TL_OK;
}

tl_status tl_cuda_copy(tl_cuda *c, const tl_cu_buf *src, size_t src_off, tl_cu_buf *dst, size_t dst_off, size_t n,
                       tl_error *err) {
  tl_status st = range(src, src_off, n, "copy from", err);
  if (!st) st = range(dst, dst_off, n, "copy to", err);
  CUresult rc = st || !n ? CUDA_SUCCESS : c->api.cuMemcpyDtoD_v2(dst->ptr + dst_off, src->ptr + src_off, n);
  return st ? st : rc ? cu_fail(c, rc, "copying a buffer", err) : TL_OK;
}

tl_status tl_cuda_kernel(tl_cuda *c, const char *src, void **fn, tl_error *err) {
  *fn = NULL;
  size_t len = strlen(src);
  uint64_t hash = tl_hash_final(tl_hash_bytes(TL_HASH_INIT, src, len));
  for (cu_module *m = c->modules; m; m = m->next)
    if (m->hash == hash && !strcmp(m->source, src)) {
      c->stats.module_hits++;
      *fn = m->function;
      return TL_OK;
    }
  char *ptx = NULL;
  tl_status st = ptx_of(c, src, &ptx, err);
  if (st) return st;
  cu_module *m = calloc(1, sizeof *m);
  CUresult rc = CUDA_SUCCESS;
  if (!m || !(m->source = malloc(len + 1))) {
    st = tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  } else if ((rc = c->api.cuModuleLoadData(&m->module, ptx)) != CUDA_SUCCESS) {
    st = cu_fail(c, rc, "loading a kernel's PTX", err);
  } else if ((rc = c->api.cuModuleGetFunction(&m->function, m->module, "tl_kernel")) != CUDA_SUCCESS) {
    c->api.cuModuleUnload(m->module);
    st = cu_fail(c, rc, "finding `tl_kernel` in the module", err);
  }
  free(ptx);
  if (st) {
    if (m) free(m->source);
    free(m);
    return st;
  }
  memcpy(m->source, src, len + 1);
  m->hash = hash;
  m->next = c->modules;
  c->modules = m;
  *fn = m->function;
  return TL_OK;
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
  CUresult rc = c->api.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, NULL, params, NULL);
  return rc == CUDA_SUCCESS ? TL_OK : cu_fail(c, rc, "launching a kernel", err);
}

tl_status tl_cuda_finish(tl_cuda *c, tl_error *err) {
  CUresult rc = c->api.cuCtxSynchronize();
  return rc == CUDA_SUCCESS ? TL_OK : cu_fail(c, rc, "waiting for the GPU", err);
}

const void *tl_cu_buf_handle(const tl_cu_buf *b) { return &b->ptr; }
