/* rt_ops_index.c — torch's indexing, sorting and logical-reduction tensor methods of
 * compiled TL programs (sema_ops.c, gen_ops.c): the C API's tl_gather... with a
 * run-time error at the TL location when one fails (an index out of range names the
 * index and its position). */
#include "lang/rt/rt_ops.h"

#define CHECK(expr) tlrt_check(R, (expr), line, col)

/* a dim of t (rank 0 takes 0 and -1, as torch's), negative from the end */
static int dim_arg(tlrt *R, const char *what, tl_tensor *t, int64_t d, int line, int col) {
  int nd = tl_ndim(t), n = nd ? nd : 1;
  if (d < -n || d >= n)
    tlrt_fail(R, line, col, "%s: dim %lld is out of range for a tensor with %d ax%s", what, (long long)d, nd,
              nd == 1 ? "is" : "es");
  return (int)(d < 0 ? d + n : d);
}

tl_tensor *tlrt_argsort(tlrt *R, tl_tensor *t, int64_t dim, bool descending, int line, int col) {
  return CHECK(tl_argsort(t, dim_arg(R, "argsort", t, dim, line, col), descending));
}

tl_tensor *tlrt_gather_dim(tlrt *R, tl_tensor *t, int64_t dim, tl_tensor *index, int line, int col) {
  return CHECK(tl_gather(t, dim_arg(R, "gather", t, dim, line, col), index));
}

tl_tensor *tlrt_scatter(tlrt *R, tl_tensor *t, int64_t dim, tl_tensor *index, tl_tensor *src, bool add, int line, int col) {
  int ax = dim_arg(R, add ? "scatter_add" : "scatter", t, dim, line, col);
  return CHECK(add ? tl_scatter_add(t, ax, index, src) : tl_scatter(t, ax, index, src));
}

tl_tensor *tlrt_logsumexp(tlrt *R, tl_tensor *t, bool has_dim, int64_t dim, bool keepdim, int line, int col) {
  if (!has_dim) return CHECK(tl_logsumexp(t, 0, NULL, keepdim));
  if (tl_ndim(t) == 0) tlrt_fail(R, line, col, "logsumexp: a 0-d tensor has no dim %lld", (long long)dim);
  int ax = dim_arg(R, "logsumexp", t, dim, line, col);
  return CHECK(tl_logsumexp(t, 1, &ax, keepdim));
}

tl_tensor *tlrt_roll(tlrt *R, tl_tensor *t, int64_t shift, bool has_dim, int64_t dim, int line, int col) {
  if (!has_dim) return CHECK(tl_roll(t, 1, &shift, NULL));
  if (tl_ndim(t) == 0) tlrt_fail(R, line, col, "roll: a 0-d tensor has no dim %lld", (long long)dim);
  int ax = dim_arg(R, "roll", t, dim, line, col);
  return CHECK(tl_roll(t, 1, &shift, &ax));
}

tl_tensor *tlrt_repeat(tlrt *R, tl_tensor *t, int n, const int64_t *reps, int line, int col) {
  return CHECK(tl_repeat(t, n, reps));
}

tl_tensor *tlrt_any_all(tlrt *R, tl_tensor *t, bool all, bool has_dim, int64_t dim, int line, int col) {
  if (!has_dim) return CHECK(all ? tl_all(t, 0, NULL, 0) : tl_any(t, 0, NULL, 0));
  if (tl_ndim(t) == 0) tlrt_fail(R, line, col, "%s: a 0-d tensor has no dim %lld", all ? "all" : "any", (long long)dim);
  int ax = dim_arg(R, all ? "all" : "any", t, dim, line, col);
  return CHECK(all ? tl_all(t, 1, &ax, 0) : tl_any(t, 1, &ax, 0));
}
