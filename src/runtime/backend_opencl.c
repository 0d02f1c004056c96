/* backend_opencl.c — the opencl backend: backend_gpu.c over the OpenCL driver
 * (cl_driver.c), whose calls are put in gpu_driver.h's terms here.
 * in: the device backend's requests; out: the OpenCL driver's answers. */
#include <stdio.h>

#include "runtime/backend_gpu.h"
#include "runtime/cl_driver.h"

static tl_status open_cl(void **dev, tl_error *err) { return tl_cl_open((tl_cl **)dev, err); }
static uint64_t close_cl(void *dev) { return tl_cl_close(dev); }

static void info_cl(void *dev, tl_gpu_info *out) {
  const tl_cl_caps *c = tl_cl_get_caps(dev);
  snprintf(out->found, sizeof out->found, "%s: %s, %s, driver %s", c->platform, c->device, c->version, c->driver);
  out->cpu = c->is_cpu != 0;
  out->max_group = (int64_t)c->max_work_group;
  out->shared_bytes = (size_t)c->local_bytes;
  out->f64 = c->has_f64 != 0;
  out->f16 = c->has_f16 != 0;
}

static void stats_cl(void *dev, tl_stats *st) {
  tl_cl_stats c = tl_cl_get_stats(dev);
  st->kernels_compiled += c.builds;
  st->disk_cache_hits += c.disk_hits;
  st->mem_cache_hits += c.program_hits;
  st->disk_cache_rejects += c.disk_rejects;
  st->device_buffers += c.live_buffers;
  st->device_bytes += c.live_bytes;
  st->device_peak_bytes += c.peak_bytes;
  st->device_allocs += c.allocs;
}

static tl_status alloc_cl(void *dev, size_t bytes, void **buf, tl_error *err) {
  return tl_cl_alloc(dev, bytes, (tl_cl_buf **)buf, err);
}
static void free_cl(void *dev, void *buf) { tl_cl_free(dev, buf); }
static size_t size_cl(const void *buf) { return tl_cl_buf_size(buf); }
static tl_status write_cl(void *dev, void *buf, size_t off, const void *src, size_t n, tl_error *err) {
  return tl_cl_write(dev, buf, off, src, n, err);
}
static tl_status read_cl(void *dev, const void *buf, size_t off, void *dst, size_t n, tl_error *err) {
  return tl_cl_read(dev, buf, off, dst, n, err);
}
static tl_status copy_cl(void *dev, const void *src, size_t src_off, void *dst, size_t dst_off, size_t n,
                         tl_error *err) {
  return tl_cl_copy(dev, src, src_off, dst, dst_off, n, err);
}
static tl_status kernel_cl(void *dev, const char *src, void **k, tl_error *err) {
  return tl_cl_kernel_get(dev, src, "tl_kernel", (tl_cl_kernel **)k, err);
}

static tl_status launch_cl(void *dev, void *k, int nargs, const tl_gpu_arg *args, int dims, const size_t *global,
                           const size_t *local, tl_error *err) {
  tl_cl_arg a[4 * TL_KERNEL_MAX_ARGS];
  if (nargs > (int)(sizeof a / sizeof a[0])) return tl_error_set(err, TL_ERR_INTERNAL, "opencl: %d kernel arguments", nargs);
  for (int i = 0; i < nargs; i++)
    a[i] = args[i].buf ? (tl_cl_arg){.kind = TL_CL_ARG_BUF, .buf = args[i].buf}
                       : (tl_cl_arg){.kind = TL_CL_ARG_VALUE, .value = args[i].value, .size = args[i].size};
  return tl_cl_launch(dev, k, nargs, a, dims, global, local, err);
}

static tl_status finish_cl(void *dev, tl_error *err) { return tl_cl_finish(dev, err); }

static const tl_gpu_driver opencl_driver = {
    .name = "opencl", .lang = TL_GPU_OPENCL, .target_env = "TL_OPENCL_TARGET", .open = open_cl, .close = close_cl,
    .info = info_cl, .stats = stats_cl, .alloc = alloc_cl, .free = free_cl, .size = size_cl, .write = write_cl,
    .read = read_cl, .copy = copy_cl, .kernel = kernel_cl, .launch = launch_cl, .finish = finish_cl};

static tl_gpu_probe opencl_probe;
static const char *unavailable_cl(void) { return tl_gpu_unavailable(&opencl_driver, &opencl_probe); }
static const char *found_cl(void) { return tl_gpu_found(&opencl_driver, &opencl_probe); }

const tl_backend_i tl_backend_opencl =
    TL_GPU_BACKEND("opencl", "OpenCL C kernels on an OpenCL device", opencl_driver, unavailable_cl, found_cl);
