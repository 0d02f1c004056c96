#include "interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "core/hash.h"
#include "core/shapetracker.h"
#include "graph/build.h"
#include "graph/rewrite.h"

typedef struct {
  tl_ptrmap done; /* node -> tl_buffer* (one reference held by the map) */
  tl_mem *mem;
  tl_error *err;
} interp;

/* a value: a float as a double, an integer as int64 (u64 as its bits), core/dtype.h */
static tl_value get(const tl_buffer *b, int64_t i) {
  tl_value v;
  if (tl_dtype_is_float((tl_dtype)b->dtype)) v.f = tl_dtype_read(b->data, (tl_dtype)b->dtype, i);
  else v.i = tl_dtype_read_int(b->data, (tl_dtype)b->dtype, i);
  return v;
}

static void set(tl_buffer *b, int64_t i, tl_value v) {
  if (tl_dtype_is_float((tl_dtype)b->dtype)) tl_dtype_write(b->data, (tl_dtype)b->dtype, i, v.f);
  else tl_dtype_write_int(b->data, (tl_dtype)b->dtype, i, v.i);
}

static tl_value num(tl_dtype d, double x) { return tl_value_from_double(d, x); }

static tl_buffer *eval(interp *I, tl_uop *u);

static tl_buffer *new_buf(interp *I, const tl_uop *u) {
  tl_buffer *b = tl_buffer_new((tl_dtype)u->dtype, tl_uop_numel(u), I->mem);
  if (!b) tl_error_set(I->err, TL_ERR_NOMEM, "interp: out of memory");
  return b;
}

static void unravel(int64_t i, int ndim, const int64_t *shape, int64_t *idx) {
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}

static tl_buffer *eval_reduce(interp *I, tl_uop *u, tl_buffer *src) {
  tl_buffer *out = new_buf(I, u);
  if (!out) return NULL;
  int64_t n = tl_uop_numel(u), ns = src->numel, idx[TL_MAX_DIMS], ostr[TL_MAX_DIMS];
  bool fl = tl_dtype_is_float(u->dtype);
  double *accf = calloc((size_t)(n ? n : 1), sizeof *accf);
  tl_value *acci = calloc((size_t)(n ? n : 1), sizeof *acci);
  if (!accf || !acci) {
    free(accf);
    free(acci);
    tl_buffer_release(out);
    tl_error_set(I->err, TL_ERR_NOMEM, "interp: out of memory");
    return NULL;
  }
  for (int64_t j = 0; j < n; j++) {
    double idf = u->op == TL_OP_RSUM ? 0 : u->op == TL_OP_RPROD ? 1 : -INFINITY;
    accf[j] = idf;
    acci[j].i = u->op == TL_OP_RSUM ? 0 : u->op == TL_OP_RPROD ? 1 : (int64_t)tl_dtype_min((tl_dtype)u->dtype);
  }
  tl_shape_strides(u->ndim, u->shape, ostr);
  const tl_uop *s = u->src[0];
  for (int64_t i = 0; i < ns; i++) {
    unravel(i, s->ndim, s->shape, idx);
    int64_t o = 0;
    for (int d = 0; d < u->ndim; d++) o += (u->arg.u >> d & 1) ? 0 : idx[d] * ostr[d];
    tl_value v = get(src, i);
    if (fl) {
      if (u->op == TL_OP_RSUM) accf[o] += v.f;
      else if (u->op == TL_OP_RPROD) accf[o] *= v.f;
      else accf[o] = isnan(accf[o]) || isnan(v.f) ? NAN : TL_MAX(accf[o], v.f); /* NaN wins */
    } else {
      acci[o] = tl_value_apply(u->op == TL_OP_RSUM ? TL_OP_ADD : u->op == TL_OP_RPROD ? TL_OP_MUL : TL_OP_MAX,
                               (tl_dtype)u->dtype, (tl_dtype)u->dtype, acci[o], v, v);
    }
  }
  for (int64_t j = 0; j < n; j++) {
    tl_value v;
    if (fl) v.f = accf[j];
    else v = acci[j];
    set(out, j, v);
  }
  free(accf);
  free(acci);
  return out;
}

/* the values side by side at their offsets (tl_sink_layout); the padding stays zero */
static tl_buffer *eval_sink(interp *I, tl_uop *u) {
  const tl_uop *values[TL_SINK_MAX];
  int64_t offset[TL_SINK_MAX];
  int n = tl_sink_layout(u, values, offset);
  tl_buffer *out = new_buf(I, u);
  if (out) memset(out->data, 0, out->nbytes);
  for (int i = 0; out && i < n; i++) {
    tl_buffer *v = eval(I, (tl_uop *)values[i]);
    if (!v) {
      tl_buffer_release(out);
      return NULL;
    }
    for (int64_t j = 0; j < v->numel; j++) set(out, offset[i] + j, get(v, j));
  }
  return out;
}

/* GATHER and SCATTER_ADD straight from their definitions (uop.h), rows clamped as the
 * kernels clamp them; a scatter sums each row in double, in the order of the indices */
static tl_buffer *eval_indexed(interp *I, tl_uop *u, tl_buffer *x, tl_buffer *ids) {
  tl_buffer *out = new_buf(I, u);
  if (!out) return NULL;
  bool gather = u->op == TL_OP_GATHER;
  int64_t rows = gather ? u->src[0]->shape[0] : u->shape[0], d = u->shape[u->ndim - 1];
  if (gather) {
    for (int64_t o = 0; o < out->numel; o++) {
      int64_t row = tl_clamp_row(get(ids, o / d).i, rows);
      set(out, o, rows ? get(x, row * d + o % d) : (tl_value){0});
    }
    return out;
  }
  double *acc = calloc((size_t)(out->numel ? out->numel : 1), sizeof *acc);
  if (!acc) {
    tl_buffer_release(out);
    tl_error_set(I->err, TL_ERR_NOMEM, "interp: out of memory");
    return NULL;
  }
  for (int64_t i = 0; rows && i < ids->numel; i++) {
    int64_t row = tl_clamp_row(get(ids, i).i, rows);
    for (int64_t k = 0; k < d; k++) acc[row * d + k] += get(x, i * d + k).f;
  }
  for (int64_t o = 0; o < out->numel; o++) set(out, o, (tl_value){.f = acc[o]});
  free(acc);
  return out;
}

/* CONV2D straight from its definition (uop.h), each output a sum in double: mode 0
 * y[n, o, i, j] = sum w[o, c, ki, kj] x[n, c, i*sh + ki - ph, j*sw + kj - pw]; modes 1
 * and 2 add every such product into dx or dw instead */
static tl_buffer *eval_conv(interp *I, tl_uop *u, tl_buffer *a, tl_buffer *b) {
  tl_buffer *out = new_buf(I, u);
  if (!out) return NULL;
  int mode = (int)u->arg2;
  tl_conv_params p = tl_conv_params_unpack(u->arg.i);
  const int64_t *xs = mode == 0 ? u->src[0]->shape : mode == 1 ? u->shape : u->src[1]->shape;
  const int64_t *ws = mode == 2 ? u->shape : u->src[1]->shape, *ys = mode == 0 ? u->shape : u->src[0]->shape;
  double *acc = calloc((size_t)(out->numel ? out->numel : 1), sizeof *acc);
  if (!acc) {
    tl_buffer_release(out);
    tl_error_set(I->err, TL_ERR_NOMEM, "interp: out of memory");
    return NULL;
  }
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], KH = ws[2], KW = ws[3], OH = ys[2], OW = ys[3];
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t i = 0; i < OH; i++)
        for (int64_t j = 0; j < OW; j++)
          for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
              for (int64_t kj = 0; kj < KW; kj++) {
                int64_t h = i * p.sh + ki - p.ph, wc = j * p.sw + kj - p.pw;
                if (h < 0 || h >= H || wc < 0 || wc >= W) continue;
                int64_t xi = ((n * C + c) * H + h) * W + wc, wi = ((o * C + c) * KH + ki) * KW + kj;
                int64_t yi = ((n * O + o) * OH + i) * OW + j;
                if (mode == 0) acc[yi] += get(b, wi).f * get(a, xi).f;
                else if (mode == 1) acc[xi] += get(a, yi).f * get(b, wi).f;
                else acc[wi] += get(a, yi).f * get(b, xi).f;
              }
  for (int64_t k = 0; k < out->numel; k++) set(out, k, (tl_value){.f = acc[k]});
  free(acc);
  return out;
}

static tl_buffer *compute(interp *I, tl_uop *u) {
  if (u->op == TL_OP_BUFFER) {
    tl_buffer *b = u->arg.p;
    if (!b->data && b->nbytes) { /* a device backend's: the caller brings it to the host */
      tl_error_set(I->err, TL_ERR_BACKEND, "interp: an operand is in a device backend's memory (move it with .to(\"interp\"))");
      return NULL;
    }
    tl_buffer_retain(b);
    return b;
  }
  if (u->op == TL_OP_SINK) return eval_sink(I, u);
  tl_buffer *src[3] = {NULL, NULL, NULL}, *out = NULL;
  for (int i = 0; i < u->nsrc; i++)
    if (!(src[i] = eval(I, u->src[i]))) return NULL;
  if (tl_op_kind(u->op) == 'R') return eval_reduce(I, u, src[0]);
  if (u->op == TL_OP_CONV2D) return eval_conv(I, u, src[0], src[1]);
  if (tl_op_kind(u->op) == 'X') return eval_indexed(I, u, src[0], src[1]);
  if (!(out = new_buf(I, u))) return NULL;
  int64_t n = tl_uop_numel(u), idx[TL_MAX_DIMS];
  tl_value zero = {0};
  for (int64_t i = 0; i < n; i++) {
    tl_value v = zero;
    switch (u->op) {
    case TL_OP_CONST: v = tl_dtype_is_float(u->dtype) ? num((tl_dtype)u->dtype, u->arg.f) : (tl_value){.i = u->arg.i}; break;
    case TL_OP_UNIFORM:
      v.f = u->dtype == TL_F32 ? tl_uniform_f32(u->arg.u, (tl_u64)u->arg2, i) : tl_uniform_f64(u->arg.u, (tl_u64)u->arg2, i);
      break;
    case TL_OP_RANDN: {
      double u1, u2;
      tl_u64 s1 = (tl_u64)(u->arg2 + TL_RANDN_STREAM_STEP), s2 = (tl_u64)(u->arg2 + 2 * TL_RANDN_STREAM_STEP);
      u1 = u->dtype == TL_F32 ? tl_uniform_f32(u->arg.u, s1, i) : tl_uniform_f64(u->arg.u, s1, i);
      u2 = u->dtype == TL_F32 ? tl_uniform_f32(u->arg.u, s2, i) : tl_uniform_f64(u->arg.u, s2, i);
      v = num((tl_dtype)u->dtype, sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2));
      break;
    }
    case TL_OP_VIEW: {
      int64_t off;
      unravel(i, u->ndim, u->shape, idx);
      if (tl_st_index(u->arg.p, idx, &off)) v = get(src[0], off);
      break;
    }
    default: {
      tl_value a = get(src[0], i), b = src[1] ? get(src[1], i) : zero, c = src[2] ? get(src[2], i) : zero;
      tl_dtype in = (tl_dtype)u->src[u->op == TL_OP_WHERE ? 1 : 0]->dtype;
      v = tl_value_apply(u->op, (tl_dtype)u->dtype, in, a, b, c); /* fused ops too: the rows define them */
    }
    }
    set(out, i, v);
  }
  return out;
}

static tl_buffer *eval(interp *I, tl_uop *u) {
  tl_buffer *b = tl_ptrmap_get(&I->done, u);
  if (b) return b;
  b = compute(I, u);
  if (b && !tl_ptrmap_put(&I->done, u, b)) {
    tl_buffer_release(b);
    tl_error_set(I->err, TL_ERR_NOMEM, "interp: out of memory");
    return NULL;
  }
  return b;
}

tl_buffer *tl_interp_eval(tl_uop *u, tl_mem *mem, tl_error *err) {
  interp I = {{0}, mem, err};
  tl_buffer *r = eval(&I, u);
  if (r) tl_buffer_retain(r);
  for (size_t i = 0; i < I.done.cap; i++)
    if (I.done.keys[i]) tl_buffer_release(I.done.vals[i]);
  tl_ptrmap_free(&I.done);
  return r;
}
