/* device.c — values moved between backends through host memory: a buffer's bytes
 * copied into another backend's memory, and the backward pass of tl_to, whose
 * gradient is computed where the copy lives and copied back to the input's backend.
 * in: buffers, backends, autograd nodes; out: new buffers and nodes, errors. */
#include <stdlib.h>

#include "api/context.h"
#include "autograd/autograd.h"

/* a new buffer of `to` holding b's bytes (b is from's), through host memory; NULL with
 * ctx's error */
tl_buffer *tl_api_copy_between(tl_ctx *ctx, tl_backend *from, tl_backend *to, const tl_buffer *b) {
  tl_buffer *nb = tl_api_buffer_on(ctx, to, "to", (tl_dtype)b->dtype, b->numel);
  void *tmp = nb && b->nbytes ? malloc(b->nbytes) : NULL;
  tl_status st = !nb ? ctx->err.status
                 : b->nbytes && !tmp ? tl_error_set(&ctx->err, TL_ERR_NOMEM, "to: out of memory")
                                     : TL_OK;
  if (!st && b->nbytes) st = from->i->copy_to_host(from, tmp, b, 0, b->nbytes, &ctx->err);
  if (!st && b->nbytes) st = to->i->copy_from_host(to, nb, 0, tmp, b->nbytes, &ctx->err);
  free(tmp);
  if (st && nb) tl_buffer_release(nb);
  return st ? NULL : nb;
}

tl_uop *tl_api_buffer_node(tl_ctx *ctx, tl_buffer *b, const tl_uop *like) {
  tl_arg arg = {.p = b};
  return tl_uop_make(&ctx->graph, TL_OP_BUFFER, (tl_dtype)like->dtype, 0, NULL, arg, 0, like->ndim, like->shape);
}

tl_status tl_api_move_grad(tl_ctx *ctx, tl_ag_node *n) {
  tl_backend *input = &ctx->backends[n->p[0] - 1], *output = &ctx->backends[n->p[1] - 1], *current = ctx->be;
  ctx->be = output; /* the gradient's values are where the copy was */
  tl_status st = tl_api_realize_node(ctx, n->grad);
  ctx->be = current;
  if (st || n->grad->op != TL_OP_BUFFER) return st; /* a constant is anywhere */
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_buffer *nb = tl_api_copy_between(ctx, output, input, n->grad->arg.p);
  tl_uop *moved = nb ? tl_api_buffer_node(ctx, nb, n->grad) : NULL;
  if (nb) tl_buffer_release(nb);
  if (moved) {
    tl_uop_retain(moved);
    tl_uop_release(&ctx->graph, n->grad);
    n->grad = moved;
  }
  tl_graph_release_to(&ctx->graph, mark);
  return moved ? TL_OK : ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
}

