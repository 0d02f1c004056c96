/* cl_driver.h — the OpenCL driver under the opencl backend: libOpenCL.so.1 loaded at run
 * time (dlopen: no build-time dependency), one device, its buffers, programs built for
 * it (kept per process, and their binaries in the kernel cache directory, checked as
 * the C kernels are) and kernel launches.
 * in: OpenCL C source, kernel names, sizes, host bytes; out: device buffers, results,
 * and errors that say what failed: "not available" with the reason and the fix, a
 * kernel's build log, device out-of-memory as TL_ERR_NOMEM.
 *
 * Not thread-safe: one thread drives a tl_cl at a time (the backend's realize). */
#ifndef TL_RUNTIME_CL_DRIVER_H
#define TL_RUNTIME_CL_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef struct tl_cl tl_cl;
typedef struct tl_cl_buf tl_cl_buf;
typedef struct tl_cl_kernel tl_cl_kernel;

typedef struct {
  char platform[128], device[128], version[128], driver[64];
  size_t max_work_group;   /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  uint64_t local_bytes;    /* local memory a work-group shares */
  uint64_t global_bytes;   /* the device's memory */
  uint64_t max_alloc;      /* the largest single buffer */
  int has_f64, has_f16;    /* cl_khr_fp64 / cl_khr_fp16 */
  int is_cpu;              /* the device is the host's CPU (PoCL) */
} tl_cl_caps;

typedef struct {
  uint64_t builds;       /* programs compiled from source by the driver */
  uint64_t program_hits; /* programs found already built in this process */
  uint64_t disk_cache;   /* 1: program binaries are kept in the kernel cache directory */
  uint64_t disk_hits, disk_stores;
  uint64_t disk_rejects; /* entries damaged, foreign or refused by the driver: rebuilt */
  uint64_t live_buffers, live_bytes, peak_bytes;
  uint64_t allocs; /* buffers created, all told */
} tl_cl_stats;

/* A kernel argument: a buffer, bytes passed by value, or local memory of that size. */
typedef enum { TL_CL_ARG_BUF, TL_CL_ARG_VALUE, TL_CL_ARG_LOCAL } tl_cl_arg_kind;
typedef struct {
  tl_cl_arg_kind kind;
  const tl_cl_buf *buf; /* TL_CL_ARG_BUF */
  const void *value;    /* TL_CL_ARG_VALUE: `size` bytes */
  size_t size;          /* TL_CL_ARG_VALUE, TL_CL_ARG_LOCAL */
} tl_cl_arg;

/* The first device of the first platform that has one (TL_OPENCL_DEVICE=cpu|gpu|all
 * narrows the type; TL_OPENCL_LIB names the library, for tests). Unavailable:
 * TL_ERR_BACKEND, "opencl: not available (REASON: FIX)". */
tl_status tl_cl_open(tl_cl **out, tl_error *err);
/* Frees everything, live buffers included; returns how many buffers were still live
 * (leaks to report), 0 when none. */
uint64_t tl_cl_close(tl_cl *cl);
const tl_cl_caps *tl_cl_get_caps(const tl_cl *cl);
tl_cl_stats tl_cl_get_stats(const tl_cl *cl);

tl_status tl_cl_alloc(tl_cl *cl, size_t bytes, tl_cl_buf **out, tl_error *err);
void tl_cl_free(tl_cl *cl, tl_cl_buf *b);
size_t tl_cl_buf_size(const tl_cl_buf *b);
tl_status tl_cl_write(tl_cl *cl, tl_cl_buf *b, size_t offset, const void *src, size_t n, tl_error *err);
tl_status tl_cl_read(tl_cl *cl, const tl_cl_buf *b, size_t offset, void *dst, size_t n, tl_error *err);
tl_status tl_cl_copy(tl_cl *cl, const tl_cl_buf *src, size_t src_offset, tl_cl_buf *dst, size_t dst_offset,
                     size_t n, tl_error *err);

/* The kernel `name` of the program `source`, built once per process (the driver owns
 * it). A build failure is TL_ERR_COMPILER with the build log. */
tl_status tl_cl_kernel_get(tl_cl *cl, const char *source, const char *name, tl_cl_kernel **out, tl_error *err);
/* Runs k over `dims` (1..3) axes of `global` work-items in work-groups of `local`
 * (NULL: the driver's choice); returns when it is queued. */
tl_status tl_cl_launch(tl_cl *cl, tl_cl_kernel *k, int nargs, const tl_cl_arg *args, int dims, const size_t *global,
                       const size_t *local, tl_error *err);
/* Waits for everything queued. */
tl_status tl_cl_finish(tl_cl *cl, tl_error *err);

#endif
