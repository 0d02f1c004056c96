/* rt_ops.c — tensor operations of compiled TL programs: the engine call, and a
 * run-time error at the TL location when it fails (see rt_ops.h). */
#include "lang/rt/rt_ops.h"

#include "core/dtype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define CHECK(expr) tlrt_check(R, (expr), line, col)

static int axis_arg(tlrt *R, tl_tensor *t, int64_t d, bool extra, int line, int col) {
  int nd = tl_ndim(t) + (extra ? 1 : 0);
  if (d < -nd || d >= nd || (nd == 0 && !extra))
    tlrt_fail(R, line, col, "dim %lld is out of range for a tensor with %d ax%s", (long long)d, tl_ndim(t),
              tl_ndim(t) == 1 ? "is" : "es");
  return (int)(d < 0 ? d + nd : d);
}

/* a % b on floats: C's fmod and Rust's `%` (the sign of a), as the engine's integer
 * remainder truncates too: a - b * trunc(a / b), trunc through i64 where |a / b| < 2^52
 * (a larger float is whole already; the cast is off the gradient's path, so d/da is 1
 * and d/db is -trunc(a / b), fmod's own); an infinite b leaves a, as fmod does */
static tl_tensor *float_mod(tlrt *R, tl_tensor *a, tl_tensor *b, int line, int col) {
  tl_tensor *q = CHECK(tl_div(a, b));
  tl_dtype dt = tl_get_dtype(q);
  tl_tensor *qd = CHECK(tl_detach(q)), *qi = CHECK(tl_cast(qd, TL_I64)), *qt = CHECK(tl_cast(qi, dt));
  tl_tensor *aq = CHECK(tl_abs(qd)), *lim = CHECK(tl_scalar(R->ctx, dt, 4503599627370496.0));
  tl_tensor *small = CHECK(tl_lt(aq, lim)), *tq = CHECK(tl_where(small, qt, qd));
  tl_tensor *bt = CHECK(tl_mul(b, tq)), *r0 = CHECK(tl_sub(a, bt));
  tl_tensor *ab = CHECK(tl_abs(b)), *inf = CHECK(tl_scalar(R->ctx, dt, INFINITY)), *binf = CHECK(tl_eq(ab, inf));
  tl_tensor *af = tl_get_dtype(a) == dt ? tlrt_tensor_retain(R, a) : CHECK(tl_cast(a, dt));
  tl_tensor *r = CHECK(tl_where(binf, af, r0));
  tl_tensor *tmp[] = {q, qd, qi, qt, aq, lim, small, tq, bt, r0, ab, inf, binf, af};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tl_release(tmp[i]);
  return r;
}

tl_tensor *tlrt_binop(tlrt *R, int op, tl_tensor *a, tl_tensor *b, int line, int col) {
  typedef tl_tensor *(*bin)(tl_tensor *, tl_tensor *);
  static const bin fns[] = {tl_add, tl_sub, tl_mul, tl_div, tl_mod, tl_lt, tl_gt,
                            tl_le,  tl_ge,  tl_eq,  tl_ne,  tl_pow, tl_maximum, tl_minimum};
  if ((op == TLRT_OP_DIV || op == TLRT_OP_MOD) && tl_get_dtype(a) != TL_F32 && tl_get_dtype(a) != TL_F64 && tl_get_dtype(b) != TL_F32 &&
      tl_get_dtype(b) != TL_F64 && tl_numel(b) > 0) { /* no divisor, no zero: max of nothing is an error */
    tl_tensor *k = CHECK(tl_scalar(R->ctx, tl_get_dtype(b), 0));
    tl_tensor *zero = CHECK(tl_eq(b, k));
    tl_tensor *zi = CHECK(tl_cast(zero, TL_I64));
    double any = 0;
    tl_tensor *m = CHECK(tl_max(zi, 0, NULL, 0));
    tlrt_check_status(R, tl_item(m, &any), line, col);
    tl_tensor *garbage[] = {k, zero, zi, m};
    for (int i = 0; i < 4; i++) tl_release(garbage[i]);
    if (any != 0) tlrt_fail(R, line, col, op == TLRT_OP_DIV ? "integer division by zero" : "integer remainder by zero");
  }
  if (op == TLRT_OP_MOD && tl_dtype_is_float(tl_dtype_promote(tl_get_dtype(a), tl_get_dtype(b)))) return float_mod(R, a, b, line, col);
  return CHECK(fns[op](a, b));
}

tl_tensor *tlrt_binop_s(tlrt *R, int op, tl_tensor *t, double s, int sdt, int scalar_left, int is_const, int line,
                        int col) {
  tl_dtype dt = tl_dtype_promote_scalar(tl_get_dtype(t), (tl_dtype)sdt);
  tl_tensor *k = is_const ? CHECK(tl_scalar(R->ctx, dt, s)) : tlrt_scalar(R, dt, s);
  tl_tensor *r = scalar_left ? tlrt_binop(R, op, k, t, line, col) : tlrt_binop(R, op, t, k, line, col);
  tl_release(k);
  return r;
}

tl_tensor *tlrt_keep_dtype(tlrt *R, tl_tensor *old, tl_tensor *now, const char *op, int line, int col) {
  tl_dtype was = tl_get_dtype(old), is = tl_get_dtype(now);
  if (is == was) return tlrt_tensor_retain(R, now);
  if (tl_dtype_kind(is) > tl_dtype_kind(was))
    tlrt_fail(R, line, col, "`%s` would change the tensor's dtype from %s to %s", op, tl_dtype_name(was), tl_dtype_name(is));
  return CHECK(tl_cast(now, was));
}

tl_tensor *tlrt_binop_t0(tlrt *R, int op, tl_tensor *t, tl_tensor *p, int p_left, int line, int col) {
  tl_dtype dt = tl_get_dtype(t);
  if (dt != TL_F32 && dt != TL_F64) /* an integer or bool tensor: the number's rule (no history to keep) */
    return tlrt_binop_s(R, op, t, tlrt_item(R, p, line, col), tl_get_dtype(p), p_left, 0, line, col);
  tl_tensor *q = dt == tl_get_dtype(p) ? tlrt_tensor_retain(R, p) : CHECK(tl_cast(p, dt));
  tl_tensor *r = p_left ? tlrt_binop(R, op, q, t, line, col) : tlrt_binop(R, op, t, q, line, col);
  tlrt_tensor_release(R, q);
  return r;
}

void tlrt_grad_check(tlrt *R, tl_tensor *t, int *said, const char *why, int line, int col) {
  if (*said || !t || !tl_requires_grad(t) || !tl_grad_enabled(R->ctx)) return;
  *said = 1;
  fprintf(R->err ? R->err : stderr,
          "%s:%d:%d: warning: this number is read from a tensor that requires grad, but its gradient stops here: %s\n",
          R->file, line, col, why);
}

double tlrt_grad_lost(tlrt *R, tl_tensor *p, int *said, const char *why, int line, int col) {
  tlrt_grad_check(R, p, said, why, line, col);
  return tlrt_item(R, p, line, col);
}

tl_tensor *tlrt_unop(tlrt *R, int op, tl_tensor *a, int line, int col) {
  typedef tl_tensor *(*un)(tl_tensor *);
  static const un fns[] = {tl_neg,  tl_logical_not, tl_exp,  tl_log,  tl_sqrt, tl_sin, tl_cos,
                           tl_tanh, tl_sigmoid,     tl_relu, tl_gelu, tl_abs, tl_gelu_tanh, tl_log1p, tl_expm1, tl_erf};
  if (op >= TLRT_UNOP_FLOOR) tlrt_fail(R, line, col, "floor, ceil and round work on scalars, not on tensors yet");
  return CHECK(fns[op](a));
}

tl_tensor *tlrt_reduce(tlrt *R, int op, tl_tensor *a, int has_dim, int64_t dim, int line, int col) {
  int ax = has_dim ? axis_arg(R, a, dim, false, line, col) : 0;
  int all[TL_MAX_DIMS], nall = has_dim ? 1 : tl_ndim(a); /* no dim: every axis */
  for (int i = 0; i < TL_MAX_DIMS; i++) all[i] = has_dim ? ax : i;
  switch (op) {
  case TLRT_RED_SUM: return CHECK(tl_sum(a, nall, all, 0));
  case TLRT_RED_MEAN: return CHECK(tl_mean(a, nall, all, 0));
  case TLRT_RED_MAX: return CHECK(tl_max(a, nall, all, 0));
  case TLRT_RED_MIN: return CHECK(tl_min(a, nall, all, 0));
  case TLRT_RED_ARGMAX: return CHECK(tl_argmax(a, ax, 0));
  case TLRT_RED_ARGMIN: return CHECK(tl_argmin(a, ax, 0));
  case TLRT_RED_SOFTMAX: return CHECK(tl_softmax(a, ax));
  case TLRT_RED_PROD: return CHECK(tl_prod(a, nall, all, 0));
  default: return CHECK(tl_log_softmax(a, ax));
  }
}

tl_tensor *tlrt_clamp(tlrt *R, tl_tensor *a, double lo, int lo_dt, double hi, int hi_dt, int line, int col) {
  if (lo > hi) tlrt_fail(R, line, col, "clamp: the lower bound %g is above the upper bound %g", lo, hi);
  tl_tensor *x = tlrt_binop_s(R, TLRT_OP_MAX, a, lo, lo_dt, 0, 0, line, col);
  tl_tensor *y = tlrt_binop_s(R, TLRT_OP_MIN, x, hi, hi_dt, 0, 0, line, col);
  tl_release(x);
  return y;
}

tl_tensor *tlrt_to_dtype(tlrt *R, tl_tensor *a, int dtype, int line, int col) {
  return CHECK(tl_cast(a, (tl_dtype)dtype));
}

void tlrt_realize(tlrt *R, tl_tensor *t, int line, int col) {
  if (t) tlrt_check_status(R, tl_realize(t), line, col);
}

int64_t tlrt_len(tlrt *R, tl_tensor *t, int line, int col) {
  if (tl_ndim(t) == 0) tlrt_fail(R, line, col, "a 0-d tensor has no length (read it with .item())");
  return tl_dim(t, 0);
}

int64_t tlrt_dim(tlrt *R, tl_tensor *t, int64_t axis, int line, int col) {
  return tl_dim(t, axis_arg(R, t, axis, false, line, col));
}

tl_tensor *tlrt_new(tlrt *R, int kind, int ndim, const int64_t *dims, double value, bool requires_grad, int line,
                    int col) {
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0) tlrt_fail(R, line, col, "a shape cannot have a negative dimension (%lld)", (long long)dims[i]);
  tl_tensor *t;
  switch (kind) {
  case TLRT_NEW_ZEROS: t = tl_zeros(R->ctx, TL_F32, ndim, dims); break;
  case TLRT_NEW_ONES: t = tl_ones(R->ctx, TL_F32, ndim, dims); break;
  case TLRT_NEW_FULL: t = tl_full(R->ctx, TL_F32, ndim, dims, value); break;
  /* lazy, like any tensor: the stream is the kernel's data, so fresh noise in a loop
   * runs one compiled kernel */
  case TLRT_NEW_RANDN: t = tl_randn(R->ctx, TL_F32, ndim, dims); break;
  default: t = tl_rand(R->ctx, TL_F32, ndim, dims); break;
  }
  CHECK(t);
  if (requires_grad) {
    tlrt_check_status(R, tl_realize(t), line, col); /* a leaf holds data, not a compiled constant */
    tlrt_check_status(R, tl_set_requires_grad(t, 1), line, col);
  }
  return t;
}

tl_tensor *tlrt_arange(tlrt *R, int nargs, double a, double b, double step, bool is_float, int line, int col) {
  if (nargs == 1) b = a, a = 0;
  if (nargs < 3) step = 1;
  if (step == 0) tlrt_fail(R, line, col, "arange: the step cannot be 0");
  return CHECK(tl_arange(R->ctx, is_float ? TL_F32 : TL_I64, a, b, step));
}

/* torch.linspace: steps values from start to end, each half computed from its own end
 * (start + i * step, end - (steps - 1 - i) * step), as torch's CPU kernel */
tl_tensor *tlrt_linspace(tlrt *R, double start, double end, int64_t steps, int line, int col) {
  if (steps < 0 || steps > ((int64_t)1 << 28))
    tlrt_fail(R, line, col, "linspace: steps must be in 0..2^28, not %lld", (long long)steps);
  float *v = malloc(sizeof *v * (size_t)(steps ? steps : 1));
  if (!v) tlrt_fail(R, line, col, "linspace: out of memory for %lld values", (long long)steps);
  double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
  for (int64_t i = 0; i < steps; i++)
    v[i] = (float)(steps == 1 ? start : i < steps / 2 ? start + (double)i * step : end - (double)(steps - 1 - i) * step);
  tl_tensor *t = tl_from_data(R->ctx, TL_F32, 1, (int64_t[]){steps}, v);
  free(v);
  return CHECK(t);
}

tl_tensor *tlrt_eye(tlrt *R, int64_t n, int line, int col) {
  if (n < 0) tlrt_fail(R, line, col, "eye: the size cannot be negative (%lld)", (long long)n);
  return CHECK(tl_eye(R->ctx, TL_F32, n));
}

tl_tensor *tlrt_cat(tlrt *R, bool stack, int n, tl_tensor *const *ts, int64_t dim, int line, int col) {
  int ax = axis_arg(R, ts[0], dim, stack, line, col);
  return CHECK(stack ? tl_stack(n, ts, ax) : tl_cat(n, ts, ax));
}

tl_tensor *tlrt_reshape(tlrt *R, tl_tensor *a, int ndim, const int64_t *dims, int line, int col) {
  return CHECK(tl_reshape(a, ndim, dims));
}

tl_tensor *tlrt_transpose(tlrt *R, tl_tensor *a, int64_t d0, int64_t d1, int line, int col) {
  return CHECK(tl_transpose(a, axis_arg(R, a, d0, false, line, col), axis_arg(R, a, d1, false, line, col)));
}

tl_tensor *tlrt_permute(tlrt *R, tl_tensor *a, int n, const int64_t *dims, int line, int col) {
  int perm[TL_MAX_DIMS];
  if (n != tl_ndim(a)) tlrt_fail(R, line, col, "permute: %d dims given for a tensor with %d axes", n, tl_ndim(a));
  for (int i = 0; i < n && i < TL_MAX_DIMS; i++) perm[i] = axis_arg(R, a, dims[i], false, line, col);
  return CHECK(tl_permute(a, perm));
}

tl_tensor *tlrt_unsqueeze(tlrt *R, tl_tensor *a, int64_t d, int line, int col) {
  return CHECK(tl_unsqueeze(a, axis_arg(R, a, d, true, line, col)));
}

tl_tensor *tlrt_expand(tlrt *R, tl_tensor *a, int ndim, const int64_t *dims, int line, int col) {
  return CHECK(tl_expand(a, ndim, dims));
}

tl_tensor *tlrt_flip(tlrt *R, tl_tensor *a, int64_t d, int line, int col) {
  int ax = axis_arg(R, a, d, false, line, col);
  return CHECK(tl_flip(a, 1, &ax));
}

/* cumsum along axis ax as a product with the upper-triangular ones U (U[j][i] = j <= i):
 * the engine's matmul and its gradient give the running sums and theirs (O(n^2) per row,
 * fine for the lengths programs scan). Integers go through f64, exact up to 2^53. */
tl_tensor *tlrt_cumsum(tlrt *R, tl_tensor *a, int64_t d, int line, int col) {
  int ax = axis_arg(R, a, d, false, line, col), last = tl_ndim(a) - 1;
  tl_dtype dt = tl_get_dtype(a), work = dt == TL_F32 || dt == TL_F64 ? dt : TL_F64;
  int64_t n = tl_dim(a, ax);
  tl_ctx *ctx = tl_context(a);
  tl_tensor *idx = CHECK(tl_arange(ctx, TL_I64, 0, (double)n, 1));
  tl_tensor *col_v = CHECK(tl_reshape(idx, 2, (int64_t[]){n, 1})), *row_v = CHECK(tl_reshape(idx, 2, (int64_t[]){1, n}));
  tl_tensor *le = CHECK(tl_le(col_v, row_v)), *u = CHECK(tl_cast(le, work));
  tl_tensor *x = work == dt ? tlrt_tensor_retain(R, a) : CHECK(tl_cast(a, work));
  tl_tensor *xt = ax == last ? tlrt_tensor_retain(R, x) : CHECK(tl_transpose(x, ax, last));
  tl_tensor *y = CHECK(tl_matmul(xt, u));
  tl_tensor *yt = ax == last ? tlrt_tensor_retain(R, y) : CHECK(tl_transpose(y, ax, last));
  tl_tensor *r = work == dt ? tlrt_tensor_retain(R, yt) : CHECK(tl_cast(yt, dt == TL_BOOL ? TL_I64 : dt));
  tl_tensor *tmp[] = {idx, col_v, row_v, le, u, x, xt, y, yt};
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) tl_release(tmp[i]);
  return r;
}

tl_tensor *tlrt_squeeze(tlrt *R, tl_tensor *a, int64_t d, int line, int col) {
  return CHECK(tl_squeeze(a, axis_arg(R, a, d, false, line, col)));
}

tl_tensor *tlrt_shape_of(tlrt *R, tl_tensor *a) {
  int64_t dims[TL_MAX_DIMS];
  double v[TL_MAX_DIMS];
  int n = tl_ndim(a);
  for (int i = 0; i < n; i++) v[i] = (double)tl_dim(a, i);
  dims[0] = n;
  return tlrt_from_f64(R, TL_I64, 1, dims, v);
}

tl_tensor *tlrt_matmul(tlrt *R, tl_tensor *a, tl_tensor *b, int line, int col) { return CHECK(tl_matmul(a, b)); }

tl_tensor *tlrt_clone(tlrt *R, tl_tensor *a, int line, int col) {
  tl_tensor *c = CHECK(tl_contiguous(a));
  tlrt_check_status(R, tl_realize(c), line, col); /* its own storage, now */
  return c;
}

tl_tensor *tlrt_index_ints(tlrt *R, tl_tensor *t, int n, const int64_t *idx, int line, int col) {
  tlrt_ix spec[TL_MAX_DIMS];
  if (n > TL_MAX_DIMS) n = TL_MAX_DIMS;
  for (int i = 0; i < n; i++) spec[i] = (tlrt_ix){.is_range = false, .lo = idx[i]};
  return tlrt_index(R, t, n, spec, line, col);
}

void tlrt_backward(tlrt *R, tl_tensor *t, int line, int col) {
  if (!tl_requires_grad(t))
    tlrt_fail(R, line, col, "backward() on a tensor that does not require grad (no input of it requires grad)");
  if (tl_numel(t) != 1) tlrt_fail(R, line, col, "backward() needs a tensor with one element (a loss), this one has %lld",
                                  (long long)tl_numel(t));
  tlrt_check_status(R, tl_backward(t, NULL), line, col);
}

tl_tensor *tlrt_detach(tlrt *R, tl_tensor *t, int line, int col) { return CHECK(tl_detach(t)); }

void tlrt_enable_grad(tlrt *R, tl_tensor **t, int line, int col) {
  if (tl_requires_grad(*t)) return;
  tl_dtype dt = tl_get_dtype(*t);
  if (dt != TL_F32 && dt != TL_F64) tlrt_fail(R, line, col, "enable_grad() needs a float tensor, not %s", tl_dtype_name(dt));
  tlrt_tensor_make_unique(R, t, line, col); /* a write: other copies keep their own value */
  tlrt_check_status(R, tl_set_requires_grad(*t, 1), line, col);
}

void tlrt_zero_grad(tlrt *R, tl_tensor *t, int line, int col) {
  if (!tl_requires_grad(t)) tlrt_fail(R, line, col, "zero_grad() on a tensor that does not require grad");
  tlrt_check_status(R, tl_zero_grad(t), line, col);
}

tl_tensor *tlrt_loss(tlrt *R, int cross_entropy, tl_tensor *a, tl_tensor *b, int line, int col) {
  tl_dtype bt = tl_get_dtype(b);
  if (cross_entropy && (bt == TL_F32 || bt == TL_F64) && tl_ndim(a) == 2) {
    /* float targets holding class numbers, the seed language's spelling */
    tl_tensor *classes = tlrt_whole_indices(R, b, tl_dim(a, 1), "cross_entropy", "target", "class", line, col);
    tl_tensor *r = tl_cross_entropy(a, classes);
    tl_release(classes);
    return CHECK(r);
  }
  return CHECK(cross_entropy ? tl_cross_entropy(a, b) : tl_mse_loss(a, b));
}

/* ---- comprehensions ---- */

tl_tensor *tlrt_iota(tlrt *R, int rank, int axis, int64_t lo, int64_t hi, int line, int col) {
  if (hi < lo) hi = lo; /* an empty range: nothing to generate */
  tl_tensor *a = CHECK(tl_arange(R->ctx, TL_I64, (double)lo, (double)hi, 1));
  int64_t shape[TL_MAX_DIMS];
  for (int i = 0; i < rank; i++) shape[i] = i == axis ? hi - lo : 1;
  tl_tensor *r = CHECK(tl_reshape(a, rank, shape));
  tl_release(a);
  return r;
}

/* a gather as a one-hot contraction, so it fuses and differentiates like any other
 * op: out[p] = sum_m t_flat[m] * (flat_index[p] == m); an index out of range reads 0 */
tl_tensor *tlrt_gather(tlrt *R, tl_tensor *t, int n, tl_tensor *const *idx, int line, int col) {
  if (n != tl_ndim(t))
    tlrt_fail(R, line, col, "the tensor has %d ax%s, indexed with %d", tl_ndim(t), tl_ndim(t) == 1 ? "is" : "es", n);
  tl_tensor *flat = NULL, *valid = NULL;
  for (int i = 0; i < n; i++) {
    int64_t size = tl_dim(t, i);
    tl_tensor *zero = CHECK(tl_scalar(R->ctx, TL_I64, 0)), *top = CHECK(tl_scalar(R->ctx, TL_I64, (double)size));
    tl_tensor *ge = CHECK(tl_ge(idx[i], zero)), *lt = CHECK(tl_lt(idx[i], top));
    tl_tensor *gei = CHECK(tl_cast(ge, TL_I64)), *lti = CHECK(tl_cast(lt, TL_I64));
    tl_tensor *ok = CHECK(tl_mul(gei, lti));
    tl_tensor *v2 = valid ? CHECK(tl_mul(valid, ok)) : tlrt_tensor_retain(R, ok);
    tl_tensor *f2;
    if (flat) {
      tl_tensor *scaled = CHECK(tl_mul(flat, top));
      f2 = CHECK(tl_add(scaled, idx[i]));
      tl_release(scaled);
    } else f2 = tlrt_tensor_retain(R, idx[i]);
    tl_tensor *garbage[] = {zero, top, ge, lt, gei, lti, ok, valid, flat};
    for (int j = 0; j < 9; j++)
      if (garbage[j]) tl_release(garbage[j]);
    valid = v2;
    flat = f2;
  }
  int64_t numel = tl_numel(t);
  tl_tensor *tflat = CHECK(tl_reshape(t, 1, &numel));
  int fr = tl_ndim(flat);
  tl_tensor *fx = CHECK(tl_unsqueeze(flat, fr)); /* [..., 1] against [numel] */
  tl_tensor *m = CHECK(tl_arange(R->ctx, TL_I64, 0, (double)numel, 1));
  tl_tensor *hot = CHECK(tl_eq(fx, m));
  tl_tensor *vx = CHECK(tl_unsqueeze(valid, fr));
  tl_tensor *hoti = CHECK(tl_cast(hot, TL_I64));
  tl_tensor *hotv = CHECK(tl_mul(hoti, vx));
  tl_tensor *hotf = CHECK(tl_cast(hotv, tl_get_dtype(t)));
  tl_tensor *prod = CHECK(tl_mul(hotf, tflat));
  int ax = fr;
  tl_tensor *r = CHECK(tl_sum(prod, 1, &ax, 0));
  tl_tensor *garbage[] = {flat, valid, tflat, fx, m, hot, vx, hoti, hotv, hotf, prod};
  for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) tl_release(garbage[i]);
  return r;
}

tl_tensor *tlrt_sum_axes(tlrt *R, tl_tensor *t, uint64_t mask, int line, int col) {
  int axes[64], n = 0;
  for (int i = 0; i < tl_ndim(t); i++)
    if (mask >> i & 1) axes[n++] = i;
  if (!n) return tlrt_tensor_retain(R, t);
  return CHECK(tl_sum(t, n, axes, 0));
}

/* softplus(x) = max(x, 0) + log1p(exp(-|x|)), which never overflows */
static tl_tensor *softplus(tlrt *R, tl_tensor *x, tl_tensor *zero, int line, int col) {
  tl_tensor *t[5];
  t[0] = CHECK(tl_maximum(x, zero));
  t[1] = CHECK(tl_abs(x));
  t[2] = CHECK(tl_neg(t[1]));
  t[3] = CHECK(tl_exp(t[2]));
  t[4] = CHECK(tl_log1p(t[3]));
  tl_tensor *r = CHECK(tl_add(t[0], t[4]));
  for (int i = 0; i < 5; i++) tl_release(t[i]);
  return r;
}

tl_tensor *tlrt_pad_last(tlrt *R, tl_tensor *x, int64_t before, int64_t after, double value, int line, int col) {
  int nd = tl_ndim(x);
  if (nd == 0) tlrt_fail(R, line, col, "pad: a 0-d tensor has no axis to pad");
  if (before < 0 || after < 0) tlrt_fail(R, line, col, "pad: the padding (%lld, %lld) is negative", (long long)before, (long long)after);
  int64_t lo[TL_MAX_DIMS] = {0}, hi[TL_MAX_DIMS] = {0};
  lo[nd - 1] = before;
  hi[nd - 1] = after;
  return CHECK(tl_pad(x, lo, hi, value));
}

tl_tensor *tlrt_norm(tlrt *R, tl_tensor *x, double p, int line, int col) {
  if (!(p > 0) || isinf(p)) tlrt_fail(R, line, col, "norm: the order %g is not a positive finite number", p);
  tl_tensor *a = CHECK(tl_abs(x)), *q = p == 1.0 ? tlrt_tensor_retain(R, a) : CHECK(tl_pow_scalar(a, p));
  int all[TL_MAX_DIMS];
  for (int i = 0; i < TL_MAX_DIMS; i++) all[i] = i;
  tl_tensor *s = CHECK(tl_sum(q, tl_ndim(q), all, 0));
  tl_tensor *r = p == 1.0 ? tlrt_tensor_retain(R, s) : CHECK(tl_pow_scalar(s, 1.0 / p));
  tl_release(a);
  tl_release(q);
  tl_release(s);
  return r;
}

tl_tensor *tlrt_dropout(tlrt *R, tl_tensor *x, double p, bool training, int line, int col) {
  if (!(p >= 0.0 && p <= 1.0)) tlrt_fail(R, line, col, "dropout probability %g is outside 0..1", p);
  if (p == 1.0 && training) return CHECK(tl_mul_scalar(x, 0.0)); /* torch's: all zero, no 1/0 */
  return CHECK(tl_dropout(x, p, training));
}

tl_tensor *tlrt_activation(tlrt *R, int kind, tl_tensor *x, double k, int line, int col) {
  tl_tensor *zero = CHECK(tl_scalar(R->ctx, tl_get_dtype(x), 0)), *r;
  if (kind == 3 || kind == 4) { /* hardsigmoid: min(max(x + 3, 0), 6) / 6; hardswish: x times that */
    tl_tensor *six = CHECK(tl_scalar(R->ctx, tl_get_dtype(x), 6)), *t[4];
    t[0] = CHECK(tl_add_scalar(x, 3.0));
    t[1] = CHECK(tl_maximum(t[0], zero));
    t[2] = CHECK(tl_minimum(t[1], six));
    t[3] = CHECK(tl_mul_scalar(t[2], 1.0 / 6.0));
    r = kind == 3 ? tl_retain(t[3]) : tl_mul(x, t[3]);
    for (int i = 0; i < 4; i++) tl_release(t[i]);
    tl_release(six);
  } else if (kind == 2) { /* mish: x tanh(softplus(x)) */
    tl_tensor *sp = softplus(R, x, zero, line, col), *th = CHECK(tl_tanh(sp));
    r = tl_mul(x, th);
    tl_release(sp);
    tl_release(th);
  } else { /* leaky_relu: x or k x; elu: x or k (exp(x) - 1) */
    tl_tensor *pos = CHECK(tl_gt(x, zero)), *e = NULL;
    if (kind == 1) { /* exp of x <= 0 only, minus 1: a large x's exp (inf) would make the unused branch's gradient NaN */
      tl_tensor *m = CHECK(tl_where(pos, zero, x)), *ex = CHECK(tl_exp(m)); /* x <= 0: torch's side at 0 */
      e = CHECK(tl_add_scalar(ex, -1.0));
      tl_release(m);
      tl_release(ex);
    }
    tl_tensor *neg = CHECK(tl_mul_scalar(e ? e : x, k));
    r = tl_where(pos, x, neg);
    tl_release(pos);
    tl_release(neg);
    if (e) tl_release(e);
  }
  tl_release(zero);
  return CHECK(r);
}

tl_tensor *tlrt_bce_loss(tlrt *R, tl_tensor *prob, tl_tensor *target, int line, int col) {
  return CHECK(tl_binary_cross_entropy(prob, target));
}

tl_tensor *tlrt_l1_loss(tlrt *R, tl_tensor *pred, tl_tensor *target, int line, int col) {
  tl_tensor *d = CHECK(tl_sub(pred, target)); /* shapes that do not broadcast: the engine's message */
  tl_tensor *a = CHECK(tl_abs(d));
  tl_tensor *r = tl_mean(a, 0, NULL, 0);
  tl_release(d);
  tl_release(a);
  return CHECK(r);
}

tl_tensor *tlrt_var(tlrt *R, tl_tensor *x, int64_t dim, bool all, bool sd, int line, int col) {
  int axes[TL_MAX_DIMS], na = 0;
  int64_t n = 1;
  if (all)
    for (int i = 0; i < tl_ndim(x); i++) axes[na++] = i;
  else axes[na++] = axis_arg(R, x, dim, false, line, col);
  for (int i = 0; i < na; i++) n *= tl_dim(x, axes[i]);
  tl_tensor *mean = CHECK(tl_mean(x, na, axes, 1));
  tl_tensor *d = CHECK(tl_sub(x, mean));
  tl_tensor *sq = CHECK(tl_mul(d, d));
  tl_tensor *sum = CHECK(tl_sum(sq, na, axes, 0));
  /* n - 1 = 0 divides 0 by 0: NaN, as torch gives for one element */
  tl_tensor *v = CHECK(tl_mul_scalar(sum, n > 1 ? 1.0 / (double)(n - 1) : NAN));
  tl_tensor *garbage[] = {mean, d, sq, sum};
  for (int i = 0; i < 4; i++) tl_release(garbage[i]);
  if (!sd) return v;
  tl_tensor *r = tl_sqrt(v);
  tl_release(v);
  return CHECK(r);
}

tl_tensor *tlrt_where(tlrt *R, tl_tensor *c, tl_tensor *a, tl_tensor *b, int line, int col) {
  return CHECK(tl_where(c, a, b));
}

tl_tensor *tlrt_expand_to(tlrt *R, tl_tensor *t, int ndim, const int64_t *shape, int line, int col) {
  return CHECK(tl_expand(t, ndim, shape));
}

tl_tensor *tlrt_compr_view(tlrt *R, tl_tensor *t, int rank, int n, const int *axes, const int64_t *lo,
                           const int64_t *hi, int line, int col) {
  if (n != tl_ndim(t))
    tlrt_fail(R, line, col, "the tensor has %d ax%s, indexed with %d", tl_ndim(t), tl_ndim(t) == 1 ? "is" : "es", n);
  tl_tensor *cur = tlrt_tensor_retain(R, t);
  for (int j = 0; j < n; j++) {
    int64_t size = tl_dim(t, j), b = lo[j], e = hi[j] > lo[j] ? hi[j] : lo[j];
    if (b < 0 || e > size)
      tlrt_fail(R, line, col, "index range %lld..%lld is out of range for axis %d of size %lld", (long long)b,
                (long long)e, j, (long long)size);
    if (b == 0 && e == size) continue;
    tl_tensor *s = CHECK(tl_slice(cur, j, b, e, 1));
    tl_release(cur);
    cur = s;
  }
  /* order t's axes by their place in the space, then add the missing axes as 1 */
  int perm[TL_MAX_DIMS], k = 0;
  for (int a = 0; a < rank; a++)
    for (int j = 0; j < n; j++)
      if (axes[j] == a) perm[k++] = j;
  tl_tensor *p = CHECK(tl_permute(cur, perm));
  tl_release(cur);
  int64_t shape[64];
  for (int a = 0; a < rank; a++) shape[a] = 1;
  for (int j = 0; j < n; j++) shape[axes[j]] = (hi[j] > lo[j] ? hi[j] - lo[j] : 0);
  tl_tensor *r = CHECK(tl_reshape(p, rank, shape));
  tl_release(p);
  return r;
}
