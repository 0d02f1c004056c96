/* rt_regex.c — the library's Regex (LANGUAGE.md §10, front/stdlib.c): a pattern is
 * parsed into a small program (characters, classes, `.`, anchors, splits and jumps)
 * and run by a Pike VM: every thread advances one character at a time, so a match
 * costs O(pattern x text) whatever the pattern, never a backtracking blow-up. Threads
 * keep their priority order, so the match found is the leftmost and, among those
 * starting there, the one a backtracking engine would find first (Rust's and Perl's
 * semantics: greedy quantifiers prefer more, lazy `*?` less, `a|b` prefers a).
 * Syntax: literals (UTF-8), `.` (not `\n`), `[a-z0-9_]`, `[^..]`, `\d \w \s \D \W \S`,
 * escapes `\n \t \r \.` (any punctuation), `( )`, `(?: )`, `|`, `* + ? {n} {n,} {n,m}`
 * and their lazy forms, `^ $` (the text's ends). */
#include "lang/rt/rt_sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

enum { I_CHAR, I_ANY, I_CLASS, I_BOL, I_EOL, I_SPLIT, I_JMP, I_MATCH };

typedef struct {
  int op;
  uint32_t c;   /* CHAR: the code point */
  int x, y;     /* SPLIT: x first, then y; JMP: x; CLASS: x the class */
} inst;

typedef struct {
  uint32_t (*r)[2]; /* ranges [lo, hi] */
  int n;
  bool neg;
} cls;

#define RX_MAX_INSTS 20000
#define RX_MAX_DEPTH 200

typedef struct {
  const char *p, *end;
  inst *code;
  int n, cap;
  cls *classes;
  int nclasses, ccap;
  char err[160];
  int depth;
} rx;

static bool fail(rx *r, const char *msg) {
  if (!r->err[0]) snprintf(r->err, sizeof r->err, "%s", msg);
  return false;
}

static int emit(rx *r, int op, uint32_t c, int x, int y) {
  if (r->err[0]) return -1;
  if (r->n == RX_MAX_INSTS) return fail(r, "the pattern is too large (more than 20000 steps once repeats are written out)"), -1;
  if (r->n == r->cap) {
    int cap = r->cap ? r->cap * 2 : 64;
    inst *c2 = realloc(r->code, sizeof *c2 * (size_t)cap);
    if (!c2) return fail(r, "out of memory"), -1;
    r->code = c2, r->cap = cap;
  }
  r->code[r->n] = (inst){op, c, x, y};
  return r->n++;
}

/* one UTF-8 character at *p (an invalid byte is itself, as a code point above 0x10FFFF) */
static uint32_t decode(const char **p, const char *end) {
  const unsigned char *s = (const unsigned char *)*p;
  int n = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3 : (s[0] >> 3) == 30 ? 4 : 0;
  if (!n || (const char *)s + n > end) {
    *p += 1;
    return 0x110000u + s[0];
  }
  uint32_t c = n == 1 ? s[0] : s[0] & (0x7F >> n);
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) {
      *p += 1;
      return 0x110000u + s[0];
    }
    c = c << 6 | (s[i] & 0x3F);
  }
  *p += n;
  return c;
}

static bool add_range(rx *r, cls *k, uint32_t lo, uint32_t hi) {
  uint32_t (*nr)[2] = realloc(k->r, sizeof *nr * (size_t)(k->n + 1));
  if (!nr) return fail(r, "out of memory");
  k->r = nr;
  k->r[k->n][0] = lo, k->r[k->n][1] = hi;
  k->n++;
  return true;
}

/* \d \w \s into k (their negations: a class of its own, negated) */
static bool add_perl(rx *r, cls *k, char e) {
  switch (e) {
  case 'd': return add_range(r, k, '0', '9');
  case 'w': return add_range(r, k, '0', '9') && add_range(r, k, 'A', 'Z') && add_range(r, k, 'a', 'z') && add_range(r, k, '_', '_');
  case 's': return add_range(r, k, ' ', ' ') && add_range(r, k, '\t', '\r');
  default: return false;
  }
}

static int new_class(rx *r) {
  if (r->nclasses == r->ccap) {
    int cap = r->ccap ? r->ccap * 2 : 8;
    cls *c2 = realloc(r->classes, sizeof *c2 * (size_t)cap);
    if (!c2) return fail(r, "out of memory"), -1;
    r->classes = c2, r->ccap = cap;
  }
  r->classes[r->nclasses] = (cls){0};
  return r->nclasses++;
}

/* the character an escape `\e` stands for, or -1 (a class escape or an unknown one) */
static long escape_char(char e) {
  if (e == 'n') return '\n';
  if (e == 't') return '\t';
  if (e == 'r') return '\r';
  if (e == '0') return 0;
  if ((e >= '!' && e <= '/') || (e >= ':' && e <= '@') || (e >= '[' && e <= '`') || (e >= '{' && e <= '~')) return e;
  return -1;
}

/* `[...]` after its `[` */
static bool parse_class(rx *r) {
  int ci = new_class(r);
  if (ci < 0) return false;
  cls *k = &r->classes[ci];
  if (r->p < r->end && *r->p == '^') k->neg = true, r->p++;
  bool first = true;
  while (r->p < r->end && (*r->p != ']' || first)) {
    first = false;
    uint32_t lo;
    if (*r->p == '\\' && r->p + 1 < r->end) {
      char e = r->p[1];
      r->p += 2;
      if (e == 'd' || e == 'w' || e == 's') {
        if (!add_perl(r, k, e)) return false;
        continue;
      }
      long c = escape_char(e);
      if (c < 0) return fail(r, "unknown escape in a class");
      lo = (uint32_t)c;
    } else {
      lo = decode(&r->p, r->end);
    }
    uint32_t hi = lo;
    if (r->p + 1 < r->end && *r->p == '-' && r->p[1] != ']') {
      r->p++;
      if (*r->p == '\\' && r->p + 1 < r->end) {
        long c = escape_char(r->p[1]);
        if (c < 0) return fail(r, "a class range ends in a character");
        hi = (uint32_t)c, r->p += 2;
      } else {
        hi = decode(&r->p, r->end);
      }
      if (hi < lo) return fail(r, "a class range goes backwards");
    }
    if (!add_range(r, k, lo, hi)) return false;
  }
  if (r->p >= r->end) return fail(r, "unclosed character class `[`");
  r->p++;
  return emit(r, I_CLASS, 0, ci, 0) >= 0;
}

static bool parse_alt(rx *r);

/* one atom: a character, `.`, a class, a group, an anchor */
static bool parse_atom(rx *r) {
  char c = *r->p;
  if (c == '(') {
    r->p++;
    if (r->p + 1 < r->end && r->p[0] == '?' && r->p[1] == ':') r->p += 2;
    else if (r->p < r->end && *r->p == '?') return fail(r, "only `(?:` groups are supported");
    if (++r->depth > RX_MAX_DEPTH) return fail(r, "groups nested too deep");
    if (!parse_alt(r)) return false;
    r->depth--;
    if (r->p >= r->end || *r->p != ')') return fail(r, "unclosed group `(`");
    r->p++;
    return true;
  }
  if (c == '[') return r->p++, parse_class(r);
  if (c == '.') return r->p++, emit(r, I_ANY, 0, 0, 0) >= 0;
  if (c == '^') return r->p++, emit(r, I_BOL, 0, 0, 0) >= 0;
  if (c == '$') return r->p++, emit(r, I_EOL, 0, 0, 0) >= 0;
  if (c == '*' || c == '+' || c == '?' || c == '{') return fail(r, "a repetition with nothing before it");
  if (c == ')') return fail(r, "unopened group `)`");
  if (c == '\\') {
    if (r->p + 1 >= r->end) return fail(r, "a `\\` at the end");
    char e = r->p[1];
    r->p += 2;
    if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
      int ci = new_class(r);
      if (ci < 0 || !add_perl(r, &r->classes[ci], (char)(e | 0x20))) return false;
      r->classes[ci].neg = e < 'a';
      return emit(r, I_CLASS, 0, ci, 0) >= 0;
    }
    long ch = escape_char(e);
    if (ch < 0) return fail(r, "unknown escape");
    return emit(r, I_CHAR, (uint32_t)ch, 0, 0) >= 0;
  }
  return emit(r, I_CHAR, decode(&r->p, r->end), 0, 0) >= 0;
}

static bool read_int(rx *r, int *v) {
  if (r->p >= r->end || *r->p < '0' || *r->p > '9') return false;
  long n = 0;
  while (r->p < r->end && *r->p >= '0' && *r->p <= '9' && n <= 100000) n = n * 10 + (*r->p++ - '0');
  if (n > 1000) return fail(r, "a repetition count above 1000");
  *v = (int)n;
  return true;
}

/* the atom's code [from, r->n) repeated min..max times (max -1: no bound) */
static bool repeat(rx *r, int from, int min, int max, bool greedy) {
  int len = r->n - from;
  inst *atom = malloc(sizeof *atom * (size_t)(len ? len : 1));
  if (!atom) return fail(r, "out of memory");
  if (len) memcpy(atom, r->code + from, sizeof *atom * (size_t)len);
  r->n = from;
  bool ok = true;
  /* a copy placed at `at` has its jumps moved by at - from */
#define COPY()                                                                                     \
  do {                                                                                             \
    int at = r->n;                                                                                 \
    for (int i = 0; i < len && ok; i++) {                                                          \
      inst in = atom[i];                                                                           \
      if (in.op == I_SPLIT || in.op == I_JMP) in.x += at - from, in.y += at - from;                \
      ok = emit(r, in.op, in.c, in.x, in.y) >= 0;                                                  \
    }                                                                                              \
  } while (0)
  for (int i = 0; i < min && ok; i++) COPY();
  if (ok && max < 0) { /* L: split body, out; body; jmp L */
    int l = emit(r, I_SPLIT, 0, 0, 0);
    ok = l >= 0;
    if (ok) COPY();
    ok = ok && emit(r, I_JMP, 0, l, 0) >= 0;
    if (ok) r->code[l].x = greedy ? l + 1 : r->n, r->code[l].y = greedy ? r->n : l + 1;
  } else {
    int splits[1001], k = 0;
    for (int i = min; i < max && ok; i++) { /* each optional copy may be skipped to the end */
      int l = emit(r, I_SPLIT, 0, 0, 0);
      ok = l >= 0;
      splits[k++] = l;
      if (ok) COPY();
    }
    for (int i = 0; i < k && ok; i++) r->code[splits[i]].x = greedy ? splits[i] + 1 : r->n, r->code[splits[i]].y = greedy ? r->n : splits[i] + 1;
  }
#undef COPY
  free(atom);
  return ok;
}

static bool parse_cat(rx *r) {
  while (r->p < r->end && *r->p != '|' && *r->p != ')') {
    int from = r->n;
    if (!parse_atom(r)) return false;
    while (r->p < r->end && (*r->p == '*' || *r->p == '+' || *r->p == '?' || *r->p == '{')) {
      int min = 0, max = -1;
      char q = *r->p++;
      if (q == '+') min = 1;
      else if (q == '?') max = 1;
      else if (q == '{') {
        if (!read_int(r, &min)) return fail(r, "a `{` repetition needs a count: `{2}`, `{2,}`, `{2,5}`");
        max = min;
        if (r->p < r->end && *r->p == ',') {
          r->p++;
          max = -1;
          if (r->p < r->end && *r->p != '}' && !read_int(r, &max)) return fail(r, "a `{` repetition needs a count: `{2}`, `{2,}`, `{2,5}`");
        }
        if (r->err[0]) return false;
        if (r->p >= r->end || *r->p != '}') return fail(r, "unclosed repetition `{`");
        r->p++;
        if (max >= 0 && max < min) return fail(r, "a repetition `{n,m}` with m < n");
      }
      bool greedy = true;
      if (r->p < r->end && *r->p == '?') greedy = false, r->p++;
      if (!repeat(r, from, min, max, greedy)) return false;
    }
  }
  return true;
}

/* a|b|c: split a, (split b, c); each branch jumps to the end */
static bool parse_alt(rx *r) {
  int start = r->n;
  if (!parse_cat(r)) return false;
  if (r->p >= r->end || *r->p != '|') return true;
  r->p++;
  /* put a split in front of the first branch: shift it by one */
  if (emit(r, I_JMP, 0, 0, 0) < 0) return false; /* room */
  memmove(r->code + start + 1, r->code + start, sizeof *r->code * (size_t)(r->n - 1 - start));
  for (int i = start + 1; i < r->n; i++)
    if (r->code[i].op == I_SPLIT || r->code[i].op == I_JMP) r->code[i].x++, r->code[i].y++;
  int jmp = emit(r, I_JMP, 0, 0, 0);
  if (jmp < 0) return false;
  r->code[start] = (inst){I_SPLIT, 0, start + 1, jmp + 1};
  if (!parse_alt(r)) return false;
  r->code[jmp].x = r->n;
  return true;
}

/* compiles pattern into r; false with r->err */
static bool compile(rx *r, const char *pat, size_t len) {
  memset(r, 0, sizeof *r);
  r->p = pat, r->end = pat + len;
  if (!parse_alt(r)) return false;
  if (r->p < r->end) return fail(r, "unopened group `)`");
  return emit(r, I_MATCH, 0, 0, 0) >= 0;
}

static void rx_free(rx *r) {
  for (int i = 0; i < r->nclasses; i++) free(r->classes[i].r);
  free(r->classes);
  free(r->code);
}

static bool in_class(const cls *k, uint32_t c) {
  bool in = false;
  for (int i = 0; i < k->n && !in; i++) in = c >= k->r[i][0] && c <= k->r[i][1];
  return in != k->neg;
}

typedef struct {
  int *pc;
  size_t *start;
  int n;
} tlist;

/* adds pc and what it leads to without reading (splits, jumps, anchors) at text
 * position pos, in priority order; mark says which pcs this step has */
static void add(const rx *r, tlist *l, int *mark, int gen, int *stack, int pc, size_t start, size_t pos, size_t len) {
  int sp = 0;
  stack[sp++] = pc;
  while (sp) {
    int p = stack[--sp];
    if (mark[p] == gen) continue;
    mark[p] = gen;
    const inst *in = &r->code[p];
    if (in->op == I_JMP) stack[sp++] = in->x;
    else if (in->op == I_SPLIT) stack[sp++] = in->y, stack[sp++] = in->x;
    else if (in->op == I_BOL) {
      if (pos == 0) stack[sp++] = p + 1;
    } else if (in->op == I_EOL) {
      if (pos == len) stack[sp++] = p + 1;
    } else {
      l->pc[l->n] = p, l->start[l->n++] = start;
    }
  }
}

/* the leftmost-first match in s[from, len): 1 with [*ms, *me), 0 none, -1 out of memory */
static int search(const rx *r, const char *s, size_t len, size_t from, size_t *ms, size_t *me) {
  size_t n = (size_t)r->n;
  int *ibuf = malloc(sizeof *ibuf * n * 5); /* two pc lists, the marks, a stack of 2n */
  size_t *sbuf = malloc(sizeof *sbuf * n * 2);
  if (!ibuf || !sbuf) {
    free(ibuf);
    free(sbuf);
    return -1;
  }
  tlist a = {ibuf, sbuf, 0}, b = {ibuf + n, sbuf + n, 0}, *cl = &a, *nl = &b;
  int *mark = ibuf + 2 * n, *stack = ibuf + 3 * n;
  for (size_t i = 0; i < n; i++) mark[i] = -1;
  int gen = 0, found = 0;
  size_t pos = from;
  add(r, cl, mark, gen, stack, 0, pos, pos, len);
  for (;;) {
    const char *q = s + pos;
    uint32_t c = pos < len ? decode(&q, s + len) : 0;
    size_t next = (size_t)(q - s);
    nl->n = 0;
    gen++;
    for (int i = 0; i < cl->n; i++) {
      const inst *in = &r->code[cl->pc[i]];
      if (in->op == I_MATCH) {
        found = 1;
        *ms = cl->start[i], *me = pos;
        break; /* the threads after it have lower priority */
      }
      bool ok = pos < len && (in->op == I_CHAR ? in->c == c : in->op == I_ANY ? c != '\n' : in_class(&r->classes[in->x], c));
      if (ok) add(r, nl, mark, gen, stack, cl->pc[i] + 1, cl->start[i], next, len);
    }
    if (pos >= len) break;
    pos = next;
    if (!found) add(r, nl, mark, gen, stack, 0, pos, pos, len); /* a match starting here: lowest priority */
    if (!nl->n) break;
    tlist *t = cl;
    cl = nl, nl = t;
  }
  free(ibuf);
  free(sbuf);
  return found;
}

/* ---- the run-time calls (the library's Regex, front/stdlib.c) ---- */

static bool compile_str(rx *r, const tlrt_str *pat) { return compile(r, pat->data, (size_t)pat->len); }

/* the pattern compiled, or a run-time error saying why not (nothing left allocated) */
static void compile_or_fail(tlrt *R, rx *r, const tlrt_str *pat, int line, int col) {
  if (compile_str(r, pat)) return;
  char why[160];
  snprintf(why, sizeof why, "%s", r->err);
  rx_free(r);
  tlrt_fail(R, line, col, "invalid regex `%.200s`: %s", pat->data, why);
}

bool tlrt_regex_check(tlrt *R, const tlrt_str *pat) {
  (void)R;
  rx r;
  bool ok = compile_str(&r, pat);
  rx_free(&r);
  return ok;
}

bool tlrt_regex_matches(tlrt *R, const tlrt_str *pat, const tlrt_str *text, int line, int col) {
  rx r;
  compile_or_fail(R, &r, pat, line, col);
  size_t ms, me;
  int found = search(&r, text->data, (size_t)text->len, 0, &ms, &me);
  rx_free(&r);
  if (found < 0) tlrt_fail(R, line, col, "out of memory matching a regex");
  return found == 1;
}

/* every match, left to right, replaced by rep (as it is: no `$1`); after an empty match
 * the next character is kept and the search goes on after it */
tlrt_str *tlrt_regex_replace_all(tlrt *R, const tlrt_str *pat, const tlrt_str *text, const tlrt_str *rep, int line, int col) {
  rx r;
  compile_or_fail(R, &r, pat, line, col);
  size_t len = (size_t)text->len, from = 0, ms, me;
  tl_strbuf out = {0};
  int found = 0;
  while (from <= len && (found = search(&r, text->data, len, from, &ms, &me)) == 1) {
    tl_strbuf_putn(&out, text->data + from, ms - from);
    tl_strbuf_putn(&out, rep->data, (size_t)rep->len);
    if (me > ms) {
      from = me;
      continue;
    }
    if (ms >= len) {
      from = len + 1;
      break;
    }
    const char *q = text->data + ms;
    decode(&q, text->data + len);
    tl_strbuf_putn(&out, text->data + ms, (size_t)(q - (text->data + ms)));
    from = (size_t)(q - text->data);
  }
  rx_free(&r);
  if (from < len) tl_strbuf_putn(&out, text->data + from, len - from);
  if (found < 0 || out.oom) {
    tl_strbuf_free(&out);
    tlrt_fail(R, line, col, "out of memory replacing with a regex");
  }
  tlrt_str *res = tlrt_str_new(R, out.data ? out.data : "", (int64_t)out.len);
  tl_strbuf_free(&out);
  return res;
}
