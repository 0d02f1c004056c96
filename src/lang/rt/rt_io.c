/* rt_io.c — tensor files of compiled TL programs (Tensor::save/load, Param::save/load)
 * and the tensor methods added with them (zeros_like, tril, masked_fill, slice,
 * detach(requires_grad), Tensor::clear_grads), built from the engine's operations so
 * autograd goes through them. Declared in rt_ops.h. Every failure is a run-time error
 * at the TL location; what was allocated here is freed before the error jumps. */
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/format.h" /* tl_format_shape */
#include "lang/rt/rt_dist.h"
#include "lang/rt/rt_ops.h"

#define CHECK(expr) tlrt_check(R, (expr), line, col)

static bool ends_with(const tlrt_str *s, const char *suffix) {
  size_t k = strlen(suffix);
  return (size_t)s->len >= k && !memcmp(s->data + s->len - (int64_t)k, suffix, k);
}

/* the path as a C string: no NUL inside; .npy (1), .safetensors (2), else an error */
static int file_kind(tlrt *R, const tlrt_str *path, const char *what, int line, int col) {
  if (memchr(path->data, 0, (size_t)path->len)) tlrt_fail(R, line, col, "%s: the path holds a NUL byte", what);
  if (ends_with(path, ".npy")) return 1;
  if (ends_with(path, ".safetensors")) return 2;
  tlrt_fail(R, line, col, "%s: %s: unknown file type: the name must end in .npy or .safetensors", what, path->data);
}

void tlrt_tensor_save(tlrt *R, tl_tensor *t, const tlrt_str *path, int line, int col) {
  int kind = file_kind(R, path, "Tensor::save", line, col);
  if (kind == 1) tlrt_check_status(R, tl_save_npy(t, path->data), line, col);
  else {
    const char *name = TLRT_TENSOR_FILE_NAME;
    tlrt_check_status(R, tl_save_safetensors(R->ctx, path->data, 1, &name, &t), line, col);
  }
}

tlrt_str *tlrt_device(tlrt *R, tl_tensor *t, int line, int col) {
  const char *d = tl_device(t);
  if (!d) tlrt_fail(R, line, col, "device: %s", tl_last_error(R->ctx));
  return tlrt_str_new(R, d, (int64_t)strlen(d));
}

tl_tensor *tlrt_to_device(tlrt *R, tl_tensor *t, const tlrt_str *name, int line, int col) {
  if (memchr(name->data, 0, (size_t)name->len)) tlrt_fail(R, line, col, "to: the backend name holds a NUL byte");
  return CHECK(tl_to(t, name->data));
}

tl_tensor *tlrt_tensor_load(tlrt *R, const tlrt_str *path, const tlrt_str *name, int line, int col) {
  int kind = file_kind(R, path, "Tensor::load", line, col);
  if (kind == 1) {
    if (name) tlrt_fail(R, line, col, "Tensor::load: %s: a .npy file holds one unnamed tensor: load it without a name", path->data);
    return CHECK(tl_load_npy(R->ctx, path->data));
  }
  if (name) {
    if (memchr(name->data, 0, (size_t)name->len)) tlrt_fail(R, line, col, "Tensor::load: the name holds a NUL byte");
    return CHECK(tl_load_safetensors_one(R->ctx, path->data, name->data));
  }
  int n = 0;
  char **names = NULL;
  tlrt_check_status(R, tl_load_safetensors(R->ctx, path->data, &n, &names, NULL), line, col);
  if (n == 1) {
    tl_tensor *t = tl_load_safetensors_one(R->ctx, path->data, names[0]);
    tl_free(names);
    return CHECK(t);
  }
  char list[512] = "";
  size_t k = 0;
  for (int i = 0; i < n && k < sizeof list; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", names[i]);
  tl_free(names);
  if (n == 0) tlrt_fail(R, line, col, "Tensor::load: %s holds no tensor", path->data);
  tlrt_fail(R, line, col, "Tensor::load: %s holds %d tensors (%s): name the one to load, `Tensor::load(path, name)`",
            path->data, n, list);
}

void tlrt_params_save(tlrt *R, const tlrt_str *path, int n, const char *const *names, tl_tensor *const *ts, int line,
                      int col) {
  if (file_kind(R, path, "Param::save", line, col) != 2)
    tlrt_fail(R, line, col, "Param::save: %s: parameters are saved as .safetensors", path->data);
  if (tlrt_dist_params_file_here(R, line, col)) /* under mpirun: rank 0 writes (rt_dist.c) */
    tlrt_check_status(R, tl_save_safetensors(R->ctx, path->data, n, names, ts), line, col);
  tlrt_dist_params_saved(R, line, col);
}

/* t's shape as "[2, 3]" (buf: TL_SHAPE_TEXT_MAX bytes) */
static void shape_text(char *buf, size_t len, const tl_tensor *t) {
  int64_t shape[TL_MAX_DIMS];
  int nd = tl_ndim(t);
  for (int i = 0; i < nd; i++) shape[i] = tl_dim(t, i);
  tl_format_shape(buf, len, nd, shape);
}

static bool same_shape(const tl_tensor *a, const tl_tensor *b) {
  if (tl_ndim(a) != tl_ndim(b)) return false;
  for (int i = 0; i < tl_ndim(a); i++)
    if (tl_dim(a, i) != tl_dim(b, i)) return false;
  return true;
}

static void load_file(tlrt *R, const tlrt_str *path, int n, const char *const *names, tl_tensor **const *fields,
                      int line, int col);

void tlrt_params_load(tlrt *R, const tlrt_str *path, int n, const char *const *names, tl_tensor **const *fields,
                      int line, int col) {
  if (tlrt_dist_params_file_here(R, line, col)) /* under mpirun: rank 0 reads, the others get its values */
    load_file(R, path, n, names, fields, line, col);
  tlrt_dist_params_share(R, n, fields, line, col);
}

static void load_file(tlrt *R, const tlrt_str *path, int n, const char *const *names, tl_tensor **const *fields,
                      int line, int col) {
  if (file_kind(R, path, "Param::load", line, col) != 2)
    tlrt_fail(R, line, col, "Param::load: %s: parameters are loaded from .safetensors", path->data);
  int nf = 0;
  char **fnames = NULL;
  tl_tensor **ts = NULL;
  tlrt_check_status(R, tl_load_safetensors(R->ctx, path->data, &nf, &fnames, &ts), line, col);
  int *at = calloc((size_t)(n > 0 ? n : 1), sizeof *at);
  bool *used = calloc((size_t)(nf > 0 ? nf : 1), sizeof *used);
  char msg[768] = "";
  for (int i = 0; i < n && !msg[0] && at && used; i++) {
    at[i] = -1;
    for (int j = 0; j < nf; j++)
      if (!strcmp(fnames[j], names[i])) at[i] = j;
    if (at[i] < 0) {
      snprintf(msg, sizeof msg, "Param::load: %s has no tensor `%s` (a field of the model)", path->data, names[i]);
      break;
    }
    used[at[i]] = true;
    tl_tensor *old = *fields[i], *got = ts[at[i]];
    if (!same_shape(old, got)) {
      char a[TL_SHAPE_TEXT_MAX], b[TL_SHAPE_TEXT_MAX];
      shape_text(a, sizeof a, got);
      shape_text(b, sizeof b, old);
      snprintf(msg, sizeof msg, "Param::load: %s: `%s` has shape %s in the file but %s in the model", path->data,
               names[i], a, b);
    }
  }
  for (int j = 0; j < nf && !msg[0] && used; j++)
    if (!used[j]) snprintf(msg, sizeof msg, "Param::load: %s: `%s` is no tensor field of the model", path->data, fnames[j]);
  if (!at || !used) snprintf(msg, sizeof msg, "Param::load: out of memory");
  if (msg[0]) {
    for (int j = 0; j < nf; j++) tl_release(ts[j]);
    tl_free(ts);
    tl_free(fnames);
    free(at);
    free(used);
    tlrt_fail(R, line, col, "%s", msg);
  }
  /* every name and shape agrees: each field gets a fresh leaf holding the file's values
   * in its own dtype (converted as PyTorch's load_state_dict copies), requiring grad
   * when the field did; the old tensor is released (other copies keep it) */
  tl_status st = TL_OK;
  for (int i = 0; i < n; i++) {
    tl_tensor *got = ts[at[i]], *old = *fields[i];
    ts[at[i]] = NULL;
    if (st == TL_OK && tl_get_dtype(got) != tl_get_dtype(old)) {
      tl_tensor *c = tl_cast(got, tl_get_dtype(old));
      tl_tensor *d = c ? tl_detach(c) : NULL;
      if (d && tl_realize(d) != TL_OK) {
        tl_release(d);
        d = NULL;
      }
      if (c) tl_release(c);
      tl_release(got);
      got = d;
      if (!got) st = TL_ERR_ARG;
    }
    if (got && tl_requires_grad(old) && tl_set_requires_grad(got, 1) != TL_OK) st = TL_ERR_ARG;
    if (!got) continue;
    if (st != TL_OK) {
      tl_release(got);
      continue;
    }
    tlrt_tensor_release(R, old);
    *fields[i] = got;
  }
  for (int j = 0; j < nf; j++)
    if (ts[j]) tl_release(ts[j]);
  tl_free(ts);
  tl_free(fnames);
  free(at);
  free(used);
  tlrt_check_status(R, st, line, col);
}

/* ---- methods ---- */

tl_tensor *tlrt_full_like(tlrt *R, tl_tensor *t, double v, int line, int col) {
  int64_t shape[TL_MAX_DIMS];
  for (int i = 0; i < tl_ndim(t); i++) shape[i] = tl_dim(t, i);
  return CHECK(tl_full(R->ctx, tl_get_dtype(t), tl_ndim(t), shape, v));
}

tl_tensor *tlrt_rand_like(tlrt *R, tl_tensor *t, bool normal, int line, int col) {
  int64_t shape[TL_MAX_DIMS];
  for (int i = 0; i < tl_ndim(t); i++) shape[i] = tl_dim(t, i);
  tl_dtype d = tl_get_dtype(t);
  if (d != TL_F32 && d != TL_F64)
    tlrt_fail(R, line, col, "%s needs a float tensor, not %s", normal ? "randn_like" : "rand_like", tl_dtype_name(d));
  return CHECK(normal ? tl_randn(R->ctx, d, tl_ndim(t), shape) : tl_rand(R->ctx, d, tl_ndim(t), shape));
}

/* keeps the elements on and below (tril) or on and above (triu) the k-th diagonal of
 * the last two axes, zeroes the rest: a where() with a mask from two aranges */
tl_tensor *tlrt_tri(tlrt *R, tl_tensor *t, int64_t k, bool upper, int line, int col) {
  int nd = tl_ndim(t);
  if (nd < 2) tlrt_fail(R, line, col, "%s needs a tensor of at least 2 axes, not %d", upper ? "triu" : "tril", nd);
  int64_t rows = tl_dim(t, nd - 2), cols = tl_dim(t, nd - 1);
  tl_tensor *i = CHECK(tl_arange(R->ctx, TL_I64, 0, (double)rows, 1));
  int64_t col_shape[2] = {rows, 1};
  tl_tensor *ic = CHECK(tl_reshape(i, 2, col_shape));
  tl_tensor *j = CHECK(tl_arange(R->ctx, TL_I64, 0, (double)cols, 1));
  tl_tensor *kt = CHECK(tl_scalar(R->ctx, TL_I64, (double)k));
  tl_tensor *ik = CHECK(tl_add(ic, kt)); /* j <= i + k (tril), j >= i + k (triu) */
  tl_tensor *mask = CHECK(upper ? tl_ge(j, ik) : tl_le(j, ik));
  tl_tensor *zero = CHECK(tl_scalar(R->ctx, tl_get_dtype(t), 0));
  tl_tensor *r = CHECK(tl_where(mask, t, zero));
  tl_tensor *garbage[] = {i, ic, kt, j, ik, mask, zero};
  for (int g = 0; g < 7; g++) tl_release(garbage[g]);
  return r;
}

tl_tensor *tlrt_masked_fill(tlrt *R, tl_tensor *t, tl_tensor *mask, double v, int line, int col) {
  tl_tensor *m = mask;
  if (tl_get_dtype(mask) != TL_BOOL) m = CHECK(tl_cast(mask, TL_BOOL)); /* nonzero: true */
  tl_tensor *fill = CHECK(tl_scalar(R->ctx, tl_get_dtype(t), v));
  tl_tensor *r = tl_where(m, fill, t);
  tl_release(fill);
  if (m != mask) tl_release(m);
  if (!r || !same_shape(r, t)) {
    char a[TL_SHAPE_TEXT_MAX], b[TL_SHAPE_TEXT_MAX];
    shape_text(a, sizeof a, mask);
    shape_text(b, sizeof b, t);
    if (r) tl_release(r);
    else tl_clear_error(R->ctx);
    tlrt_fail(R, line, col, "masked_fill: the mask's shape %s does not broadcast to the tensor's shape %s", a, b);
  }
  return r;
}

tl_tensor *tlrt_where_mask(tlrt *R, tl_tensor *cond, tl_tensor *a, tl_tensor *b, int line, int col) {
  tl_tensor *m = cond;
  if (tl_get_dtype(cond) != TL_BOOL) m = CHECK(tl_cast(cond, TL_BOOL)); /* nonzero: true, as the seed's float masks */
  tl_tensor *r = tl_where(m, a, b);
  if (m != cond) tl_release(m);
  return CHECK(r); /* shapes that do not broadcast: the engine's message */
}

tl_tensor *tlrt_slice(tlrt *R, tl_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step, int line, int col) {
  int nd = tl_ndim(t);
  if (nd == 0) tlrt_fail(R, line, col, "slice: a 0-d tensor has no axis to slice");
  if (dim < -nd || dim >= nd)
    tlrt_fail(R, line, col, "slice: dim %lld is out of range for a tensor with %d ax%s", (long long)dim, nd, nd == 1 ? "is" : "es");
  if (step <= 0) tlrt_fail(R, line, col, "slice: the step must be positive, not %lld", (long long)step);
  int ax = (int)(dim < 0 ? dim + nd : dim);
  int64_t size = tl_dim(t, ax);
  int64_t lo = start < 0 ? start + size : start, hi = end < 0 ? end + size : end;
  if (lo < 0 || lo > size || hi < 0 || hi > size || lo > hi)
    tlrt_fail(R, line, col, "slice: %lld..%lld is out of range for axis %d of size %lld", (long long)start, (long long)end, ax,
              (long long)size);
  return CHECK(tl_slice(t, ax, lo, hi, step));
}

tl_tensor *tlrt_part(tlrt *R, tl_tensor *t, int kind, int64_t a, int64_t b, int64_t c, int line, int col) {
  static const char *const names[] = {"narrow", "chunk", "split"};
  if (kind == 0) {
    if (a < 0 || b < 0 || c < 0) tlrt_fail(R, line, col, "narrow: dim, start and len are not negative here");
    return tlrt_slice(R, t, a, b, b + c, 1, line, col);
  }
  int nd = tl_ndim(t);
  if (b < 0 || b >= nd) tlrt_fail(R, line, col, "%s: dim %lld is out of range for a tensor with %d axes", names[kind], (long long)b, nd);
  int64_t n = tl_dim(t, (int)b);
  if (a <= 0) tlrt_fail(R, line, col, "%s: the %s must be positive, not %lld", names[kind], kind == 1 ? "chunk count" : "size", (long long)a);
  int64_t size = kind == 1 ? (n + a - 1) / a : a, start = c * size;
  if (c < 0 || size == 0 || start >= n)
    tlrt_fail(R, line, col, "%s: there is no piece %lld (%lld elements in pieces of %lld)", names[kind], (long long)c, (long long)n,
              (long long)size);
  return tlrt_slice(R, t, b, start, start + size < n ? start + size : n, 1, line, col);
}

tl_tensor *tlrt_slice_len(tlrt *R, tl_tensor *t, int64_t start, int64_t len, int line, int col) {
  if (tl_ndim(t) == 0) tlrt_fail(R, line, col, "slice: a 0-d tensor has no axis to slice");
  int64_t size = tl_dim(t, 0);
  if (start < 0 || len < 0 || start > size || len > size - start)
    tlrt_fail(R, line, col, "slice: %lld elements from %lld are out of range for axis 0 of size %lld", (long long)len,
              (long long)start, (long long)size);
  return CHECK(tl_slice(t, 0, start, start + len, 1));
}

tl_tensor *tlrt_detach_grad(tlrt *R, tl_tensor *t, bool requires_grad, int line, int col) {
  tl_tensor *d = CHECK(tl_detach(t));
  if (!requires_grad) return d;
  tl_dtype dt = tl_get_dtype(d);
  if (dt != TL_F32 && dt != TL_F64) {
    tl_release(d);
    tlrt_fail(R, line, col, "detach(true) needs a float tensor, not %s", tl_dtype_name(dt));
  }
  if (tl_set_requires_grad(d, 1) != TL_OK) {
    tl_release(d);
    tlrt_check_status(R, TL_ERR_ARG, line, col);
  }
  return d;
}

/* the gradient of every leaf the program holds goes back to none (zeros) */
static void clear_list(tl_ctx *ctx, tl_tensor *t) {
  for (; t; t = t->next)
    if (t->ag && t->ag->op == TL_AG_LEAF && t->ag->grad) {
      tl_uop_release(&ctx->graph, t->ag->grad);
      t->ag->grad = NULL;
    }
}

void tlrt_clear_grads(tlrt *R) {
  tl_ctx *ctx = R->ctx;
  for (tl_scope *s = ctx->scopes; s; s = s->next) clear_list(ctx, s->tensors);
  clear_list(ctx, ctx->escaped);
}
