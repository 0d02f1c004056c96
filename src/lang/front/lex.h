/* lex.h — the TL lexer (LANGUAGE.md §1): source text -> tokens.
 * in: a file name and its text; out: the tokens, ending with TL_TOK_EOF, each with
 * its line and column; string literals decoded (escapes applied, UTF-8). Every
 * lexical error of the file goes to the diagnostics and lexing goes on after it,
 * so one run reports them all. Tokens and strings live in the lexer's arena and
 * go, all at once, with tl_lex_free. */
#ifndef TL_LANG_LEX_H
#define TL_LANG_LEX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "lang/front/diag.h"

/* X(name, spelling): keywords first, then punctuation, longest spellings first
 * within a shared prefix (the lexer takes the longest match) */
#define TL_KEYWORDS(X)                                                                 \
  X(FN, "fn") X(LET, "let") X(MUT, "mut") X(IF, "if") X(ELSE, "else")                \
  X(WHILE, "while") X(FOR, "for") X(IN, "in") X(LOOP, "loop") X(BREAK, "break")      \
  X(CONTINUE, "continue") X(RETURN, "return") X(STRUCT, "struct") X(IMPL, "impl")    \
  X(SELF, "self") X(TRUE, "true") X(FALSE, "false") X(AS, "as")                      \
  X(RELATION, "relation") X(ENUM, "enum") X(MATCH, "match") X(USE, "use")            \
  X(MOD, "mod") X(PUB, "pub") X(TRAIT, "trait")

#define TL_PUNCTS(X)                                                                   \
  X(PLUS_ASSIGN, "+=") X(MINUS_ASSIGN, "-=") X(STAR_ASSIGN, "*=")                    \
  X(SLASH_ASSIGN, "/=") X(PERCENT_ASSIGN, "%=") X(ARROW, "->") X(FAT_ARROW, "=>")    \
  X(AMP_ASSIGN, "&=") X(PIPE_ASSIGN, "|=") X(CARET_ASSIGN, "^=")                     \
  X(EQ, "==") X(NE, "!=") X(LE, "<=") X(GE, ">=") X(ANDAND, "&&") X(OROR, "||")      \
  X(LARROW, "<-") X(COLONCOLON, "::") X(IMPLIED_BY, ":-") X(DOTDOT, "..")            \
  X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(PERCENT, "%")              \
  X(ASSIGN, "=") X(LT, "<") X(GT, ">") X(NOT, "!") X(AMP, "&") X(PIPE, "|")          \
  X(COLON, ":") X(SEMI, ";") X(COMMA, ",") X(DOT, ".") X(QUESTION, "?")              \
  X(DOLLAR, "$") X(LPAREN, "(") X(RPAREN, ")") X(LBRACKET, "[") X(RBRACKET, "]")     \
  X(LBRACE, "{") X(RBRACE, "}") X(CARET, "^")                                        \
  /* never lexed (`<` comes first): the parser makes them of two adjacent `<` or `>`, \
   * so `Vec<Vec<i64>>` closes two types */                                          \
  X(SHL, "<<") X(SHR, ">>") X(SHL_ASSIGN, "<<=") X(SHR_ASSIGN, ">>=")

typedef enum {
  TL_TOK_EOF,
  TL_TOK_IDENT,
  TL_TOK_INT,    /* v.i */
  TL_TOK_FLOAT,  /* v.f */
  TL_TOK_STRING, /* str, len (decoded, NUL-terminated) */
  TL_TOK_CHAR,   /* v.i: the code point */
  TL_TOK_LABEL,  /* `'outer`, a loop's label (its text, quote included, is the name) */
#define TL_TOK_ENUM(name, text) TL_TOK_##name,
  TL_KEYWORDS(TL_TOK_ENUM) TL_PUNCTS(TL_TOK_ENUM)
#undef TL_TOK_ENUM
  TL_NTOKS
} tl_tok_kind;

typedef struct {
  tl_tok_kind kind;
  int line, col;   /* from 1 */
  uint32_t offset; /* into the source */
  uint32_t len;    /* source bytes; for strings the decoded length */
  union {
    int64_t i;
    double f;
  } v;
  const char *str; /* TL_TOK_STRING: the decoded text; INT, FLOAT: a type suffix (`5u16`),
                      or a big INT's spelling */
  bool big;        /* INT: v.i holds the bits of a literal above i64::MAX, a u64's only */
  bool lex_error;  /* a lexical error is in this token or just before it: the parser
                      does not report what follows from it (an error, then its echo) */
} tl_token;

typedef struct {
  tl_token *tokens;
  int ntokens;
  size_t cap;
  tl_arena *arena;
} tl_lexer;

/* Lexes src; returns the number of errors (0: every token is good). The tokens are
 * there either way, errors skipped. */
int tl_lex(tl_lexer *lx, tl_diag *diag);
void tl_lex_free(tl_lexer *lx);
const char *tl_tok_name(tl_tok_kind kind); /* "fn", "+=", "identifier", ... */
bool tl_tok_is_reserved(tl_tok_kind kind); /* use mod pub trait */

#endif
