/* backend_cuda.c — the cuda backend: backend_gpu.c over the CUDA driver
 * (cuda_driver.c: the driver API and NVRTC), whose calls are put in gpu_driver.h's
 * terms here. in: the device backend's requests; out: the CUDA driver's answers. */
#include <stdio.h>

#include "runtime/backend_gpu.h"
#include "runtime/cuda_driver.h"

static tl_status open_cu(void **dev, tl_error *err) { return tl_cuda_open((tl_cuda **)dev, err); }
static uint64_t close_cu(void *dev) { return tl_cuda_close(dev); }

static void info_cu(void *dev, tl_gpu_info *out) {
  int major = 0, minor = 0, threads = 0;
  size_t shared = 0;
  tl_cuda_describe(dev, out->found, sizeof out->found, &major, &minor, &threads, &shared);
  out->cpu = false;
  out->max_group = threads;
  out->shared_bytes = shared;
  out->f64 = true;
  out->f16 = major >= 6;
}

static void stats_cu(void *dev, tl_stats *st) {
  tl_cuda_stats c = tl_cuda_get_stats(dev);
  st->kernels_compiled += c.builds;
  st->mem_cache_hits += c.module_hits;
  st->device_buffers += c.live_buffers;
  st->device_bytes += c.live_bytes;
  st->device_peak_bytes += c.peak_bytes;
  st->device_allocs += c.allocs;
}

static tl_status alloc_cu(void *dev, size_t bytes, void **buf, tl_error *err) {
  return tl_cuda_alloc(dev, bytes, (tl_cu_buf **)buf, err);
}
static void free_cu(void *dev, void *buf) { tl_cuda_free(dev, buf); }
static size_t size_cu(const void *buf) { return tl_cu_buf_size(buf); }
static tl_status write_cu(void *dev, void *buf, size_t off, const void *src, size_t n, tl_error *err) {
  return tl_cuda_write(dev, buf, off, src, n, err);
}
static tl_status read_cu(void *dev, const void *buf, size_t off, void *dst, size_t n, tl_error *err) {
  return tl_cuda_read(dev, buf, off, dst, n, err);
}
static tl_status copy_cu(void *dev, const void *src, size_t src_off, void *dst, size_t dst_off, size_t n,
                         tl_error *err) {
  return tl_cuda_copy(dev, src, src_off, dst, dst_off, n, err);
}
static tl_status kernel_cu(void *dev, const char *src, void **k, tl_error *err) { return tl_cuda_kernel(dev, src, k, err); }

/* the driver API takes each argument's address */
static tl_status launch_cu(void *dev, void *k, int nargs, const tl_gpu_arg *args, int dims, const size_t *global,
                           const size_t *local, tl_error *err) {
  void *params[4 * TL_KERNEL_MAX_ARGS];
  if (nargs > (int)(sizeof params / sizeof params[0])) return tl_error_set(err, TL_ERR_INTERNAL, "cuda: %d kernel arguments", nargs);
  for (int i = 0; i < nargs; i++) params[i] = (void *)(args[i].buf ? tl_cu_buf_handle(args[i].buf) : args[i].value);
  return tl_cuda_launch(dev, k, nargs, params, dims, global, local, err);
}

static tl_status finish_cu(void *dev, tl_error *err) { return tl_cuda_finish(dev, err); }

static const tl_gpu_driver cuda_driver = {
    .name = "cuda", .lang = TL_GPU_CUDA, .target_env = "TL_CUDA_TARGET", .open = open_cu, .close = close_cu,
    .info = info_cu, .stats = stats_cu, .alloc = alloc_cu, .free = free_cu, .size = size_cu, .write = write_cu,
    .read = read_cu, .copy = copy_cu, .kernel = kernel_cu, .launch = launch_cu, .finish = finish_cu};

static tl_gpu_probe cuda_probe;
static const char *unavailable_cu(void) { return tl_gpu_unavailable(&cuda_driver, &cuda_probe); }
static const char *found_cu(void) { return tl_gpu_found(&cuda_driver, &cuda_probe); }

const tl_backend_i tl_backend_cuda =
    TL_GPU_BACKEND("cuda", "CUDA C kernels on an NVIDIA GPU", cuda_driver, unavailable_cu, found_cu);
