/* cl_driver.c — OpenCL through dlopen: the entry points TL calls, typed here (no CL
 * headers at build time), a context and an in-order queue on one device, buffers
 * with live/peak accounting, programs built once per process, launches.
 * in: source, names, sizes, bytes; out: buffers, results, errors with the reason. */
#include "runtime/cl_driver.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hash_mix.h"
#include "runtime/disk_entry.h"

/* ---- the OpenCL 1.2 subset TL uses (values from the Khronos headers) ---------------- */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef struct cl_opaque *cl_handle; /* platforms, devices, contexts, queues, mems, programs, kernels */

enum {
  CL_SUCCESS = 0,
  CL_DEVICE_NOT_FOUND = -1,
  CL_MEM_OBJECT_ALLOCATION_FAILURE = -4,
  CL_OUT_OF_RESOURCES = -5,
  CL_OUT_OF_HOST_MEMORY = -6,
  CL_BUILD_PROGRAM_FAILURE = -11,
  CL_INVALID_KERNEL_NAME = -46,
  CL_PLATFORM_NOT_FOUND_KHR = -1001,
  CL_PLATFORM_VERSION = 0x0901,
  CL_PLATFORM_NAME = 0x0902,
  CL_DEVICE_TYPE = 0x1000,
  CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004,
  CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010,
  CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F,
  CL_DEVICE_LOCAL_MEM_SIZE = 0x1023,
  CL_DEVICE_NAME = 0x102B,
  CL_DRIVER_VERSION = 0x102D,
  CL_DEVICE_VERSION = 0x102F,
  CL_DEVICE_EXTENSIONS = 0x1030,
  CL_PROGRAM_BINARY_SIZES = 0x1165,
  CL_PROGRAM_BINARIES = 0x1166,
  CL_PROGRAM_BUILD_LOG = 0x1183,
};
#define CL_DEVICE_TYPE_CPU ((cl_bitfield)1 << 1)
#define CL_DEVICE_TYPE_GPU ((cl_bitfield)1 << 2)
#define CL_DEVICE_TYPE_ALL ((cl_bitfield)0xFFFFFFFF)
#define CL_MEM_READ_WRITE ((cl_bitfield)1 << 0)

#define TL_CL_FUNCTIONS(X)                                                                          \
  X(cl_int, clGetPlatformIDs, (cl_uint, cl_handle *, cl_uint *))                                    \
  X(cl_int, clGetPlatformInfo, (cl_handle, cl_uint, size_t, void *, size_t *))                      \
  X(cl_int, clGetDeviceIDs, (cl_handle, cl_bitfield, cl_uint, cl_handle *, cl_uint *))              \
  X(cl_int, clGetDeviceInfo, (cl_handle, cl_uint, size_t, void *, size_t *))                        \
  X(cl_handle, clCreateContext, (const intptr_t *, cl_uint, const cl_handle *, void *, void *, cl_int *)) \
  X(cl_handle, clCreateCommandQueue, (cl_handle, cl_handle, cl_bitfield, cl_int *))                 \
  X(cl_handle, clCreateBuffer, (cl_handle, cl_bitfield, size_t, void *, cl_int *))                  \
  X(cl_int, clEnqueueWriteBuffer,                                                                   \
    (cl_handle, cl_handle, cl_uint, size_t, size_t, const void *, cl_uint, const void *, void *))   \
  X(cl_int, clEnqueueReadBuffer,                                                                    \
    (cl_handle, cl_handle, cl_uint, size_t, size_t, void *, cl_uint, const void *, void *))         \
  X(cl_int, clEnqueueCopyBuffer,                                                                    \
    (cl_handle, cl_handle, cl_handle, size_t, size_t, size_t, cl_uint, const void *, void *))       \
  X(cl_handle, clCreateProgramWithSource, (cl_handle, cl_uint, const char **, const size_t *, cl_int *)) \
  X(cl_handle, clCreateProgramWithBinary,                                                           \
    (cl_handle, cl_uint, const cl_handle *, const size_t *, const unsigned char **, cl_int *, cl_int *)) \
  X(cl_int, clGetProgramInfo, (cl_handle, cl_uint, size_t, void *, size_t *))                       \
  X(cl_int, clBuildProgram, (cl_handle, cl_uint, const cl_handle *, const char *, void *, void *))  \
  X(cl_int, clGetProgramBuildInfo, (cl_handle, cl_handle, cl_uint, size_t, void *, size_t *))       \
  X(cl_handle, clCreateKernel, (cl_handle, const char *, cl_int *))                                 \
  X(cl_int, clSetKernelArg, (cl_handle, cl_uint, size_t, const void *))                             \
  X(cl_int, clEnqueueNDRangeKernel,                                                                 \
    (cl_handle, cl_handle, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint, const void *, \
     void *))                                                                                       \
  X(cl_int, clFinish, (cl_handle))                                                                  \
  X(cl_int, clReleaseMemObject, (cl_handle))                                                        \
  X(cl_int, clReleaseKernel, (cl_handle))                                                           \
  X(cl_int, clReleaseProgram, (cl_handle))                                                          \
  X(cl_int, clReleaseCommandQueue, (cl_handle))                                                     \
  X(cl_int, clReleaseContext, (cl_handle))

typedef struct {
#define TL_CL_FIELD(ret, name, args) ret(*name) args;
  TL_CL_FUNCTIONS(TL_CL_FIELD)
#undef TL_CL_FIELD
} cl_api;

/* ---- the driver ----------------------------------------------------------------------- */
/* -w: a driver prints its compiler's warnings on the program's stderr (PoCL does) */
static const char *const build_options = "-cl-std=CL1.2 -w";
struct tl_cl_kernel { /* a program's kernel, as tl_cl_kernel_get hands it out */
  struct tl_cl_kernel *next;
  char *name;
  cl_handle kernel;
};

typedef struct cl_program_entry {
  struct cl_program_entry *next;
  uint64_t hash; /* of the source: most lookups compare this alone */
  char *source;
  cl_handle program;
  tl_cl_kernel *kernels;
} cl_program_entry;

struct tl_cl_buf {
  cl_handle mem;
  size_t size;
  struct tl_cl_buf *prev, *next; /* the live ones: tl_cl_close reports and frees them */
};

struct tl_cl {
  void *lib;
  cl_api api;
  cl_handle device, context, queue;
  tl_cl_caps caps;
  tl_cl_stats stats;
  cl_program_entry *programs;
  tl_cl_buf *live;
  char *cache_dir; /* program binaries on disk (NULL: not kept) */
};

/* what an OpenCL error code means, for messages */
static const char *cl_code_name(cl_int code) {
  switch (code) {
  case CL_DEVICE_NOT_FOUND: return "device not found";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "device memory allocation failed";
  case CL_OUT_OF_RESOURCES: return "out of device resources";
  case CL_OUT_OF_HOST_MEMORY: return "out of host memory";
  case CL_BUILD_PROGRAM_FAILURE: return "build failed";
  case CL_INVALID_KERNEL_NAME: return "no kernel of that name";
  case CL_PLATFORM_NOT_FOUND_KHR: return "no OpenCL platform";
  default: return "OpenCL error";
  }
}

static tl_status cl_fail(tl_error *err, cl_int code, const char *what) {
  bool oom = code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES ||
             code == CL_OUT_OF_HOST_MEMORY;
  return tl_error_set(err, oom ? TL_ERR_NOMEM : TL_ERR_BACKEND, "opencl: %s: %s (%d)", what, cl_code_name(code),
                      (int)code);
}

static tl_status unavailable(tl_error *err, const char *reason) {
  return tl_error_set(err, TL_ERR_BACKEND, "opencl: not available (%s: install pocl-opencl-icd, or a GPU's OpenCL driver)",
                      reason);
}

static tl_status load_api(tl_cl *cl, tl_error *err) {
  const char *name = getenv("TL_OPENCL_LIB");
  if (!name || !*name) name = "libOpenCL.so.1";
  cl->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!cl->lib) {
    char why[256];
    snprintf(why, sizeof why, "cannot load %s", name);
    return unavailable(err, why);
  }
#define TL_CL_LOAD(ret, fn, args)                                                                   \
  *(void **)&cl->api.fn = dlsym(cl->lib, #fn);                                                      \
  if (!cl->api.fn) return unavailable(err, "the OpenCL library lacks " #fn);
  TL_CL_FUNCTIONS(TL_CL_LOAD)
#undef TL_CL_LOAD
  return TL_OK;
}

static cl_bitfield wanted_type(void) {
  const char *t = getenv("TL_OPENCL_DEVICE");
  if (t && !strcmp(t, "cpu")) return CL_DEVICE_TYPE_CPU;
  if (t && !strcmp(t, "gpu")) return CL_DEVICE_TYPE_GPU;
  return CL_DEVICE_TYPE_ALL;
}

/* the first device of the wanted type on any platform, and its platform */
static tl_status pick_device(tl_cl *cl, cl_handle *platform, tl_error *err) {
  cl_handle platforms[16];
  cl_uint n = 0;
  cl_int rc = cl->api.clGetPlatformIDs(16, platforms, &n);
  if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && n == 0)) return unavailable(err, "no OpenCL platform");
  if (rc != CL_SUCCESS) return cl_fail(err, rc, "listing platforms");
  for (cl_uint i = 0; i < n && i < 16; i++) {
    cl_uint nd = 0;
    if (cl->api.clGetDeviceIDs(platforms[i], wanted_type(), 1, &cl->device, &nd) == CL_SUCCESS && nd > 0) {
      *platform = platforms[i];
      return TL_OK;
    }
  }
  return unavailable(err, "no OpenCL device of the type asked for");
}

static void info_str(tl_cl *cl, cl_handle h, cl_uint what, char *out, size_t cap, bool platform) {
  size_t got = 0;
  cl_int rc = platform ? cl->api.clGetPlatformInfo(h, what, cap - 1, out, &got)
                       : cl->api.clGetDeviceInfo(h, what, cap - 1, out, &got);
  out[rc == CL_SUCCESS && got < cap ? got : 0] = 0;
}

static uint64_t info_u64(tl_cl *cl, cl_uint what) {
  cl_ulong v = 0;
  return cl->api.clGetDeviceInfo(cl->device, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

static void read_caps(tl_cl *cl, cl_handle platform) {
  tl_cl_caps *c = &cl->caps;
  info_str(cl, platform, CL_PLATFORM_NAME, c->platform, sizeof c->platform, true);
  info_str(cl, cl->device, CL_DEVICE_NAME, c->device, sizeof c->device, false);
  info_str(cl, cl->device, CL_DEVICE_VERSION, c->version, sizeof c->version, false);
  info_str(cl, cl->device, CL_DRIVER_VERSION, c->driver, sizeof c->driver, false);
  size_t wg = 0;
  c->max_work_group = cl->api.clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS ? wg : 1;
  c->local_bytes = info_u64(cl, CL_DEVICE_LOCAL_MEM_SIZE);
  c->is_cpu = (info_u64(cl, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  c->global_bytes = info_u64(cl, CL_DEVICE_GLOBAL_MEM_SIZE);
  c->max_alloc = info_u64(cl, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  size_t n = 0;
  if (cl->api.clGetDeviceInfo(cl->device, CL_DEVICE_EXTENSIONS, 0, NULL, &n) == CL_SUCCESS && n > 0) {
    char *ext = malloc(n + 1);
    if (ext && cl->api.clGetDeviceInfo(cl->device, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS) {
      ext[n] = 0;
      c->has_f64 = strstr(ext, "cl_khr_fp64") != NULL;
      c->has_f16 = strstr(ext, "cl_khr_fp16") != NULL;
    }
    free(ext);
  }
}

static void open_cache(tl_cl *cl);

tl_status tl_cl_open(tl_cl **out, tl_error *err) {
  *out = NULL;
  tl_cl *cl = calloc(1, sizeof *cl);
  if (!cl) return tl_error_set(err, TL_ERR_NOMEM, "opencl: out of memory");
  cl_handle platform = NULL;
  cl_int rc = CL_SUCCESS;
  tl_status st = load_api(cl, err);
  if (!st) st = pick_device(cl, &platform, err);
  if (!st) {
    read_caps(cl, platform);
    cl->context = cl->api.clCreateContext(NULL, 1, &cl->device, NULL, NULL, &rc);
    if (!cl->context) st = cl_fail(err, rc, "creating a context");
  }
  if (!st) {
    cl->queue = cl->api.clCreateCommandQueue(cl->context, cl->device, 0, &rc);
    if (!cl->queue) st = cl_fail(err, rc, "creating a queue");
  }
  if (st) {
    tl_cl_close(cl);
    return st;
  }
  open_cache(cl);
  *out = cl;
  return TL_OK;
}

uint64_t tl_cl_close(tl_cl *cl) {
  if (!cl) return 0;
  /* every queued command done first: a driver's worker still building a kernel for
   * one (PoCL compiles at launch) would race the process's exit, whose destructors
   * tear down the compiler under it (PoCL aborted: "Failed to create kernel compiler
   * pass") */
  if (cl->queue) cl->api.clFinish(cl->queue);
  uint64_t leaked = cl->stats.live_buffers;
  while (cl->live) tl_cl_free(cl, cl->live);
  for (cl_program_entry *p = cl->programs, *pn; p; p = pn) {
    pn = p->next;
    for (tl_cl_kernel *k = p->kernels, *kn; k; k = kn) {
      kn = k->next;
      cl->api.clReleaseKernel(k->kernel);
      free(k->name);
      free(k);
    }
    cl->api.clReleaseProgram(p->program);
    free(p->source);
    free(p);
  }
  if (cl->queue) cl->api.clReleaseCommandQueue(cl->queue);
  if (cl->context) cl->api.clReleaseContext(cl->context);
  free(cl->cache_dir);
  /* the library stays loaded: ICD loaders and drivers keep threads and atexit hooks
   * that a dlclose would pull from under them */
  free(cl);
  return leaked;
}

const tl_cl_caps *tl_cl_get_caps(const tl_cl *cl) { return &cl->caps; }
tl_cl_stats tl_cl_get_stats(const tl_cl *cl) { return cl->stats; }

/* ---- buffers -------------------------------------------------------------------------- */
tl_status tl_cl_alloc(tl_cl *cl, size_t bytes, tl_cl_buf **out, tl_error *err) {
  *out = NULL;
  if (bytes == 0) bytes = 1; /* OpenCL has no empty buffers; an empty tensor still gets one */
  if (cl->caps.max_alloc && bytes > cl->caps.max_alloc)
    return tl_error_set(err, TL_ERR_NOMEM,
                        "opencl: out of device memory: a buffer of %zu bytes, the device allows at most %llu in one",
                        bytes, (unsigned long long)cl->caps.max_alloc);
  tl_cl_buf *b = malloc(sizeof *b);
  if (!b) return tl_error_set(err, TL_ERR_NOMEM, "opencl: out of memory");
  cl_int rc = CL_SUCCESS;
  b->mem = cl->api.clCreateBuffer(cl->context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
  if (!b->mem) {
    free(b);
    if (rc == CL_SUCCESS) rc = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return cl_fail(err, rc, "allocating a buffer");
  }
  b->size = bytes;
  b->prev = NULL;
  b->next = cl->live;
  if (cl->live) cl->live->prev = b;
  cl->live = b;
  cl->stats.allocs++;
  cl->stats.live_buffers++;
  cl->stats.live_bytes += bytes;
  if (cl->stats.live_bytes > cl->stats.peak_bytes) cl->stats.peak_bytes = cl->stats.live_bytes;
  *out = b;
  return TL_OK;
}

void tl_cl_free(tl_cl *cl, tl_cl_buf *b) {
  if (!b) return;
  cl->api.clReleaseMemObject(b->mem);
  if (b->prev) b->prev->next = b->next;
  else cl->live = b->next;
  if (b->next) b->next->prev = b->prev;
  cl->stats.live_buffers--;
  cl->stats.live_bytes -= b->size;
  free(b);
}

size_t tl_cl_buf_size(const tl_cl_buf *b) { return b->size; }

static tl_status check_range(const tl_cl_buf *b, size_t offset, size_t n, const char *what, tl_error *err) {
  if (offset > b->size || n > b->size - offset)
    return tl_error_set(err, TL_ERR_RANGE, "opencl: %s of %zu bytes at %zu is outside a buffer of %zu", what, n,
                        offset, b->size);
  return TL_OK;
}

tl_status tl_cl_write(tl_cl *cl, tl_cl_buf *b, size_t offset, const void *src, size_t n, tl_error *err) {
  tl_status st = check_range(b, offset, n, "write", err);
  if (st || n == 0) return st;
  cl_int rc = cl->api.clEnqueueWriteBuffer(cl->queue, b->mem, 1, offset, n, src, 0, NULL, NULL);
  return rc == CL_SUCCESS ? TL_OK : cl_fail(err, rc, "writing a buffer");
}

tl_status tl_cl_read(tl_cl *cl, const tl_cl_buf *b, size_t offset, void *dst, size_t n, tl_error *err) {
  tl_status st = check_range(b, offset, n, "read", err);
  if (st || n == 0) return st;
  cl_int rc = cl->api.clEnqueueReadBuffer(cl->queue, b->mem, 1, offset, n, dst, 0, NULL, NULL);
  return rc == CL_SUCCESS ? TL_OK : cl_fail(err, rc, "reading a buffer");
}

tl_status tl_cl_copy(tl_cl *cl, const tl_cl_buf *src, size_t src_offset, tl_cl_buf *dst, size_t dst_offset,
                     size_t n, tl_error *err) {
  tl_status st = check_range(src, src_offset, n, "copy from", err);
  if (!st) st = check_range(dst, dst_offset, n, "copy to", err);
  if (st || n == 0) return st;
  cl_int rc = cl->api.clEnqueueCopyBuffer(cl->queue, src->mem, dst->mem, src_offset, dst_offset, n, 0, NULL, NULL);
  return rc == CL_SUCCESS ? TL_OK : cl_fail(err, rc, "copying a buffer");
}

/* ---- programs and kernels ---------------------------------------------------------------- */
/* a failed build: the log, whose lines name the source's lines (<source>:LINE:COL) */
static tl_status build_failed(tl_cl *cl, cl_handle program, tl_error *err) {
  size_t n = 0;
  char log[900] = "";
  if (cl->api.clGetProgramBuildInfo(program, cl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS && n) {
    char *all = malloc(n + 1);
    if (all && cl->api.clGetProgramBuildInfo(program, cl->device, CL_PROGRAM_BUILD_LOG, n, all, NULL) == CL_SUCCESS) {
      all[n] = 0;
      snprintf(log, sizeof log, "%s", all);
    }
    free(all);
  }
  return tl_error_set(err, TL_ERR_COMPILER, "opencl: the kernel did not build on %s:\n%s", cl->caps.device,
                      log[0] ? log : "(no build log)");
}

/* the program built from its source (counted), or the error with the build log */
static tl_status program_build(tl_cl *cl, const char *source, cl_handle *out, tl_error *err) {
  size_t len = strlen(source);
  cl_int rc = CL_SUCCESS;
  cl_handle program = cl->api.clCreateProgramWithSource(cl->context, 1, &source, &len, &rc);
  tl_status st = program ? TL_OK : cl_fail(err, rc, "creating a program");
  if (!st && (rc = cl->api.clBuildProgram(program, 1, &cl->device, build_options, NULL, NULL)) != CL_SUCCESS)
    st = rc == CL_BUILD_PROGRAM_FAILURE ? build_failed(cl, program, err) : cl_fail(err, rc, "building a program");
  if (st) {
    if (program) cl->api.clReleaseProgram(program);
    *out = NULL;
    return st;
  }
  cl->stats.builds++;
  *out = program;
  return TL_OK;
}

/* ---- program binaries on disk ------------------------------------------------------------
 * <key>.clbin beside <key>.sum in the kernel cache directory, checked as the C kernels'
 * entries are (runtime/disk_entry.h); the key covers the source, the build options and
 * the platform, device and driver, so a driver update builds afresh. Anything wrong
 * with an entry (damaged, foreign, a binary the driver refuses) means a build from the
 * source, and the entry is replaced; a directory that cannot be used means no disk cache,
 * never an error. */
static void open_cache(tl_cl *cl) {
  char *dir = NULL;
  tl_error e = {0};
  int repaired = 0;
  if (tl_entry_default_dir(&dir) == TL_OK && dir &&
      tl_entry_check_private_dir(dir, "kernel cache directory", &repaired, &e) == TL_OK) {
    cl->cache_dir = dir;
    cl->stats.disk_cache = 1;
  } else {
    free(dir);
  }
}

static bool entry_paths_of(const tl_cl *cl, const char *source, tl_blob_paths *p) {
  tl_hash128 h;
  uint64_t key[2];
  tl_hash128_init(&h);
  tl_hash128_str(&h, "tl-opencl-program-1");
  tl_hash128_str(&h, source);
  tl_hash128_str(&h, build_options);
  tl_hash128_str(&h, cl->caps.platform);
  tl_hash128_str(&h, cl->caps.device);
  tl_hash128_str(&h, cl->caps.version);
  tl_hash128_str(&h, cl->caps.driver);
  tl_hash128_final(&h, key);
  return tl_blob_paths_of(cl->cache_dir, key, "clbin", p);
}

/* a program built from the entry's binary, or NULL (no entry, or one the driver refused) */
static cl_handle program_from_entry(tl_cl *cl, const tl_blob_paths *p, tl_entry_state *why) {
  size_t len = 0;
  unsigned char *bin = tl_blob_read(p, &len, why);
  if (!bin) return NULL;
  cl_int status = CL_SUCCESS, rc = CL_SUCCESS;
  const unsigned char *bins[1] = {bin};
  cl_handle program = cl->api.clCreateProgramWithBinary(cl->context, 1, &cl->device, &len, bins, &status, &rc);
  free(bin);
  if (program && (status != CL_SUCCESS || cl->api.clBuildProgram(program, 1, &cl->device, build_options, NULL,
                                                                  NULL) != CL_SUCCESS)) {
    cl->api.clReleaseProgram(program);
    program = NULL;
  }
  if (!program) *why = TL_ENTRY_LOAD;
  return program;
}

/* keeps the built program's binary as the entry (failures leave none and are not errors) */
static void store_entry(tl_cl *cl, cl_handle program, const tl_blob_paths *p) {
  size_t len = 0;
  if (cl->api.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len) return;
  unsigned char *bin = malloc(len);
  if (bin && cl->api.clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS &&
      tl_blob_store(p, bin, len))
    cl->stats.disk_stores++;
  free(bin);
}

/* the program from the disk cache, else built from the source and stored; under the
 * entry's lock, so processes building the same program build it once */
static tl_status program_build(tl_cl *cl, const char *source, cl_handle *out, tl_error *err);

static tl_status program_cached(tl_cl *cl, const char *source, cl_handle *out, tl_error *err) {
  tl_blob_paths p;
  if (!cl->cache_dir || !entry_paths_of(cl, source, &p)) return program_build(cl, source, out, err);
  tl_entry_state why;
  if ((*out = program_from_entry(cl, &p, &why))) {
    cl->stats.disk_hits++;
    return TL_OK;
  }
  int fd = tl_entry_take_lock(p.lock);
  tl_status st = TL_OK;
  if ((*out = program_from_entry(cl, &p, &why))) { /* its builder held the lock */
    cl->stats.disk_hits++;
  } else {
    if (why != TL_ENTRY_MISSING) { /* damaged, foreign or refused: replaced */
      unlink(p.data);
      unlink(p.sum);
      cl->stats.disk_rejects++;
    }
    st = program_build(cl, source, out, err);
    if (!st) store_entry(cl, *out, &p);
  }
  tl_entry_drop_lock(fd);
  return st;
}

static tl_status program_get(tl_cl *cl, const char *source, cl_program_entry **out, tl_error *err) {
  size_t len = strlen(source);
  /* every kernel starts with the same prelude: comparing sources alone would read it
   * again for each program kept */
  uint64_t hash = tl_hash_final(tl_hash_bytes(TL_HASH_INIT, source, len));
  for (cl_program_entry *p = cl->programs; p; p = p->next)
    if (p->hash == hash && !strcmp(p->source, source)) {
      cl->stats.program_hits++;
      *out = p;
      return TL_OK;
    }
  cl_program_entry *p = calloc(1, sizeof *p);
  if (!p || !(p->source = malloc(len + 1))) {
    free(p);
    return tl_error_set(err, TL_ERR_NOMEM, "opencl: out of memory");
  }
  memcpy(p->source, source, len + 1);
  p->hash = hash;
  tl_status st = program_cached(cl, source, &p->program, err);
  if (st) {
    free(p->source);
    free(p);
    return st;
  }
  p->next = cl->programs;
  cl->programs = p;
  *out = p;
  return TL_OK;
}

tl_status tl_cl_kernel_get(tl_cl *cl, const char *source, const char *name, tl_cl_kernel **out, tl_error *err) {
  *out = NULL;
  cl_program_entry *p = NULL;
  tl_status st = program_get(cl, source, &p, err);
  if (st) return st;
  for (tl_cl_kernel *k = p->kernels; k; k = k->next)
    if (!strcmp(k->name, name)) {
      *out = k;
      return TL_OK;
    }
  tl_cl_kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = strdup(name))) {
    free(k);
    return tl_error_set(err, TL_ERR_NOMEM, "opencl: out of memory");
  }
  cl_int rc = CL_SUCCESS;
  k->kernel = cl->api.clCreateKernel(p->program, name, &rc);
  if (!k->kernel) {
    free(k->name);
    free(k);
    return tl_error_set(err, TL_ERR_BACKEND, "opencl: the program has no kernel `%s` (%s, %d)", name,
                        cl_code_name(rc), (int)rc);
  }
  k->next = p->kernels;
  p->kernels = k;
  *out = k;
  return TL_OK;
}

tl_status tl_cl_launch(tl_cl *cl, tl_cl_kernel *k, int nargs, const tl_cl_arg *args, int dims, const size_t *global,
                       const size_t *local, tl_error *err) {
  if (dims < 1 || dims > 3) return tl_error_set(err, TL_ERR_ARG, "opencl: a launch has 1 to 3 axes, not %d", dims);
  for (int i = 0; i < nargs; i++) {
    const tl_cl_arg *a = &args[i];
    cl_int rc = a->kind == TL_CL_ARG_BUF     ? cl->api.clSetKernelArg(k->kernel, (cl_uint)i, sizeof(cl_handle), &a->buf->mem)
                : a->kind == TL_CL_ARG_VALUE ? cl->api.clSetKernelArg(k->kernel, (cl_uint)i, a->size, a->value)
                                             : cl->api.clSetKernelArg(k->kernel, (cl_uint)i, a->size, NULL);
    if (rc != CL_SUCCESS) {
      char what[96];
      snprintf(what, sizeof what, "argument %d of kernel `%s`", i, k->name);
      return cl_fail(err, rc, what);
    }
  }
  for (int d = 0; d < dims; d++)
    if (global[d] == 0) return TL_OK; /* nothing to run */
  cl_int rc = cl->api.clEnqueueNDRangeKernel(cl->queue, k->kernel, (cl_uint)dims, NULL, global, local, 0, NULL, NULL);
  if (rc != CL_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "launching kernel `%s`", k->name);
    return cl_fail(err, rc, what);
  }
  return TL_OK;
}

tl_status tl_cl_finish(tl_cl *cl, tl_error *err) {
  cl_int rc = cl->api.clFinish(cl->queue);
  return rc == CL_SUCCESS ? TL_OK : cl_fail(err, rc, "waiting for the device");
}
