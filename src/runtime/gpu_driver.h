/* gpu_driver.h — what a device backend needs of its driver (cl_driver.c for OpenCL,
 * cuda_driver.c for CUDA), as one small table: open and close a device, its memory,
 * copies, kernels from source, launches. backend_gpu.c builds the whole backend
 * (buffers with host copies, the size-class cache, kernels' plans, replay) on it.
 * in: sizes, bytes, kernel source; out: device handles, errors with the reason. */
#ifndef TL_RUNTIME_GPU_DRIVER_H
#define TL_RUNTIME_GPU_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/render_gpu.h"
#include "core/error.h"
#include "tl.h"

/* a kernel argument: a buffer (its handle) or bytes passed by value */
typedef struct tl_gpu_arg {
  const void *buf;   /* a buffer: the driver's handle; NULL: a value */
  const void *value; /* a value: `size` bytes */
  size_t size;
} tl_gpu_arg;

/* what the device is and can do */
typedef struct tl_gpu_info {
  char found[512];      /* for `tl devices`: platform or GPU, version, memory */
  bool cpu;             /* the host's CPU (PoCL): kernels for a CPU */
  int64_t max_group;    /* work-items in a work-group */
  size_t shared_bytes;  /* memory a work-group shares */
  bool f64, f16;
} tl_gpu_info;

typedef struct tl_gpu_driver {
  const char *name;     /* the backend's: "opencl", "cuda" */
  tl_gpu_lang lang;     /* the kernels' language */
  const char *target_env; /* names a variable forcing CPU or GPU kernels ("cpu"/"gpu"), for tests */
  /* opens the device; not available: TL_ERR_BACKEND, "NAME: not available (REASON)" */
  tl_status (*open)(void **dev, tl_error *err);
  uint64_t (*close)(void *dev); /* frees everything; returns the buffers still live */
  void (*info)(void *dev, tl_gpu_info *out);
  void (*stats)(void *dev, tl_stats *st); /* adds builds, cache hits, device memory */
  tl_status (*alloc)(void *dev, size_t bytes, void **buf, tl_error *err);
  void (*free)(void *dev, void *buf);
  size_t (*size)(const void *buf);
  tl_status (*write)(void *dev, void *buf, size_t off, const void *src, size_t n, tl_error *err);
  tl_status (*read)(void *dev, const void *buf, size_t off, void *dst, size_t n, tl_error *err);
  tl_status (*copy)(void *dev, const void *src, size_t src_off, void *dst, size_t dst_off, size_t n, tl_error *err);
  /* the kernel `tl_kernel` of the source, built once per process (a failure:
   * TL_ERR_COMPILER with the compiler's log) */
  tl_status (*kernel)(void *dev, const char *src, void **k, tl_error *err);
  /* runs k over dims axes of global work-items in groups of local (NULL: the driver's
   * choice); queued in order */
  tl_status (*launch)(void *dev, void *k, int nargs, const tl_gpu_arg *args, int dims, const size_t *global,
                      const size_t *local, tl_error *err);
  tl_status (*finish)(void *dev, tl_error *err); /* everything queued is done */
} tl_gpu_driver;

#endif
