/* sema_dist.c — the checker's side of `Dist::` (LANGUAGE.md §13): rank, size,
 * all_reduce, all_reduce_mean, broadcast, barrier, shard, sync_grads. One table: each
 * call's arguments and result; node->len is its row, which gen_dist.c reads. The run
 * time is rt_dist.c. */
#include <string.h>

#include "lang/check/sema_impl.h"

/* args: t a tensor, i an i64; ret: t the argument's tensor type, i i64, u unit */
static const struct {
  const char *name, *args;
  char ret;
} rows[] = {
    [TL_DIST_RANK] = {"rank", "", 'i'},          [TL_DIST_SIZE] = {"size", "", 'i'},
    [TL_DIST_ALL_REDUCE] = {"all_reduce", "t", 't'}, [TL_DIST_ALL_REDUCE_MEAN] = {"all_reduce_mean", "t", 't'},
    [TL_DIST_BROADCAST] = {"broadcast", "ti", 't'},  [TL_DIST_BARRIER] = {"barrier", "", 'u'},
    [TL_DIST_SHARD] = {"shard", "t", 't'},          [TL_DIST_SYNC_GRADS] = {"sync_grads", "", 'u'},
};

tl_ty *tl_sema_dist_call(sema *s, tl_node *n, const char *path) {
  if (strncmp(path, "Dist::", 6)) return NULL;
  size_t row = 0;
  while (row < sizeof rows / sizeof rows[0] && strcmp(rows[row].name, path + 6)) row++;
  if (row == sizeof rows / sizeof rows[0]) return NULL; /* the caller's "no function" and its hint */
  n->ival = B_DIST;
  n->len = row;
  int want = (int)strlen(rows[row].args), got = tl_ast_count(n->args);
  if (got != want) {
    tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", path, want, want == 1 ? "" : "s", got);
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", path);
    return TY_ERR;
  }
  tl_ty *tensor = NULL;
  int k = 0;
  for (tl_node *a = n->args; a; a = a->next, k++) {
    if (rows[row].args[k] == 'i') {
      tl_sema_expect_i64(s, a, "root");
      continue;
    }
    tensor = tl_sema_expr(s, a, NULL);
    if (tensor->kind != TY_TENSOR && tensor->kind != TY_ERROR) {
      tl_sema_mismatch(s, a, "argument", tl_sema_tensor(s, -1, -1), tensor);
      tensor = TY_ERR;
    }
  }
  switch (rows[row].ret) {
  case 't': return tensor && tensor->kind == TY_TENSOR ? tensor : TY_ERR;
  case 'i': return TY_I64_T;
  default: return TY_UNIT_T;
  }
}
