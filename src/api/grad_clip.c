/* grad_clip.c — torch.nn.utils' gradient clips over parameters (leaves): each leaf's
 * gradient replaced by its clipped value, computed with public operations and realized
 * before it takes the place of the old one. A leaf without a gradient yet is skipped,
 * as torch skips a `grad` that is None. */
#include <math.h>

#include "api/context.h"
#include "autograd/autograd.h"

/* *ctx: the parameters' context (NULL for none); an error unless each is a leaf that
 * requires grad, all of one context */
static tl_status check_params(int n, tl_tensor *const *params, const char *what, tl_ctx **ctx) {
  *ctx = NULL;
  if (n < 0 || (n > 0 && !params)) {
    tl_api_fail_orphan(TL_ERR_ARG, "%s: %d parameters", what, n);
    return TL_ERR_ARG;
  }
  for (int i = 0; i < n; i++) {
    tl_tensor *t = tl_api_tensor(params[i], what);
    if (!t) return TL_ERR_ARG;
    if (*ctx && t->slot.ctx != *ctx) return tl_error_set(&(*ctx)->err, TL_ERR_ARG, "%s: parameters from different contexts", what);
    *ctx = t->slot.ctx;
    if (!t->ag || t->ag->op != TL_AG_LEAF)
      return tl_error_set(&(*ctx)->err, TL_ERR_ARG, "%s: parameter %d is not a leaf that requires grad", what, i);
  }
  return TL_OK;
}

/* the leaf's gradient as a handle of the current scope, or NULL when it has none */
static tl_tensor *grad_of(tl_tensor *p) {
  tl_tensor *t = tl_api_tensor(p, "grad");
  return t->ag->grad ? tl_grad(p) : NULL;
}

/* g (realized) becomes the leaf's gradient */
static tl_status set_grad(tl_ctx *ctx, tl_tensor *p, tl_tensor *g) {
  if (!g || tl_realize(g) != TL_OK) return ctx->err.status ? ctx->err.status : TL_ERR_NOMEM;
  tl_tensor *t = tl_api_tensor(p, "grad"), *gt = tl_api_tensor(g, "grad");
  tl_uop_retain(gt->u); /* the leaf's own reference, as backward's accumulation holds it */
  tl_uop_release(&ctx->graph, t->ag->grad);
  t->ag->grad = gt->u;
  return TL_OK;
}

tl_status tl_clip_grad_value(int n, tl_tensor *const *params, double clip) {
  tl_ctx *ctx;
  tl_status st = check_params(n, params, "clip_grad_value", &ctx);
  if (st != TL_OK || !ctx) return st;
  if (!(clip >= 0)) return tl_error_set(&ctx->err, TL_ERR_ARG, "clip_grad_value: the clip value must be 0 or more, not %g", clip);
  for (int i = 0; i < n && st == TL_OK; i++) {
    tl_scope *s = tl_scope_begin(ctx, "clip_grad_value");
    tl_tensor *g = grad_of(params[i]);
    if (g) {
      tl_dtype dt = tl_get_dtype(g);
      tl_tensor *lo = tl_cast(tl_full(ctx, TL_F64, 0, NULL, -clip), dt), *hi = tl_cast(tl_full(ctx, TL_F64, 0, NULL, clip), dt);
      st = set_grad(ctx, params[i], tl_minimum(tl_maximum(g, lo), hi));
    }
    tl_scope_end(s);
  }
  return st;
}

tl_status tl_clip_grad_norm(int n, tl_tensor *const *params, double max_norm, double norm_type, double *total_norm) {
  if (total_norm) *total_norm = 0;
  tl_ctx *ctx;
  tl_status st = check_params(n, params, "clip_grad_norm", &ctx);
  if (st != TL_OK || !ctx) return st;
  if (!(max_norm >= 0)) return tl_error_set(&ctx->err, TL_ERR_ARG, "clip_grad_norm: max_norm must be 0 or more, not %g", max_norm);
  if (!(norm_type > 0)) return tl_error_set(&ctx->err, TL_ERR_ARG, "clip_grad_norm: the norm type must be above 0, not %g", norm_type);
  bool inf = isinf(norm_type);
  double total = 0;
  for (int i = 0; i < n && st == TL_OK; i++) { /* the norm of the gradients' norms: their |g|^p summed, in f64 */
    tl_scope *s = tl_scope_begin(ctx, "clip_grad_norm");
    tl_tensor *g = grad_of(params[i]);
    double part = 0;
    if (g && tl_numel(g) > 0) {
      tl_tensor *a = tl_abs(tl_cast(g, TL_F64));
      st = tl_item(inf ? tl_max(a, 0, NULL, 0) : tl_sum(tl_pow_scalar(a, norm_type), 0, NULL, 0), &part);
    }
    total = inf ? fmax(total, part) : total + part;
    tl_scope_end(s);
  }
  if (st != TL_OK) return st;
  if (!inf) total = pow(total, 1 / norm_type);
  if (total_norm) *total_norm = total;
  double coef = max_norm / (total + 1e-6); /* torch's: only ever scaled down */
  for (int i = 0; i < n && st == TL_OK && coef < 1; i++) {
    tl_scope *s = tl_scope_begin(ctx, "clip_grad_norm");
    tl_tensor *g = grad_of(params[i]);
    if (g) st = set_grad(ctx, params[i], tl_mul(g, tl_cast(tl_full(ctx, TL_F64, 0, NULL, coef), tl_get_dtype(g))));
    tl_scope_end(s);
  }
  return st;
}
