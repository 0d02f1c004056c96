/* rt_ops.h — tensor operations of compiled TL programs (LANGUAGE.md §5): each one
 * calls the engine and turns a failure into a run-time error at the TL source
 * location (line, col). Results are owned (one reference). Also the inline scalar
 * helpers the generated code uses (checked integer division, saturating casts). */
#ifndef TL_LANG_RT_OPS_H
#define TL_LANG_RT_OPS_H

#include "lang/rt/rt.h"

enum { /* binary ops: the order gen.c's tensor_op uses */
  TLRT_OP_ADD, TLRT_OP_SUB, TLRT_OP_MUL, TLRT_OP_DIV, TLRT_OP_MOD, TLRT_OP_LT, TLRT_OP_GT, TLRT_OP_LE,
  TLRT_OP_GE, TLRT_OP_EQ, TLRT_OP_NE, TLRT_OP_POW, TLRT_OP_MAX, TLRT_OP_MIN
};
enum { /* unary ops */
  TLRT_UNOP_NEG, TLRT_UNOP_NOT, TLRT_UNOP_EXP, TLRT_UNOP_LOG, TLRT_UNOP_SQRT, TLRT_UNOP_SIN, TLRT_UNOP_COS,
  TLRT_UNOP_TANH, TLRT_UNOP_SIGMOID, TLRT_UNOP_RELU, TLRT_UNOP_GELU, TLRT_UNOP_ABS, TLRT_UNOP_GELU_TANH, TLRT_UNOP_LOG1P, TLRT_UNOP_EXPM1, TLRT_UNOP_ERF, TLRT_UNOP_FLOOR,
  TLRT_UNOP_CEIL, TLRT_UNOP_ROUND
};
enum { /* reductions and friends */
  TLRT_RED_SUM, TLRT_RED_MEAN, TLRT_RED_MAX, TLRT_RED_MIN, TLRT_RED_ARGMAX, TLRT_RED_ARGMIN, TLRT_RED_SOFTMAX,
  TLRT_RED_LOG_SOFTMAX, TLRT_RED_PROD
};
enum { TLRT_NEW_ZEROS, TLRT_NEW_ONES, TLRT_NEW_FULL, TLRT_NEW_RANDN, TLRT_NEW_RAND };

TL_API tl_tensor *tlrt_binop(tlrt *R, int op, tl_tensor *a, tl_tensor *b, int line, int col);
/* tensor (op) scalar, or scalar (op) tensor when scalar_left, computed in the dtype
 * tl_dtype_promote_scalar gives (sdt: the scalar's dtype, i64 for an integer literal);
 * a literal scalar (is_const) is compiled into kernels, a computed one is passed as data */
TL_API tl_tensor *tlrt_binop_s(tlrt *R, int op, tl_tensor *t, double s, int sdt, int scalar_left, int is_const, int line,
                               int col);
/* the value of `x op= y` (now) in x's (old's) dtype, as torch's in-place operations:
 * converted within a kind (f64 to f32, i64 to i32), refused across kinds (f32 into
 * an integer tensor, an integer into a bool one); a new reference */
TL_API tl_tensor *tlrt_keep_dtype(tlrt *R, tl_tensor *old, tl_tensor *now, const char *op, int line, int col);
TL_API tl_tensor *tlrt_unop(tlrt *R, int op, tl_tensor *a, int line, int col);
/* t (op) p, p a 0-d tensor standing for a number read from tensor elements (p_left:
 * p (op) t): as tlrt_binop_s with that number, p taking a float t's dtype as a number
 * would, but p's history kept, so its gradient flows (sema_grad.c) */
TL_API tl_tensor *tlrt_binop_t0(tlrt *R, int op, tl_tensor *t, tl_tensor *p, int p_left, int line, int col);
/* p's number (item), where it becomes a plain number that meets a tensor elsewhere:
 * when p requires grad and grad recording is on, a warning at (line, col), once
 * (*said), that the gradient stops here and why (`why`) */
TL_API double tlrt_grad_lost(tlrt *R, tl_tensor *p, int *said, const char *why, int line, int col);
/* that warning, for t (a tensor an element is read from), without computing anything */
TL_API void tlrt_grad_check(tlrt *R, tl_tensor *t, int *said, const char *why, int line, int col);
TL_API tl_tensor *tlrt_reduce(tlrt *R, int op, tl_tensor *a, int has_dim, int64_t dim, int line, int col);
TL_API tl_tensor *tlrt_clamp(tlrt *R, tl_tensor *a, double lo, int lo_dt, double hi, int hi_dt, int line, int col);
TL_API tl_tensor *tlrt_to_dtype(tlrt *R, tl_tensor *a, int dtype, int line, int col);
TL_API void tlrt_realize(tlrt *R, tl_tensor *t, int line, int col); /* NULL-safe */
TL_API int64_t tlrt_len(tlrt *R, tl_tensor *t, int line, int col);  /* size of the first axis */
TL_API int64_t tlrt_dim(tlrt *R, tl_tensor *t, int64_t axis, int line, int col);

/* creation; shape as dims */
TL_API tl_tensor *tlrt_new(tlrt *R, int kind, int ndim, const int64_t *dims, double value, bool requires_grad, int line, int col);
TL_API tl_tensor *tlrt_arange(tlrt *R, int nargs, double a, double b, double step, bool is_float, int line, int col);
TL_API tl_tensor *tlrt_eye(tlrt *R, int64_t n, int line, int col);
TL_API tl_tensor *tlrt_linspace(tlrt *R, double start, double end, int64_t steps, int line, int col);
TL_API tl_tensor *tlrt_cat(tlrt *R, bool stack, int n, tl_tensor *const *ts, int64_t dim, int line, int col);

/* shape */
TL_API tl_tensor *tlrt_reshape(tlrt *R, tl_tensor *a, int ndim, const int64_t *dims, int line, int col);
TL_API tl_tensor *tlrt_transpose(tlrt *R, tl_tensor *a, int64_t d0, int64_t d1, int line, int col);
TL_API tl_tensor *tlrt_permute(tlrt *R, tl_tensor *a, int n, const int64_t *dims, int line, int col);
TL_API tl_tensor *tlrt_unsqueeze(tlrt *R, tl_tensor *a, int64_t d, int line, int col);
TL_API tl_tensor *tlrt_expand(tlrt *R, tl_tensor *a, int ndim, const int64_t *dims, int line, int col);
TL_API tl_tensor *tlrt_flip(tlrt *R, tl_tensor *a, int64_t d, int line, int col);
/* running sums along d (torch's cumsum; bool counts as i64), with autograd */
TL_API tl_tensor *tlrt_cumsum(tlrt *R, tl_tensor *a, int64_t d, int line, int col);
TL_API tl_tensor *tlrt_squeeze(tlrt *R, tl_tensor *a, int64_t d, int line, int col);
TL_API tl_tensor *tlrt_shape_of(tlrt *R, tl_tensor *a);
TL_API tl_tensor *tlrt_matmul(tlrt *R, tl_tensor *a, tl_tensor *b, int line, int col);
TL_API tl_tensor *tlrt_clone(tlrt *R, tl_tensor *a, int line, int col);
/* t[i, j] with fewer indices than axes: a view */
TL_API tl_tensor *tlrt_index_ints(tlrt *R, tl_tensor *t, int n, const int64_t *idx, int line, int col);

/* autograd */
TL_API void tlrt_backward(tlrt *R, tl_tensor *t, int line, int col);
TL_API tl_tensor *tlrt_detach(tlrt *R, tl_tensor *t, int line, int col);
TL_API void tlrt_enable_grad(tlrt *R, tl_tensor **t, int line, int col);
TL_API void tlrt_zero_grad(tlrt *R, tl_tensor *t, int line, int col);
TL_API tl_tensor *tlrt_loss(tlrt *R, int cross_entropy, tl_tensor *a, tl_tensor *b, int line, int col);

/* comprehensions: an index axis of an iteration space of `rank` axes: shape 1 but
 * `hi - lo` at `axis`, values lo.. (i64) */
TL_API tl_tensor *tlrt_iota(tlrt *R, int rank, int axis, int64_t lo, int64_t hi, int line, int col);
/* t's elements at integer index tensors idx[0..n) (broadcast together): a gather */
TL_API tl_tensor *tlrt_gather(tlrt *R, tl_tensor *t, int n, tl_tensor *const *idx, int line, int col);
/* t[v_0, ..., v_k] where every v_j is a distinct index variable: a view of t with
 * axis j sliced to [lo_j, hi_j) and moved to axis axes[j] of a space of `rank` axes */
TL_API tl_tensor *tlrt_compr_view(tlrt *R, tl_tensor *t, int rank, int n, const int *axes, const int64_t *lo,
                           const int64_t *hi, int line, int col);
/* sum over the axes in `mask`, then drop them */
TL_API tl_tensor *tlrt_sum_axes(tlrt *R, tl_tensor *t, uint64_t mask, int line, int col);
/* kind 0 x.leaky_relu(k): x where x > 0, else k x; 1 x.elu(k): else k (exp(x) - 1); 2 x.mish():
 * x tanh(softplus(x)); 3 x.hardsigmoid(): min(max(x + 3, 0), 6) / 6; 4 x.hardswish(): x times that;
 * pred.l1_loss(target): mean |pred - target|; bce_loss: tl_binary_cross_entropy */
/* torch's F.pad(x, (before, after), value) on the last axis (no negative padding) and
 * norm(p) = (sum |x|^p)^(1/p) over every element, p > 0 */
TL_API tl_tensor *tlrt_pad_last(tlrt *R, tl_tensor *x, int64_t before, int64_t after, double value, int line, int col);
TL_API tl_tensor *tlrt_norm(tlrt *R, tl_tensor *x, double p, int line, int col);
/* torch's dropout: training zeroes each element with probability p (0 <= p <= 1) and
 * scales the rest by 1/(1-p); not training, x itself */
TL_API tl_tensor *tlrt_dropout(tlrt *R, tl_tensor *x, double p, bool training, int line, int col);
TL_API tl_tensor *tlrt_activation(tlrt *R, int kind, tl_tensor *x, double k, int line, int col);
TL_API tl_tensor *tlrt_bce_loss(tlrt *R, tl_tensor *prob, tl_tensor *target, int line, int col);
TL_API tl_tensor *tlrt_l1_loss(tlrt *R, tl_tensor *pred, tl_tensor *target, int line, int col);
/* pred.nll_loss(target) (rt_nn.c): torch's with class indices (pred [.., C], target
 * its shape less the last axis, whole numbers in [0, C)): -mean of pred at them; the
 * seed's with a target of pred's shape (one-hot or soft): -mean of pred * target over
 * every element. p.kl_div_loss(q), the seed's (p and q probabilities, not torch's
 * log-input kl_div): mean over every element of q ln((q + 1e-7) / (p + 1e-7)), 0 where
 * q <= 1e-7. */
TL_API tl_tensor *tlrt_nll_loss(tlrt *R, tl_tensor *pred, tl_tensor *target, int line, int col);
TL_API tl_tensor *tlrt_kl_div_loss(tlrt *R, tl_tensor *p, tl_tensor *q, int line, int col);
/* torch's logical_and (op 0), logical_or (1) of a and b, logical_not (2) of a (b NULL):
 * nonzero is true, the result bool (rt_nn.c) */
TL_API tl_tensor *tlrt_logical(tlrt *R, int op, tl_tensor *a, tl_tensor *b, int line, int col);
/* x.topk(k): the k largest values along the last axis, descending (ties: the earlier
 * first), torch's values (the seed's topk); k outside 0..n is a run-time error. The
 * positions are found on the host; the values are x times their one-hot rows, so a
 * gradient goes back to the elements picked. */
TL_API tl_tensor *tlrt_topk(tlrt *R, tl_tensor *x, int64_t k, int line, int col);
/* x.var(dim), x.std(dim) (all: over every element): torch's unbiased estimates, composed
 * of mean, sub, mul, sum (so autograd goes through) */
TL_API tl_tensor *tlrt_var(tlrt *R, tl_tensor *x, int64_t dim, bool all, bool sd, int line, int col);
TL_API tl_tensor *tlrt_where(tlrt *R, tl_tensor *c, tl_tensor *a, tl_tensor *b, int line, int col);
/* broadcast t to the full iteration space `shape` */
TL_API tl_tensor *tlrt_expand_to(tlrt *R, tl_tensor *t, int ndim, const int64_t *shape, int line, int col);

/* tensor files and more tensor methods (rt_io.c). A .safetensors file saved from one
 * tensor holds it under this name. */
#define TLRT_TENSOR_FILE_NAME "tensor"
TL_API void tlrt_tensor_save(tlrt *R, tl_tensor *t, const tlrt_str *path, int line, int col);
/* name NULL: a .npy file, or a .safetensors file holding exactly one tensor */
TL_API tl_tensor *tlrt_tensor_load(tlrt *R, const tlrt_str *path, const tlrt_str *name, int line, int col);
TL_API tlrt_str *tlrt_device(tlrt *R, tl_tensor *t, int line, int col);
TL_API tl_tensor *tlrt_to_device(tlrt *R, tl_tensor *t, const tlrt_str *name, int line, int col);
/* a model's tensor fields by dotted name: saved as one .safetensors file; loaded into
 * the fields (each field's handle replaced), every name and shape checked first */
TL_API void tlrt_params_save(tlrt *R, const tlrt_str *path, int n, const char *const *names, tl_tensor *const *ts,
                             int line, int col);
TL_API void tlrt_params_load(tlrt *R, const tlrt_str *path, int n, const char *const *names, tl_tensor **const *fields,
                             int line, int col);
TL_API tl_tensor *tlrt_full_like(tlrt *R, tl_tensor *t, double v, int line, int col);
TL_API tl_tensor *tlrt_tri(tlrt *R, tl_tensor *t, int64_t k, bool upper, int line, int col);
TL_API tl_tensor *tlrt_masked_fill(tlrt *R, tl_tensor *t, tl_tensor *mask, double v, int line, int col);
/* cond.where(a, b): a where cond (nonzero) holds, else b, broadcast (torch.where) */
/* t.rand_like() (U[0,1)), t.randn_like() (N(0,1)): t's float dtype and shape, from the run's stream */
TL_API tl_tensor *tlrt_rand_like(tlrt *R, tl_tensor *t, bool normal, int line, int col);
TL_API tl_tensor *tlrt_where_mask(tlrt *R, tl_tensor *cond, tl_tensor *a, tl_tensor *b, int line, int col);
TL_API tl_tensor *tlrt_slice(tlrt *R, tl_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step, int line, int col);
TL_API tl_tensor *tlrt_slice_len(tlrt *R, tl_tensor *t, int64_t start, int64_t len, int line, int col);
/* kind 0: narrow(dim, start, len) (torch's); 1: chunk(chunks, dim, i), piece i of
 * torch's chunk (pieces of ceil(n / chunks)); 2: split(size, dim, i), piece i of torch's
 * split (pieces of size): the seed's spellings, one piece each */
TL_API tl_tensor *tlrt_part(tlrt *R, tl_tensor *t, int kind, int64_t a, int64_t b, int64_t c, int line, int col);
TL_API tl_tensor *tlrt_detach_grad(tlrt *R, tl_tensor *t, bool requires_grad, int line, int col);
TL_API void tlrt_clear_grads(tlrt *R); /* every leaf's gradient back to none (zeros) */

/* layer methods (rt_nn.c); bias may be NULL; padding and stride apply to both axes */
TL_API tl_tensor *tlrt_conv2d(tlrt *R, tl_tensor *x, tl_tensor *kernel, tl_tensor *bias, int64_t padding, int64_t stride,
                              int line, int col);
/* padding: -inf for max, zeros counted in the mean for avg (PyTorch's defaults), at most k / 2 */
TL_API tl_tensor *tlrt_pool2d(tlrt *R, tl_tensor *x, int64_t k, int64_t stride, int64_t padding, bool is_max, int line,
                              int col);
TL_API tl_tensor *tlrt_layer_norm(tlrt *R, tl_tensor *x, tl_tensor *w, tl_tensor *b, double eps, int line, int col);
/* A float tensor of indices (the seed language's spelling) as an i64 one: each value
 * must be a whole number in [0, n), else a run-time error `what: the index at [i, j]
 * is ...` naming unit ("row", "class"). The result is the caller's. */
TL_API tl_tensor *tlrt_whole_indices(tlrt *R, tl_tensor *indices, int64_t n, const char *what, const char *index,
                                     const char *unit, int line, int col);
TL_API tl_tensor *tlrt_embedding(tlrt *R, tl_tensor *indices, tl_tensor *weights, int line, int col);
/* x [N, C, ..] normalized per channel of axis 1, then times weight and plus bias
 * (each [C]): kind 0 batch_norm (k nonzero: training, with the batch's mean and biased
 * variance over every axis but 1; else rm and rv, the running ones, which stay as they
 * are: TL's tensors are values), 1 group_norm (k groups of C / k channels, over each
 * group and the axes after 1), 2 instance_norm (over the axes after 1). torch's. */
/* x.linear(w, b): x @ w^T + b (b may be NULL); x.conv1d(w [O, C, K], b, stride, padding)
 * on x [N, C, L], as conv2d on one row; x.resample(oh, ow, mode) on [N, C, H, W]:
 * mode 0 nearest (torch's interpolate), 1 bilinear with the corners aligned (the
 * seed's), 2 torch's adaptive_avg_pool2d: each axis a weight matrix applied by matmul,
 * so gradients flow (rt_nn.c) */
TL_API tl_tensor *tlrt_linear(tlrt *R, tl_tensor *x, tl_tensor *w, tl_tensor *b, int line, int col);
TL_API tl_tensor *tlrt_conv1d(tlrt *R, tl_tensor *x, tl_tensor *w, tl_tensor *b, int64_t stride, int64_t pad, int line, int col);
TL_API tl_tensor *tlrt_resample(tlrt *R, tl_tensor *x, int64_t oh, int64_t ow, int64_t mode, int line, int col);
TL_API tl_tensor *tlrt_norm_layer(tlrt *R, int kind, tl_tensor *x, tl_tensor *rm, tl_tensor *rv, tl_tensor *w, tl_tensor *b,
                                  int64_t k, double eps, int line, int col);
/* p.adam_step(grad, m, v, step, lr, beta1, beta2, eps, weight_decay): one AdamW step
 * (decoupled decay; bias correction with t = step + 1, as the reference language);
 * *p, *m and *v are replaced by new realized leaves (*p requiring grad if it did) */
TL_API void tlrt_adam_step(tlrt *R, tl_tensor **p, tl_tensor *grad, tl_tensor **m, tl_tensor **v, int64_t step,
                           double lr, double beta1, double beta2, double eps, double weight_decay, int line, int col);

/* ---- inline scalar helpers (the generated code's) ---- */
static inline int64_t tl__div64(tlrt *R, int64_t a, int64_t b, int line, int col) {
  if (__builtin_expect(b == 0, 0)) tlrt_fail(R, line, col, "integer division by zero");
  return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static inline int64_t tl__mod64(tlrt *R, int64_t a, int64_t b, int line, int col) {
  if (__builtin_expect(b == 0, 0)) tlrt_fail(R, line, col, "integer remainder by zero");
  return b == -1 ? 0 : a % b;
}
static inline int32_t tl__div32(tlrt *R, int32_t a, int32_t b, int line, int col) {
  if (__builtin_expect(b == 0, 0)) tlrt_fail(R, line, col, "integer division by zero");
  return b == -1 ? (int32_t)(0 - (uint32_t)a) : a / b;
}
static inline int32_t tl__mod32(tlrt *R, int32_t a, int32_t b, int line, int col) {
  if (__builtin_expect(b == 0, 0)) tlrt_fail(R, line, col, "integer remainder by zero");
  return b == -1 ? 0 : a % b;
}
/* a << b and a >> b (arithmetic), b in 0..bits-1, else an error as Rust's overflow
 * check; the left shift wraps (its bits past the top are dropped) */
static inline int64_t tl__shift64(tlrt *R, int64_t a, int64_t b, int left, int line, int col) {
  if (__builtin_expect(b < 0 || b > 63, 0))
    tlrt_fail(R, line, col, "attempt to shift %s by %lld, outside 0..63", left ? "left" : "right", (long long)b);
  return left ? (int64_t)((uint64_t)a << b) : a >> b;
}
static inline int32_t tl__shift32(tlrt *R, int32_t a, int64_t b, int left, int line, int col) {
  if (__builtin_expect(b < 0 || b > 31, 0))
    tlrt_fail(R, line, col, "attempt to shift %s by %lld, outside 0..31", left ? "left" : "right", (long long)b);
  return left ? (int32_t)((uint32_t)a << b) : a >> b;
}
static inline uint8_t tl__shift8(tlrt *R, uint8_t a, int64_t b, int left, int line, int col) {
  if (__builtin_expect(b < 0 || b > 7, 0))
    tlrt_fail(R, line, col, "attempt to shift %s by %lld, outside 0..7", left ? "left" : "right", (long long)b);
  return left ? (uint8_t)(a << b) : (uint8_t)(a >> b);
}
/* integer x^e exactly, by squaring in u64 and wrapping like the language's other
 * integer arithmetic (Rust's wrapping_pow; a double pow loses digits past 2^53); Rust's
 * exponent is a u32, so a negative one is an error */
static inline uint64_t tl__ipow(tlrt *R, uint64_t x, int64_t e, int line, int col) {
  if (__builtin_expect(e < 0, 0)) tlrt_fail(R, line, col, "pow of an integer with a negative exponent %lld", (long long)e);
  uint64_t r = 1;
  for (; e > 0; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return r;
}
/* float -> integer saturates and NaN gives 0, as Rust's `as`; kind 0 i64, 1 i32, 2 u8 */
static inline int64_t tl__f2i(double x, int kind) {
  double lo = kind == 2 ? 0.0 : kind ? -2147483648.0 : -9223372036854775808.0,
         hi = kind == 2 ? 255.0 : kind ? 2147483647.0 : 9223372036854775807.0;
  if (x != x) return 0;
  if (x <= lo) return kind == 2 ? 0 : kind ? INT32_MIN : INT64_MIN;
  if (x >= hi) return kind == 2 ? 255 : kind ? INT32_MAX : INT64_MAX;
  return (int64_t)x;
}
/* the other integer widths (i8 i16 u16 u32 u64) */
static inline uint64_t tl__divu64(tlrt *R, uint64_t a, uint64_t b, int line, int col) {
  if (__builtin_expect(b == 0, 0)) tlrt_fail(R, line, col, "integer division by zero");
  return a / b;
}
static inline uint64_t tl__modu64(tlrt *R, uint64_t a, uint64_t b, int line, int col) {
  if (__builtin_expect(b == 0, 0)) tlrt_fail(R, line, col, "integer remainder by zero");
  return a % b;
}
/* a (sign- or zero-extended from its bits) shifted; the caller truncates the result */
static inline int64_t tl__shiftn(tlrt *R, int64_t a, int64_t b, int bits, int left, int line, int col) {
  if (__builtin_expect(b < 0 || b >= bits, 0))
    tlrt_fail(R, line, col, "attempt to shift %s by %lld, outside 0..%d", left ? "left" : "right", (long long)b, bits - 1);
  return left ? (int64_t)((uint64_t)a << b) : a >> b;
}
static inline uint64_t tl__shiftu64(tlrt *R, uint64_t a, int64_t b, int bits, int left, int line, int col) {
  if (__builtin_expect(b < 0 || b >= bits, 0))
    tlrt_fail(R, line, col, "attempt to shift %s by %lld, outside 0..%d", left ? "left" : "right", (long long)b, bits - 1);
  return left ? a << b : a >> b;
}
/* float -> an integer in [lo, hi] (both exact in a double), saturating, NaN 0 */
static inline int64_t tl__f2range(double x, int64_t lo, int64_t hi) {
  if (x != x) return 0;
  return x <= (double)lo ? lo : x >= (double)hi ? hi : (int64_t)x;
}
static inline uint64_t tl__f2u64(double x) {
  if (x != x || x <= 0) return 0;
  return x >= 0x1p64 ? UINT64_MAX : (uint64_t)x;
}

/* torch's argsort(dim, descending), gather(dim, idx), scatter(dim, idx, src),
 * scatter_add(dim, idx, src), logsumexp(dim, keepdim), roll(shift, dim), repeat(counts), any(dim), all(dim)
 * (rt_ops_index.c); has_dim false: over every element (roll: the flattened tensor) */
TL_API tl_tensor *tlrt_argsort(tlrt *R, tl_tensor *t, int64_t dim, bool descending, int line, int col);
TL_API tl_tensor *tlrt_gather_dim(tlrt *R, tl_tensor *t, int64_t dim, tl_tensor *index, int line, int col);
TL_API tl_tensor *tlrt_scatter(tlrt *R, tl_tensor *t, int64_t dim, tl_tensor *index, tl_tensor *src, bool add, int line, int col);
TL_API tl_tensor *tlrt_logsumexp(tlrt *R, tl_tensor *t, bool has_dim, int64_t dim, bool keepdim, int line, int col);
TL_API tl_tensor *tlrt_roll(tlrt *R, tl_tensor *t, int64_t shift, bool has_dim, int64_t dim, int line, int col);
TL_API tl_tensor *tlrt_repeat(tlrt *R, tl_tensor *t, int n, const int64_t *reps, int line, int col);
TL_API tl_tensor *tlrt_any_all(tlrt *R, tl_tensor *t, bool all, bool has_dim, int64_t dim, int line, int col);

#endif
