/* test_logic_limits.c — the knowledge base at its limit of tuples per relation
 * (tl_kb_set_max_tuples; the language sets 50 million): the error names the relation
 * however it got there, and a box growing value by value toward its cap is moved a
 * logarithmic number of times (issue 22: `n(x + 1) :- n(x).` never ended). */
#include <stdio.h>

#include "logic/logic.h" /* kb->full_rel, kb->stats */
#include "test.h"
#include "tl.h"

static const char *const counter = "n(0).\nn(x + 1) :- n(x).\n";

/* auto mode: the dense box stops growing at the limit and the relation turns sparse
 * holding the box and the values past it, which can be more than the limit; that is
 * the limit's error, naming the relation, not "out of memory" (it was for limits of
 * 64, 128, 192, 1088 ...: the language's 50 million is a multiple of 64 too) */
TEST(logic_max_tuples_when_turning_sparse) {
  tl_ctx *ctx = tl_init();
  for (int64_t max = 1; max <= 1088; max += max < 260 ? 1 : 64) {
    tl_kb *kb = tl_kb_new(ctx);
    CHECK_INT(tl_kb_set_max_tuples(kb, max), TL_OK);
    CHECK_INT(tl_kb_add_rules(kb, counter), TL_OK);
    CHECK_INT(kb->full_rel, -1);
    CHECK_INT(tl_kb_count(kb, "n"), -1);
    CHECK_INT(tl_last_status(ctx), TL_ERR_RANGE);
    char want[100];
    snprintf(want, sizeof want, "relation n: more than %lld tuples (the limit tl_kb_set_max_tuples set)", (long long)max);
    CHECK_STR(tl_last_error(ctx), want);
    CHECK_INT(kb->full_rel, 0); /* the relation the language names */
    tl_kb_free(kb);
  }
  TEST_SHUTDOWN(ctx);
}

/* a dense box near its cap (the limit caps boxes too) grows by half its padding, and
 * half again, not by its values alone: n(x + 1) :- n(x) copied the box once per new
 * value past 2/3 of the cap (at the language's 50 million, hours) */
TEST(logic_box_growth_near_the_cap) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_INT(tl_kb_set_max_tuples(kb, 1 << 16), TL_OK);
  CHECK_INT(tl_kb_add_rules(kb, counter), TL_OK);
  CHECK_INT(tl_kb_count(kb, "n"), -1);
  CHECK_STR(tl_last_error(ctx), "relation n: more than 65536 tuples (the limit tl_kb_set_max_tuples set)");
  CHECK(kb->stats.rounds >= 65536); /* a value a round */
  /* growing by half again from 1 cell to 2^16 is about 27 moves, the halvings near
   * the cap a few more (28 in all; 44 for a cap of 2^22) */
  if (kb->stats.box_regrows > 64)
    tl_test_fail(__FILE__, __LINE__, "%llu box moves", (unsigned long long)kb->stats.box_regrows);
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

/* the bit join aligns its boxes exactly: padded, h and its right side outgrew each
 * other every round until the cap (a 200 x 200 closure forced dense reached boxes of
 * 10^8 cells, then failed as too big past a limit of 2^22) */
TEST(logic_bit_join_boxes_stay_small) {
  tl_ctx *ctx = tl_init();
  for (int forced = 0; forced < 2; forced++) {
    tl_kb *kb = tl_kb_new(ctx);
    CHECK_INT(tl_kb_set_repr(kb, forced ? TL_KB_DENSE : TL_KB_AUTO), TL_OK);
    CHECK_INT(tl_kb_set_max_tuples(kb, 1 << 22), TL_OK);
    char text[64];
    for (int i = 0; i < 200; i++) { /* a cycle through 0 .. 199 */
      snprintf(text, sizeof text, "edge(%d, %d).", i, (i + 1) % 200);
      CHECK_INT(tl_kb_add_rules(kb, text), TL_OK);
    }
    CHECK_INT(tl_kb_add_rules(kb, "path(x, y) :- edge(x, y).\npath(x, y) :- path(x, z), edge(z, y).\n"), TL_OK);
    CHECK_INT(tl_kb_count(kb, "path"), 200 * 200);
    CHECK(kb->stats.bit_joins > 0);
    int path = tl_logic_find_rel(kb, "path");
    CHECK(path >= 0 && kb->rels[path].repr == TL_REPR_DENSE);
    if (path >= 0 && kb->rels[path].repr == TL_REPR_DENSE)
      CHECK(tl_logic_box_cells(2, kb->rels[path].dn.size) <= 4 * 200 * 256);
    tl_kb_free(kb);
  }
  TEST_SHUTDOWN(ctx);
}
