/* fuzz_capi.c — the C API harness: a byte string decoded into a sequence of calls
 * (creation with shapes and dtypes from the bytes, movement, elementwise, reductions,
 * matmul, autograd, scopes, releases) on a stack of up to 8 tensors. Errors (shape
 * mismatches, bad axes) are expected and cleared; a crash or a leak is a finding. */
#include "fuzz.h"
#include "tl.h"

#include <string.h>

#define FUZZ_SLOTS 8
#define FUZZ_MAX_OPS 64

typedef struct {
  const uint8_t *p, *end;
} fuzz_bytes;

static unsigned fuzz_byte(fuzz_bytes *b) { return b->p < b->end ? *b->p++ : 0; }

static tl_dtype fuzz_dtype(fuzz_bytes *b) {
  static const tl_dtype d[] = {TL_F32, TL_F64, TL_I32, TL_I64, TL_BOOL};
  return d[fuzz_byte(b) % 5];
}

/* a shape of rank 0..3 with dimensions 0..5: small, so no call allocates much */
static int fuzz_shape(fuzz_bytes *b, int64_t *shape) {
  int ndim = (int)(fuzz_byte(b) % 4);
  for (int i = 0; i < ndim; i++) shape[i] = fuzz_byte(b) % 6;
  return ndim;
}

static tl_tensor *fuzz_make(tl_ctx *ctx, fuzz_bytes *b) {
  int64_t shape[4];
  tl_dtype dt = fuzz_dtype(b);
  unsigned kind = fuzz_byte(b) % 4;
  int ndim = fuzz_shape(b, shape);
  if (kind == 0) return tl_full(ctx, dt, ndim, shape, (double)(int8_t)fuzz_byte(b) / 4.0);
  if (kind == 1) return tl_arange(ctx, dt, 0, (double)(fuzz_byte(b) % 12), 1);
  if (kind == 2) return tl_rand(ctx, TL_F32, ndim, shape);
  return tl_scalar(ctx, dt, (double)(int8_t)fuzz_byte(b));
}

static tl_tensor *fuzz_unary(tl_tensor *a, unsigned op) {
  tl_tensor *(*const f[])(tl_tensor *) = {tl_neg,  tl_exp,        tl_log,         tl_sqrt,       tl_tanh,
                                          tl_sigmoid, tl_relu,    tl_abs,         tl_reciprocal, tl_logical_not,
                                          tl_contiguous, tl_detach, tl_log1p,     tl_sin,        tl_cos,
                                          tl_gelu,  tl_gelu_tanh};
  return f[op % (sizeof f / sizeof f[0])](a);
}

static tl_tensor *fuzz_binary(tl_tensor *a, tl_tensor *b, unsigned op) {
  tl_tensor *(*const f[])(tl_tensor *, tl_tensor *) = {tl_add, tl_sub, tl_mul, tl_div, tl_mod, tl_pow,
                                                       tl_maximum, tl_lt, tl_eq, tl_matmul};
  return f[op % (sizeof f / sizeof f[0])](a, b);
}

static tl_tensor *fuzz_reduce(tl_tensor *a, fuzz_bytes *b) {
  int axis = (int)(fuzz_byte(b) % 5) - 2, keep = (int)(fuzz_byte(b) & 1);
  switch (fuzz_byte(b) % 6) {
  case 0: return tl_sum(a, 1, &axis, keep);
  case 1: return tl_max(a, 1, &axis, keep);
  case 2: return tl_mean(a, 0, NULL, keep);
  case 3: return tl_argmax(a, axis, keep);
  case 4: return tl_softmax(a, axis);
  default: return tl_prod(a, 1, &axis, keep);
  }
}

static tl_tensor *fuzz_move(tl_tensor *a, fuzz_bytes *b) {
  int64_t shape[4];
  int perm[TL_MAX_DIMS] = {2, 0, 1, 3, 4, 5, 6, 7}; /* one entry an axis: as long as any rank */
  switch (fuzz_byte(b) % 6) {
  case 0: { int n = fuzz_shape(b, shape); return tl_reshape(a, n, shape); }
  case 1: return tl_permute(a, perm);
  case 2: return tl_transpose(a, (int)(fuzz_byte(b) % 3) - 1, 0);
  case 3: { int n = fuzz_shape(b, shape); return tl_expand(a, n, shape); }
  case 4: return tl_slice(a, 0, (int64_t)(fuzz_byte(b) % 4) - 1, fuzz_byte(b) % 6, (int64_t)(fuzz_byte(b) % 3) - 1);
  default: return tl_unsqueeze(a, (int)(fuzz_byte(b) % 4) - 1);
  }
}

/* autograd: a sum of the slot as loss, backward, read the gradient */
static void fuzz_backward(tl_tensor *a, tl_tensor *leaf) {
  tl_tensor *loss = tl_sum(a, 0, NULL, 0);
  if (loss && tl_backward(loss, NULL) == TL_OK) {
    tl_tensor *g = tl_grad(leaf);
    if (g) tl_realize(g);
  }
}

int tl_fuzz_capi(const uint8_t *data, size_t size) {
  fuzz_bytes b = {data, data + size};
  tl_ctx *ctx = tl_init();
  if (!ctx) return 0;
  tl_set_backend(ctx, (fuzz_byte(&b) & 0x80) ? "cpu" : "interp");
  tl_tensor *slot[FUZZ_SLOTS] = {0};
  tl_tensor *leaf = tl_rand(ctx, TL_F32, 1, (int64_t[]){3});
  tl_set_requires_grad(leaf, 1);
  slot[0] = leaf;
  tl_scope *scopes[4];
  int nscopes = 0;
  for (int op = 0; op < FUZZ_MAX_OPS && b.p < b.end; op++) {
    unsigned code = fuzz_byte(&b), i = fuzz_byte(&b) % FUZZ_SLOTS, j = fuzz_byte(&b) % FUZZ_SLOTS;
    tl_tensor *a = slot[i] ? slot[i] : leaf, *c = slot[j] ? slot[j] : leaf, *r = NULL;
    switch (code % 10) {
    case 0: r = fuzz_make(ctx, &b); break;
    case 1: r = fuzz_unary(a, fuzz_byte(&b)); break;
    case 2: r = fuzz_binary(a, c, fuzz_byte(&b)); break;
    case 3: r = fuzz_reduce(a, &b); break;
    case 4: r = fuzz_move(a, &b); break;
    case 5: r = tl_cast(a, fuzz_dtype(&b)); break;
    case 6: tl_realize(a); break;
    case 7: fuzz_backward(a, leaf); break;
    case 8:
      if (nscopes < 4 && (fuzz_byte(&b) & 1)) scopes[nscopes++] = tl_scope_begin(ctx, "fuzz");
      else if (nscopes > 0) {
        tl_scope_end(scopes[--nscopes]);
        memset(slot, 0, sizeof slot); /* their tensors may have gone with the scope */
        slot[0] = leaf;
      }
      break;
    default:
      if (slot[i] && slot[i] != leaf && nscopes == 0) { tl_release(slot[i]); slot[i] = NULL; }
      break;
    }
    if (r) slot[j] = r;
    tl_clear_error(ctx);
  }
  while (nscopes > 0) tl_scope_end(scopes[--nscopes]);
  return tl_fuzz_end(ctx);
}
