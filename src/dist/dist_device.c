/* dist_device.c — which way a collective's payload goes (docs/distributed.md): cuda
 * tensors by NCCL (nccl_load.c) between the GPUs, on the cuda backend's stream, with no
 * host copy; everything else, and cuda tensors where NCCL cannot be used, by MPI through
 * host memory. Each rank chooses here; the ranks then agree (dist.c's descriptor
 * exchange), and NCCL is used only when every rank chose it. */
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "core/shapetracker.h"
#include "dist/dist.h"
#include "dist/dist_internal.h"
#include "runtime/backend_gpu.h"
#include "runtime/cuda_driver.h"

static tl_dist_paths paths;

tl_dist_paths tl_dist_path_counts(void) { return paths; }
void tl_dist_count_path(bool nccl) { nccl ? paths.nccl++ : paths.staged++; }

bool tl_dist_nccl_choice(const char *backend, const char **why) {
  const char *e = getenv("TL_DIST_NCCL");
  const char *no = NULL;
  if (strcmp(backend, "cuda")) no = "not a cuda tensor";
  else if (e && !strcmp(e, "0")) no = "TL_DIST_NCCL=0";
  else if (tl_mpi_size() < 2) no = "one rank";
  else if (!tl_nccl_usable(&no) && !no) no = "NCCL not usable";
  if (why) *why = no;
  return !no;
}

/* b's device memory when b is a cuda buffer of ctx */
static bool cuda_memory(tl_ctx *ctx, tl_buffer *b, tl_dist_dev *dev) {
  tl_backend *be = tl_api_backend_of(ctx, b);
  if (be->i != &tl_backend_cuda) return false;
  tl_error e = {0};
  if (tl_gpu_device_memory(be, b, &dev->cuda, &dev->buf, &dev->off, &e)) return false; /* staged: it says why */
  dev->be = be;
  tl_cuda_stream(dev->cuda); /* its CUDA context current on this thread: NCCL's calls use it */
  return true;
}

bool tl_dist_nccl_wish(tl_tensor *handle, tl_dist_dev *dev) {
  tl_tensor *t = tl_api_tensor(handle, "dist");
  if (!t || tl_realize(handle) || t->u->op != TL_OP_BUFFER) return false; /* staged: tl_data says why */
  tl_backend *be = tl_api_backend_of(t->slot.ctx, t->u->arg.p);
  return tl_dist_nccl_choice(be->i->name, NULL) && cuda_memory(t->slot.ctx, t->u->arg.p, dev);
}

tl_tensor *tl_dist_new_device_output(tl_ctx *ctx, tl_backend *be, const char *what, tl_dtype dt, int ndim,
                                     const int64_t *shape, tl_dist_dev *dev) {
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_buffer *b = tl_api_buffer_on(ctx, be, what, dt, tl_shape_numel(ndim, shape));
  if (!b) return NULL;
  if (!cuda_memory(ctx, b, dev)) {
    tl_buffer_release(b);
    tl_error_set(&ctx->err, TL_ERR_INTERNAL, "%s: a new cuda buffer is not in cuda memory", what);
    return NULL;
  }
  tl_arg arg = {.p = b};
  tl_uop *u = tl_uop_make(&ctx->graph, TL_OP_BUFFER, dt, 0, NULL, arg, 0, ndim, shape);
  tl_buffer_release(b);
  return tl_api_wrap(ctx, what, u, mark);
}

void *tl_dist_dev_address(const tl_dist_dev *dev) {
  return (void *)(uintptr_t)(tl_cu_buf_address(dev->buf) + dev->off);
}

void *tl_dist_dev_stream(const tl_dist_dev *dev) { return tl_cuda_stream(dev->cuda); }

tl_status tl_dist_dev_copy(const tl_dist_dev *dst, size_t dst_at, const tl_dist_dev *src, size_t n, tl_error *err) {
  return tl_cuda_copy(dst->cuda, src->buf, src->off, dst->buf, dst->off + dst_at, n, err);
}
