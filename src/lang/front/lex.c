/* lex.c — the TL lexer: one pass over the bytes, a token at a time. */
#include "lang/front/lex.h"

#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

typedef struct {
  tl_lexer *lx;
  tl_diag *d;
  const char *src, *p, *end;
  const char *line_start;
  int line;
  bool bad_utf8; /* the literal being lexed has reported invalid UTF-8 (once is enough) */
} scanner;

typedef struct {
  const char *text;
  tl_tok_kind kind;
} spelling;

#define TL_SPELLING(name, text) {text, TL_TOK_##name},
static const spelling keywords[] = {TL_KEYWORDS(TL_SPELLING)};
static const spelling puncts[] = {TL_PUNCTS(TL_SPELLING)};
#undef TL_SPELLING

const char *tl_tok_name(tl_tok_kind kind) {
  switch (kind) {
  case TL_TOK_EOF: return "end of file";
  case TL_TOK_IDENT: return "identifier";
  case TL_TOK_INT: return "integer";
  case TL_TOK_FLOAT: return "float";
  case TL_TOK_STRING: return "string";
  case TL_TOK_CHAR: return "character";
  case TL_TOK_LABEL: return "label";
  default: break;
  }
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (keywords[i].kind == kind) return keywords[i].text;
  for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++)
    if (puncts[i].kind == kind) return puncts[i].text;
  return "?";
}

bool tl_tok_is_reserved(tl_tok_kind kind) {
  return kind == TL_TOK_USE || kind == TL_TOK_MOD ||
         kind == TL_TOK_PUB || kind == TL_TOK_TRAIT;
}

/* an error at byte `at` of the line that starts at line_start */
#define LEX_ERROR(s, at, line, line_start, ...) \
  tl_diag_error((s)->d, (line), (int)((at) - (line_start)) + 1, __VA_ARGS__)

/* the next token slot, position filled in; NULL when out of memory (reported) */
static tl_token *push(scanner *s, tl_tok_kind kind, const char *start, int line, const char *line_start) {
  tl_lexer *lx = s->lx;
  /* 256 tokens at first: a short file grows its array once or twice */
  if ((size_t)lx->ntokens == lx->cap && !tl_vec_grow(&lx->tokens, &lx->cap, lx->cap ? lx->cap + 1 : 256, sizeof *lx->tokens)) {
    tl_diag_oom(s->d, line, (int)(start - line_start) + 1, "out of memory lexing the file");
    return NULL;
  }
  tl_token *t = &lx->tokens[lx->ntokens++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->line = line;
  t->col = (int)(start - line_start) + 1;
  t->offset = (uint32_t)(start - s->src);
  t->len = (uint32_t)(s->p - start);
  return t;
}

static void newline(scanner *s, const char *at) {
  s->line++;
  s->line_start = at + 1;
}

/* whitespace, line comments and block comments (which nest, as in Rust) */
static void skip_space(scanner *s) {
  while (s->p < s->end) {
    char c = *s->p;
    if (c == '\n') {
      newline(s, s->p);
      s->p++;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      s->p++;
    } else if (c == '/' && s->p + 1 < s->end && s->p[1] == '/') {
      while (s->p < s->end && *s->p != '\n') s->p++;
    } else if (c == '/' && s->p + 1 < s->end && s->p[1] == '*') {
      const char *start = s->p, *start_line = s->line_start;
      int line = s->line, depth = 0;
      do {
        if (s->p + 1 < s->end && s->p[0] == '/' && s->p[1] == '*') depth++, s->p += 2;
        else if (s->p + 1 < s->end && s->p[0] == '*' && s->p[1] == '/') depth--, s->p += 2;
        else {
          if (*s->p == '\n') newline(s, s->p);
          s->p++;
        }
      } while (depth > 0 && s->p < s->end);
      if (depth > 0) LEX_ERROR(s, start, line, start_line, "unterminated block comment");
    } else {
      return;
    }
  }
}

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static int hex_value(char c) {
  return is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

static void lex_ident(scanner *s) {
  const char *start = s->p;
  while (s->p < s->end && (is_ident_start(*s->p) || is_digit(*s->p))) s->p++;
  size_t n = (size_t)(s->p - start);
  tl_tok_kind kind = TL_TOK_IDENT;
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (strlen(keywords[i].text) == n && !memcmp(keywords[i].text, start, n)) kind = keywords[i].kind;
  push(s, kind, start, s->line, s->line_start);
}

/* a literal's type suffix, Rust's `5u16`, `3i8`, `1.5f16` (the static name, NULL: none):
 * a float type's makes the literal a float; an integer type's on a float, or any other
 * letters, is an error */
static const char *lex_suffix(scanner *s, const char *start, bool *is_float) {
  static const char *const names[] = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"};
  if (s->p >= s->end || !is_ident_start(*s->p)) return NULL;
  const char *q = s->p;
  while (s->p < s->end && (is_ident_start(*s->p) || is_digit(*s->p))) s->p++;
  size_t n = (size_t)(s->p - q);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strlen(names[i]) != n || memcmp(names[i], q, n)) continue;
    bool float_ty = names[i][0] == 'f' || names[i][0] == 'b';
    if (*is_float && !float_ty) break;
    if (float_ty && start[0] == '0' && s->p - start > 1 && (start[1] == 'x' || start[1] == 'X')) break;
    *is_float |= float_ty;
    return names[i];
  }
  LEX_ERROR(s, q, s->line, s->line_start, "invalid suffix `%.*s` for %s literal", (int)n, q, *is_float ? "a float" : "a number");
  return NULL;
}

/* integers (decimal, 0x hex) are i64; a fraction or an exponent makes a float. `0..n`
 * is 0, `..`, n: a dot starts a fraction only before a digit. */
static void lex_number(scanner *s) {
  const char *start = s->p;
  bool is_float = false, overflow = false, u64_over = false;
  int64_t value = 0;
  uint64_t uval = 0; /* the value as a u64 (`18446744073709551615u64`) */
  if (s->p + 1 < s->end && s->p[0] == '0' && (s->p[1] == 'x' || s->p[1] == 'X')) {
    s->p += 2;
    const char *digits = s->p;
    for (int h; s->p < s->end && ((h = hex_value(*s->p)) >= 0 || *s->p == '_'); s->p++) {
      if (h < 0) continue; /* `0xFF_FF`: Rust's digit separator */
      overflow |= value > (INT64_MAX >> 4);
      value = (int64_t)((uint64_t)value << 4) | h;
      u64_over |= uval > (UINT64_MAX >> 4);
      uval = uval << 4 | (uint64_t)h;
    }
    if (s->p == digits) LEX_ERROR(s, start, s->line, s->line_start, "hexadecimal literal has no digits");
  } else {
    for (; s->p < s->end && (is_digit(*s->p) || *s->p == '_'); s->p++) {
      if (*s->p == '_') continue; /* `1_000_000`: Rust's digit separator */
      int dgt = *s->p - '0';
      overflow |= value > (INT64_MAX - dgt) / 10;
      if (!overflow) value = value * 10 + dgt;
      u64_over |= uval > (UINT64_MAX - (uint64_t)dgt) / 10;
      uval = uval * 10 + (uint64_t)dgt;
    }
    if (s->p + 1 < s->end && s->p[0] == '.' && is_digit(s->p[1])) {
      is_float = true;
      for (s->p++; s->p < s->end && (is_digit(*s->p) || *s->p == '_'); s->p++) {}
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
      const char *q = s->p + 1;
      if (q < s->end && (*q == '+' || *q == '-')) q++;
      if (q < s->end && is_digit(*q)) {
        is_float = true;
        for (s->p = q; s->p < s->end && (is_digit(*s->p) || *s->p == '_'); s->p++) {}
      }
    }
  }
  const char *num_end = s->p, *suffix = lex_suffix(s, start, &is_float);
  tl_token *t = push(s, is_float ? TL_TOK_FLOAT : TL_TOK_INT, start, s->line, s->line_start);
  if (!t) return;
  t->str = suffix;
  if (is_float && suffix && suffix[0] == 'f' && !memchr(start, '.', (size_t)(num_end - start)) &&
      !memchr(start, 'e', (size_t)(num_end - start)) && !memchr(start, 'E', (size_t)(num_end - start)) && !overflow) {
    t->v.f = (double)value; /* `5f32`: an integer written as a float */
  } else if (is_float) {
    char buf[128];
    size_t n = 0;
    for (const char *c = start; c < num_end && n < sizeof buf - 1; c++)
      if (*c != '_') buf[n++] = *c; /* the separators out */
    buf[n] = 0;
    t->v.f = strtod(buf, NULL);
  } else if (overflow && (size_t)(num_end - start) == 19 && (!suffix || !strcmp(suffix, "i64")) && !memcmp(start, "9223372036854775808", 19) && s->lx->ntokens > 1 &&
             s->lx->tokens[s->lx->ntokens - 2].kind == TL_TOK_MINUS) {
    t->v.i = INT64_MIN; /* `-9223372036854775808` is i64::MIN, as in Rust: the parser takes it only after a unary minus */
  } else if (overflow && !u64_over && suffix && !strcmp(suffix, "u64")) {
    t->v.i = (int64_t)uval; /* its bits: the checker reads a u64-suffixed literal unsigned */
  } else if (overflow && !u64_over && !suffix) { /* a u64's only: the checker says where it is not one */
    char *text = tl_arena_alloc(s->lx->arena, (size_t)(num_end - start) + 1);
    if (!text) {
      LEX_ERROR(s, start, s->line, s->line_start, "out of memory lexing a literal");
      return;
    }
    memcpy(text, start, (size_t)(num_end - start));
    t->v.i = (int64_t)uval;
    t->big = true;
    t->str = text;
  } else if (overflow) {
    LEX_ERROR(s, start, s->line, s->line_start, "integer literal %.*s is too large for %s", (int)(num_end - start), start,
              suffix ? suffix : "i64");
  } else {
    t->v.i = value;
  }
}

/* appends the UTF-8 of code point cp to buf; returns the byte count */
static int utf8_encode(uint32_t cp, char *buf) {
  if (cp < 0x80) return buf[0] = (char)cp, 1;
  if (cp < 0x800) return buf[0] = (char)(0xC0 | cp >> 6), buf[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    buf[0] = (char)(0xE0 | cp >> 12);
    buf[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    buf[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  buf[0] = (char)(0xF0 | cp >> 18);
  buf[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  buf[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  buf[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* the code point of one UTF-8 sequence at p (advanced); a bad byte reads as itself */
static uint32_t utf8_decode(scanner *s) {
  unsigned char c = (unsigned char)*s->p++;
  int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  uint32_t cp = more == 3 ? c & 0x07u : more == 2 ? c & 0x0Fu : more == 1 ? c & 0x1Fu : c;
  for (; more > 0 && s->p < s->end && ((unsigned char)*s->p & 0xC0) == 0x80; more--)
    cp = cp << 6 | ((unsigned char)*s->p++ & 0x3Fu);
  return cp;
}

/* the code point of the well-formed UTF-8 sequence at p (advanced past it), or -1
 * (advanced past the bad lead byte and the continuation bytes after it): overlong
 * forms, surrogates, code points past U+10FFFF and cut-off sequences are not UTF-8 */
static int64_t utf8_decode_strict(scanner *s) {
  unsigned char c = (unsigned char)*s->p++;
  if (c < 0x80) return c;
  int more = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
  if (more < 0) { /* a stray continuation byte, or a lead that no sequence starts with */
    while (s->p < s->end && ((unsigned char)*s->p & 0xC0) == 0x80) s->p++;
    return -1;
  }
  static const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
  uint32_t cp = c & (0x3Fu >> more);
  int k = 0;
  for (; k < more && s->p < s->end && ((unsigned char)*s->p & 0xC0) == 0x80; k++)
    cp = cp << 6 | ((unsigned char)*s->p++ & 0x3Fu);
  if (k < more || cp < least[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  return cp;
}

/* one character of a string or char literal, escapes decoded; -1 after an error */
static int64_t lex_char_in_literal(scanner *s) {
  const char *at = s->p;
  if (*s->p != '\\') {
    int64_t cp = utf8_decode_strict(s);
    if (cp < 0 && !s->bad_utf8) {
      s->bad_utf8 = true;
      LEX_ERROR(s, at, s->line, s->line_start, "invalid UTF-8 in a literal (byte 0x%02X): source text must be UTF-8",
                (unsigned char)*at);
    }
    return cp;
  }
  s->p++;
  if (s->p >= s->end) return -1;
  char e = *s->p++;
  if (e == '\n') newline(s, s->p - 1); /* the line count stays right after a bad escape */
  switch (e) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case '0': return 0;
  case '\\': return '\\';
  case '"': return '"';
  case '\'': return '\'';
  case 'u': {
    uint32_t cp = 0;
    int digits = 0;
    if (s->p < s->end && *s->p == '{') {
      for (s->p++; s->p < s->end && hex_value(*s->p) >= 0 && digits < 7; s->p++, digits++)
        cp = cp << 4 | (uint32_t)hex_value(*s->p);
      if (s->p < s->end && *s->p == '}' && digits > 0 && digits <= 6) {
        s->p++;
        if (cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF)) return cp;
        LEX_ERROR(s, at, s->line, s->line_start, "\\u{...} is not a Unicode scalar value");
        return -1;
      }
    }
    LEX_ERROR(s, at, s->line, s->line_start, "malformed \\u escape: write \\u{1F600} (1 to 6 hex digits)");
    return -1;
  }
  default: {
    char name[2] = {e, 0};
    LEX_ERROR(s, at, s->line, s->line_start, "unknown escape '\\%s'", name);
    return -1;
  }
  }
}

static void lex_string(scanner *s) {
  const char *start = s->p++, *start_line = s->line_start;
  int line = s->line;
  s->bad_utf8 = false;
  /* the closing quote first: an unterminated string ends with its own line, so the
   * lines after it are lexed as code, not swallowed (and their errors not pushed to
   * the end of the file) */
  const char *stop = s->p;
  while (stop < s->end && *stop != '"') stop += *stop == '\\' && stop + 1 < s->end ? 2 : 1;
  bool closed = stop < s->end;
  if (!closed) {
    stop = s->p;
    while (stop < s->end && *stop != '\n') stop++;
  }
  tl_strbuf text = {0};
  while (s->p < stop) {
    if (*s->p == '\n') newline(s, s->p);
    int64_t c = lex_char_in_literal(s);
    if (c == 0) {
      tl_strbuf_printf(&text, "%c", 0); /* a NUL is kept: the token carries its length */
    } else if (c > 0) {
      char buf[5] = {0};
      buf[utf8_encode((uint32_t)c, buf)] = 0;
      tl_strbuf_puts(&text, buf);
    }
  }
  if (!closed) {
    LEX_ERROR(s, start, line, start_line, "unterminated string literal");
    s->p = stop;
  } else {
    s->p = stop + 1;
  }
  tl_token *t = push(s, TL_TOK_STRING, start, line, start_line);
  char *copy = t ? tl_arena_alloc(s->lx->arena, text.len + 1) : NULL;
  if (t && copy) {
    if (text.len) memcpy(copy, text.data, text.len);
    t->str = copy;
    t->len = (uint32_t)text.len;
  } else if (t) {
    tl_diag_oom(s->d, line, t->col, "out of memory lexing a string");
  }
  tl_strbuf_free(&text);
}

/* `'name` not closed by a quote, before a `:` or after break or continue: a loop label
 * (anything else is a character literal, right or wrong) */
static bool lex_label(scanner *s) {
  const char *q = s->p + 1;
  if (q >= s->end || !is_ident_start(*q)) return false;
  while (q < s->end && (is_ident_start(*q) || is_digit(*q))) q++;
  if (q < s->end && *q == '\'') return false;
  const char *c = q;
  while (c < s->end && (*c == ' ' || *c == '\t')) c++;
  bool colon = c < s->end && *c == ':' && (c + 1 >= s->end || c[1] != ':');
  tl_tok_kind prev = s->lx->ntokens ? s->lx->tokens[s->lx->ntokens - 1].kind : TL_TOK_EOF;
  if (!colon && prev != TL_TOK_BREAK && prev != TL_TOK_CONTINUE) return false;
  tl_token *t = push(s, TL_TOK_LABEL, s->p, s->line, s->line_start);
  if (t) t->len = (uint32_t)(q - s->p); /* the quote and the name */
  s->p = q;
  return true;
}

static void lex_char(scanner *s) {
  if (lex_label(s)) return;
  const char *start = s->p++;
  int64_t c = -1;
  int errors = s->d->errors;
  s->bad_utf8 = false;
  if (s->p < s->end && *s->p == '\'') {
    LEX_ERROR(s, start, s->line, s->line_start, "empty character literal");
  } else if (s->p < s->end && *s->p != '\n') {
    c = lex_char_in_literal(s);
  }
  bool reported = s->d->errors > errors; /* an empty literal or a bad escape: said already */
  if (s->p < s->end && *s->p == '\'') {
    s->p++;
  } else {
    /* 'ab': a closing quote later on the line means too many characters; without one
     * the literal is unterminated and the rest of the line is left to the lexer */
    const char *close = s->p;
    while (close < s->end && *close != '\'' && *close != '\n') close++;
    bool closed = close < s->end && *close == '\'';
    if (!reported)
      LEX_ERROR(s, start, s->line, s->line_start,
                closed ? "a character literal holds one character (use a string \"...\" for more)"
                       : "unterminated character literal");
    if (closed) s->p = close + 1;
  }
  tl_token *t = push(s, TL_TOK_CHAR, start, s->line, s->line_start);
  if (t) t->v.i = c < 0 ? 0 : c;
}

static void lex_punct(scanner *s) {
  const char *start = s->p;
  for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
    size_t n = strlen(puncts[i].text);
    if ((size_t)(s->end - s->p) >= n && !memcmp(s->p, puncts[i].text, n)) {
      s->p += n;
      push(s, puncts[i].kind, start, s->line, s->line_start);
      return;
    }
  }
  unsigned char c = (unsigned char)*s->p;
  char shown[16];
  if (c >= 0x20 && c < 0x7F) snprintf(shown, sizeof shown, "'%c'", c);
  else snprintf(shown, sizeof shown, "byte 0x%02X", c);
  LEX_ERROR(s, start, s->line, s->line_start, "unexpected character %s", shown);
  if (c >= 0x80) utf8_decode(s); /* skip the whole character */
  else s->p++;
}

int tl_lex(tl_lexer *lx, tl_diag *d) {
  memset(lx, 0, sizeof *lx);
  lx->arena = tl_arena_create();
  int before = d->errors;
  scanner s = {lx, d, d->src, d->src, d->src + d->len, d->src, 1, false};
  if (!lx->arena) {
    tl_diag_oom(d, 1, 1, "out of memory lexing the file");
    return d->errors - before;
  }
  int reported = d->errors; /* errors already marked on a token */
  for (;;) {
    skip_space(&s);
    if (s.p >= s.end) break;
    char c = *s.p;
    int ntok = lx->ntokens;
    if (is_ident_start(c)) lex_ident(&s);
    else if (is_digit(c)) lex_number(&s);
    else if (c == '"') lex_string(&s);
    else if (c == '\'') lex_char(&s);
    else lex_punct(&s);
    if (lx->ntokens > ntok && d->errors > reported) { /* this token, or a skipped byte before it */
      lx->tokens[lx->ntokens - 1].lex_error = true;
      reported = d->errors;
    }
  }
  /* end of file sits just past the last text, not on the blank line after a final
   * newline: an error there shows the line it follows */
  const char *last = s.end;
  int line = s.line;
  while (last > s.src && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r' || last[-1] == '\n'))
    if (*--last == '\n') line--;
  const char *line_start = last;
  while (line_start > s.src && line_start[-1] != '\n') line_start--;
  s.p = last;
  tl_token *eof = push(&s, TL_TOK_EOF, last, line, line_start);
  if (eof && d->errors > reported) eof->lex_error = true;
  return d->errors - before;
}

void tl_lex_free(tl_lexer *lx) {
  free(lx->tokens);
  if (lx->arena) tl_arena_destroy(lx->arena);
  memset(lx, 0, sizeof *lx);
}
