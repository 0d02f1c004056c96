/* cuda_driver.h — the CUDA driver under the cuda backend: libcuda.so.1 and NVRTC loaded
 * at run time (dlopen: no build-time dependency), the first GPU, its buffers, kernels
 * compiled from CUDA C by NVRTC (nvrtc.h; once per process, their cubin or PTX kept in
 * the kernel cache directory) and launched on the context's stream.
 * in: CUDA C source, sizes, host bytes; out: device buffers, results, and errors that
 * say what failed: "not available" with the reason, NVRTC's log, device out-of-memory
 * as TL_ERR_NOMEM.
 *
 * One thread drives a tl_cuda at a time (the backend's realize); several tl_cudas may
 * run on several threads, sharing the process's CUDA context and kernels. */
#ifndef TL_RUNTIME_CUDA_DRIVER_H
#define TL_RUNTIME_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "runtime/nvrtc.h"

typedef struct tl_cuda tl_cuda;
typedef struct tl_cu_buf tl_cu_buf;

typedef struct {
  uint64_t builds, module_hits; /* kernels compiled by NVRTC; found already loaded */
  uint64_t disk_hits;           /* cubins or PTX found in the kernel cache directory */
  uint64_t live_buffers, live_bytes, peak_bytes, allocs;
} tl_cuda_stats;

/* the process's GPU: TL_CUDA_DEVICE's index if set (0 past the last), else the
 * launcher's local rank (mpirun's OMPI_COMM_WORLD_LOCAL_RANK ...) modulo the GPUs, so
 * ranks on one machine take different GPUs, else the first (TL_CUDA_LIB names the
 * driver library, for tests). Unavailable: TL_ERR_BACKEND, "cuda: not available
 * (REASON)" */
tl_status tl_cuda_open(tl_cuda **out, tl_error *err);
uint64_t tl_cuda_close(tl_cuda *c); /* frees everything; returns the buffers still live */
/* one line for `tl devices`, and the limits */
void tl_cuda_describe(const tl_cuda *c, char *out, size_t cap, int *cc_major, int *cc_minor, int *max_threads,
                      size_t *shared_bytes);
tl_cuda_stats tl_cuda_get_stats(const tl_cuda *c);

tl_status tl_cuda_alloc(tl_cuda *c, size_t bytes, tl_cu_buf **out, tl_error *err);
void tl_cuda_free(tl_cuda *c, tl_cu_buf *b);
size_t tl_cu_buf_size(const tl_cu_buf *b);
const void *tl_cu_buf_handle(const tl_cu_buf *b); /* the CUdeviceptr's address: a launch parameter */
tl_status tl_cuda_write(tl_cuda *c, tl_cu_buf *b, size_t off, const void *src, size_t n, tl_error *err);
tl_status tl_cuda_read(tl_cuda *c, const tl_cu_buf *b, size_t off, void *dst, size_t n, tl_error *err);
tl_status tl_cuda_copy(tl_cuda *c, const tl_cu_buf *src, size_t src_off, tl_cu_buf *dst, size_t dst_off, size_t n,
                       tl_error *err);

/* the function `tl_kernel` of src, compiled and loaded once per process */
tl_status tl_cuda_kernel(tl_cuda *c, const char *src, void **fn, tl_error *err);
/* runs fn with params (each argument's address) on global / local work-items a
 * dimension (global a multiple of local); queued in order */
tl_status tl_cuda_launch(tl_cuda *c, void *fn, int nargs, void **params, int dims, const size_t *global,
                         const size_t *local, tl_error *err);
tl_status tl_cuda_finish(tl_cuda *c, tl_error *err);

/* for a library that queues its own work on c's stream (NCCL, src/dist): the CUstream,
 * with the process's CUDA context made current on the calling thread; and a buffer's
 * CUdeviceptr */
void *tl_cuda_stream(tl_cuda *c);
uint64_t tl_cu_buf_address(const tl_cu_buf *b);
/* the GPU chosen among count (the rule of tl_cuda_open) */
int tl_cuda_device_index(int count);

#endif
