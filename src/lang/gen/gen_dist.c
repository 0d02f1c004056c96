/* gen_dist.c — code for `Dist::` (sema_dist.c checks it): one call of rt_dist.h's
 * function for the row, R first, then the arguments and the place. A tensor result is
 * an owned temporary; rank and size are i64 temporaries. */
#include <stdlib.h>

#include "lang/gen/gen_impl.h"

cv tl_gen_dist_call(gen *g, tl_node *n) {
  static const char *const fn[] = {
      [TL_DIST_RANK] = "tlrt_dist_rank",       [TL_DIST_SIZE] = "tlrt_dist_size",
      [TL_DIST_ALL_REDUCE] = "tlrt_dist_all_reduce", [TL_DIST_ALL_REDUCE_MEAN] = "tlrt_dist_all_reduce_mean",
      [TL_DIST_BROADCAST] = "tlrt_dist_broadcast",   [TL_DIST_BARRIER] = "tlrt_dist_barrier",
      [TL_DIST_SHARD] = "tlrt_dist_shard",         [TL_DIST_SYNC_GRADS] = "tlrt_dist_sync_grads",
  };
  tl_strbuf b = {0};
  tl_strbuf_printf(&b, "%s(R", fn[n->len]);
  for (tl_node *a = n->args; a; a = a->next) tl_strbuf_printf(&b, ", %s", tl_gen_expr(g, a).c);
  tl_strbuf_printf(&b, ", %d, %d)", n->line, n->col);
  char *call = tl_gen_take_text(g, &b);
  const char *c = tl_gen_fmt(g, "%s", call ? call : "0");
  free(call);
  if (n->len == TL_DIST_BARRIER || n->len == TL_DIST_SYNC_GRADS) {
    tl_gen_emit(g, "%s;", c);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  return tl_gen_temp_value(g, n->ty, c);
}
