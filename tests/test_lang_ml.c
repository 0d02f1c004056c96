/* test_lang_ml.c — the seed's model helpers leave nothing behind: `tl run --mem-stats`
 * ends with no live tensor, object or byte after VarBuilder's named parameters, the
 * samplers and the clips (tests/lang/nn/seed_model_helpers.tl) and linear algebra
 * (linalg.tl). (After a run-time error the statistics are what was live when it
 * struck, by design, so only programs that end normally are asked for zero.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/strbuf.h"
#include "test.h"

static char *run(const char *cmd, int *status) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  tl_strbuf b = {0};
  tl_strbuf_read(&b, p);
  *status = pclose(p);
  return tl_strbuf_take(&b);
}

static void ends_empty(const char *prog, int want_exit) {
  char cmd[256];
  int st = -1;
  snprintf(cmd, sizeof cmd, "build/tl run --mem-stats %s 2>&1", prog);
  char *out = run(cmd, &st);
  CHECK(out && strstr(out, "mem: tensors live=0 ") && strstr(out, "mem: objects live=0 ") && strstr(out, "mem: bytes live=0 "));
  CHECK_INT(WEXITSTATUS(st), want_exit);
  free(out);
}

TEST(lang_ml_mem_stats_end_at_zero) {
  ends_empty("tests/lang/nn/seed_model_helpers.tl", 0);
  ends_empty("tests/lang/nn/linalg.tl", 0);
  ends_empty("tests/lang/nn/decomp.tl", 0);
}
