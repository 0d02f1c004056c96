/* backend_gpu.h — the functions of a device backend's tl_backend_i, shared by every
 * device backend (backend_gpu.c): each backend (backend_opencl.c, backend_cuda.c) is
 * its driver (gpu_driver.h) and a table of these. */
#ifndef TL_RUNTIME_BACKEND_GPU_H
#define TL_RUNTIME_BACKEND_GPU_H

#include "runtime/backend.h"
#include "runtime/gpu_driver.h"

/* what one probe of the driver found (a static per backend: the first use opens the
 * device once, in any thread, and keeps the answer) */
typedef struct tl_gpu_probe {
  bool done, ok;
  char reason[sizeof(((tl_error *)0)->msg)];
  char found[512];
} tl_gpu_probe;

const char *tl_gpu_unavailable(const tl_gpu_driver *d, tl_gpu_probe *p);
const char *tl_gpu_found(const tl_gpu_driver *d, tl_gpu_probe *p);

/* the interface's functions (the driver: be->i->driver) */
tl_status tl_gpu_prepare(tl_backend *be, tl_error *err);
void tl_gpu_release(tl_backend *be);
void tl_gpu_caps(const tl_backend *be, tl_backend_caps *out);
void tl_gpu_stats(const tl_backend *be, tl_stats *st);
tl_buffer *tl_gpu_alloc(tl_backend *be, tl_dtype dtype, int64_t numel, tl_mem *mem);
tl_status tl_gpu_from_host(tl_backend *be, tl_buffer *dst, size_t off, const void *src, size_t n, tl_error *err);
tl_status tl_gpu_to_host(tl_backend *be, void *dst, const tl_buffer *src, size_t off, size_t n, tl_error *err);
tl_status tl_gpu_copy(tl_backend *be, tl_buffer *dst, const tl_buffer *src, size_t n, tl_error *err);
void *tl_gpu_host_view(tl_backend *be, tl_buffer *b, bool write, tl_error *err);
tl_status tl_gpu_plan(tl_backend *be, const tl_lowered *low, tl_kernel *k, tl_error *err);
char *tl_gpu_render(tl_backend *be, const tl_lowered *low, const tl_kernel *k, const char **body);
tl_status tl_gpu_compile(tl_backend *be, const char *src, tl_kernel *k, tl_error *err);
tl_status tl_gpu_flush(tl_backend *be, tl_error *err);
tl_status tl_gpu_launch(tl_backend *be, const tl_kernel *k, const tl_kernel_arg *args, const uint64_t *words,
                        tl_error *err);
tl_status tl_gpu_synchronize(tl_backend *be, tl_error *err);

/* b's memory on the device, for a caller that queues work there itself (src/dist:
 * NCCL on the cuda stream, reading it, or writing a new buffer whose only copy is the
 * device's): its device copy brought up to date, the driver's device (*dev), buffer (*buf) and
 * b's byte offset in it (*off) */
tl_status tl_gpu_device_memory(tl_backend *be, tl_buffer *b, void **dev, void **buf, size_t *off, tl_error *err);

/* the table of a device backend named NAME over the driver DRIVER, whose probe is
 * PROBE_FNS' (its unavailable and found) */
#define TL_GPU_BACKEND(NAME, ABOUT, DRIVER, UNAVAILABLE, FOUND)                                               \
  {.name = NAME, .about = ABOUT, .driver = &DRIVER, .unavailable = UNAVAILABLE, .found = FOUND,              \
   .prepare = tl_gpu_prepare, .release = tl_gpu_release, .caps = tl_gpu_caps, .stats = tl_gpu_stats,         \
   .buffer_alloc = tl_gpu_alloc, .copy_from_host = tl_gpu_from_host, .copy_to_host = tl_gpu_to_host,         \
   .copy = tl_gpu_copy, .host_view = tl_gpu_host_view, .plan = tl_gpu_plan, .render = tl_gpu_render,         \
   .compile = tl_gpu_compile, .flush = tl_gpu_flush, .launch = tl_gpu_launch, .synchronize = tl_gpu_synchronize}

#endif
