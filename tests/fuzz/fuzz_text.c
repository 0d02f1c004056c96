/* fuzz_text.c — harnesses for text inputs: a TL program checked and translated to C
 * (lexer, parser, checker, ownership, Datalog, code generation; nothing run), and
 * knowledge-base text added to a knowledge base whose relations are then counted. */
#include "fuzz.h"
#include "lang/lang.h"
#include "tl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the bytes as a NUL-terminated string (a NUL inside ends it early, as for a C caller) */
static char *fuzz_string(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return NULL;
  if (size) memcpy(s, data, size);
  s[size] = 0;
  return s;
}

int tl_fuzz_front(const uint8_t *data, size_t size) {
  FILE *err = fopen("/dev/null", "w");
  if (!err) return 0;
  char *c = tl_lang_compile("fuzz.tl", (const char *)data, size, false, err);
  free(c);
  fclose(err);
  return 0;
}

/* the names written before '(' in text (at most 16, each under 64 bytes) */
typedef struct {
  char name[16][64];
  const char *list[16];
  int n;
} fuzz_names;

static void fuzz_relation_names(const char *text, fuzz_names *out) {
  out->n = 0;
  for (const char *p = text; *p && out->n < 16; p++) {
    if (!(isalpha((unsigned char)*p) || *p == '_') || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
      continue;
    size_t n = 0;
    while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < sizeof out->name[0]) n++;
    if (p[n] != '(') continue;
    memcpy(out->name[out->n], p, n);
    out->name[out->n][n] = 0;
    out->list[out->n] = out->name[out->n];
    out->n++;
  }
}

/* the text (up to the first NUL) added to a knowledge base, whose relations it names are
 * then counted (evaluating those it defined, asking for some it did not: an error);
 * the bytes after the NUL drive the API's calls (fuzz_kb_calls.c) */
int tl_fuzz_kb(const uint8_t *data, size_t size) {
  char *text = fuzz_string(data, size);
  tl_ctx *ctx = text ? tl_init() : NULL;
  if (!ctx) {
    free(text);
    return 0;
  }
  tl_set_backend(ctx, "interp");
  tl_kb *kb = tl_kb_new(ctx);
  /* a rule whose arithmetic derives without end stops here, not at AFL's time limit */
  tl_kb_set_max_tuples(kb, 4096);
  fuzz_names names;
  fuzz_relation_names(text, &names);
  tl_status st = kb ? tl_kb_add_rules(kb, text) : TL_ERR_NOMEM;
  /* the warnings read whole (ASan sees a bad string); a newline ends each */
  const char *warned = kb ? tl_kb_warnings(kb) : "";
  if (*warned && warned[strlen(warned) - 1] != '\n') abort();
  for (int i = 0; st == TL_OK && i < names.n; i++) tl_kb_count(kb, names.list[i]);
  size_t text_len = strlen(text);
  if (kb && text_len + 1 < size)
    tl_fuzz_kb_calls(kb, ctx, names.list, names.n, data + text_len + 1, size - text_len - 1);
  tl_kb_free(kb);
  free(text);
  return tl_fuzz_end(ctx);
}

const tl_fuzz_harness tl_fuzz_harnesses[] = {
    {"front", tl_fuzz_front},     {"npy", tl_fuzz_npy}, {"safetensors", tl_fuzz_safetensors},
    {"kb", tl_fuzz_kb},           {"capi", tl_fuzz_capi}, {"run", tl_fuzz_run},
    {NULL, NULL},
};
