/* kb_text.c — tl_kb_add_rules (tl.h), the C API's Datalog text entry: text into a
 * knowledge base, through the language's lexer and parser and the Datalog checker
 * (logic_front.c, beside this file), the same checks and lowering as a compiled
 * program's facts and rules get. The language's front end (lex, parse, ast, diag)
 * depends on core alone, so logic may use it and includes nothing above itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h" /* tl_api_fail_orphan: an error with no knowledge base */
#include "lang/front/lex.h"
#include "lang/front/parse.h"
#include "logic/logic.h" /* tl_logic_fail */
#include "logic/logic_front.h"

/* the first line of diagnostic k of d, after the file name (which is ""): "3:14: error: m" */
static void first_line(const tl_diag *d, int k, char *buf, size_t n) {
  const char *t = d->text.data + d->at[k].start;
  const char *at = strchr(t, ':');
  at = at ? at + 1 : t;
  snprintf(buf, n, "%.*s", (int)strcspn(at, "\n"), at);
}

/* the first error of d as "kb_add_rules: LINE:COL: message (and N more errors)" */
static tl_status fail_with(tl_kb *kb, tl_diag *d) {
  /* an allocation that failed while checking the text is said alone: the other
   * errors are its consequences */
  if (d->oom || !d->text.data) return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_add_rules: out of memory");
  int k = 0;
  while (k < d->nat && d->at[k].warning) k++;
  char first[600] = "";
  if (k < d->nat) first_line(d, k, first, sizeof first);
  tl_status st = TL_ERR_ARG;
  char *e = strstr(first, " error: ");
  if (e) memmove(e + 1, e + 8, strlen(e + 8) + 1); /* "3:14: error: m" -> "3:14: m" */
  if (d->errors > 1)
    return tl_logic_fail(kb, st, "kb_add_rules: %s (and %d more error%s)", first, d->errors - 1,
                         d->errors > 2 ? "s" : "");
  return tl_logic_fail(kb, st, "kb_add_rules: %s", first);
}

/* d's warnings into kb->warnings, a line each: "kb_add_rules: 3:14: message (hint)" */
static void keep_warnings(tl_kb *kb, const tl_diag *d) {
  if (!d->warnings || !d->text.data || d->nat != d->errors + d->warnings) return;
  tl_strbuf b = {0};
  for (int k = 0; k < d->nat; k++) {
    if (!d->at[k].warning) continue;
    char line[600];
    first_line(d, k, line, sizeof line);
    char *w = strstr(line, " warning: ");
    if (w) memmove(w + 1, w + 10, strlen(w + 10) + 1);
    tl_strbuf_printf(&b, "kb_add_rules: %s", line);
    /* the source line and the caret, then maybe the hint */
    const char *p = d->text.data + d->at[k].start, *end = k + 1 < d->nat ? d->text.data + d->at[k + 1].start : NULL;
    for (int skip = 0; skip < 3 && p; skip++) p = strchr(p, '\n'), p = p ? p + 1 : NULL;
    if (p && (!end || p < end) && !strncmp(p, "  hint: ", 8))
      tl_strbuf_printf(&b, " (%.*s)", (int)strcspn(p + 8, "\n"), p + 8);
    tl_strbuf_puts(&b, "\n");
  }
  if (b.oom) tl_strbuf_free(&b);
  else kb->warnings = tl_strbuf_take(&b);
}

tl_status tl_kb_add_rules(tl_kb *kb, const char *text) {
  if (!kb) return tl_api_fail_orphan(TL_ERR_ARG, "kb_add_rules: the knowledge base is NULL"), TL_ERR_ARG;
  if (!text) return tl_logic_fail(kb, TL_ERR_ARG, "kb_add_rules: the text is NULL");
  tl_arena *arena = tl_arena_create();
  if (!arena) return tl_logic_fail(kb, TL_ERR_NOMEM, "kb_add_rules: out of memory");
  free(kb->warnings); /* the last call's */
  kb->warnings = NULL;
  tl_diag diag;
  tl_diag_init(&diag, "", text, strlen(text));
  tl_lexer lx = {.arena = arena};
  tl_program *prog = NULL;
  lf *L = NULL;
  tl_lex(&lx, &diag);
  tl_parse(lx.tokens, lx.ntokens, &diag, arena, &prog);
  for (tl_ast_item *it = prog ? prog->items : NULL; it; it = it->next)
    if (it->kind != TL_ITEM_FACT && it->kind != TL_ITEM_RULE && it->kind != TL_ITEM_RELATION)
      tl_diag_error(&diag, it->line, it->col, "only facts, rules and relation declarations go in rule text");
  tl_status st = TL_OK;
  if (!diag.errors && prog) {
    tl_diag *diags[1] = {&diag};
    L = tl_lf_new(arena, diags, NULL, 1, kb);
    if (!L) st = tl_logic_fail(kb, TL_ERR_NOMEM, "kb_add_rules: out of memory");
    else if (!tl_lf_add_items(L, prog->items)) st = tl_logic_fail(kb, TL_ERR_NOMEM, "kb_add_rules: out of memory");
    else {
      tl_lf_define(L);
      if (!tl_lf_resolve(L)) tl_lf_apply(L);
    }
  }
  tl_diag_sort(&diag);
  if (!prog) st = tl_logic_fail(kb, TL_ERR_NOMEM, "kb_add_rules: out of memory");
  else if (diag.errors) st = fail_with(kb, &diag);
  if (prog) keep_warnings(kb, &diag);
  tl_lf_free(L);
  tl_diag_free(&diag);
  tl_lex_free(&lx);
  tl_arena_destroy(arena);
  return st;
}
