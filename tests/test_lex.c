/* test_lex.c — the TL lexer: every token class, values of literals, positions, and
 * each lexical error with its rendered diagnostic. */
#include <stdlib.h>

#include "lang/front/lex.h"
#include "test.h"

typedef struct {
  tl_diag d;
  tl_lexer lx;
  int errors;
} lexed;

static void lex(lexed *l, const char *src) {
  tl_diag_init(&l->d, "t.tl", src, strlen(src));
  l->errors = tl_lex(&l->lx, &l->d);
}

static void done(lexed *l) {
  tl_lex_free(&l->lx);
  tl_diag_free(&l->d);
}

/* the token kinds, as their names joined by spaces */
static void kinds(const lexed *l, char *out, size_t n) {
  out[0] = 0;
  for (int i = 0; i < l->lx.ntokens; i++)
    snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "", tl_tok_name(l->lx.tokens[i].kind));
}

static const char *diag_text(lexed *l) { return l->d.text.data ? l->d.text.data : ""; }

TEST(lex_a_function) {
  lexed l;
  lex(&l, "fn main() {\n  let mut x = t.sum(1) * 2.5e-3; // note\n  x += 1;\n}\n");
  char got[512];
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "fn identifier ( ) { let mut identifier = identifier . identifier ( integer ) * float ; "
                 "identifier += integer ; } end of file");
  CHECK_INT(l.errors, 0);
  const tl_token *t = l.lx.tokens;
  CHECK_INT(t[4].line, 1);
  CHECK_INT(t[4].col, 11); /* { */
  CHECK_INT(t[5].line, 2);
  CHECK_INT(t[5].col, 3); /* let */
  CHECK_INT(t[13].v.i, 1);
  CHECK_NEAR(t[16].v.f, 2.5e-3, 1e-18);
  CHECK_INT(t[19].line, 3);
  done(&l);
}

TEST(lex_every_punctuation_longest_match) {
  lexed l;
  lex(&l, "+= -= *= /= %= -> => == != <= >= && || <- :: :- .. + - * / % = < > ! & | : ; , . ? $ ( ) [ ] { }");
  char got[512];
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "+= -= *= /= %= -> => == != <= >= && || <- :: :- .. + - * / % = < > ! & | : ; , . ? $ ( ) [ ] { } "
                 "end of file");
  done(&l);
  lex(&l, "a<-b x<=y 0..n i..j a::b");
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "identifier <- identifier identifier <= identifier integer .. identifier identifier .. identifier "
                 "identifier :: identifier end of file");
  done(&l);
}

/* `<-` is one token wherever it is (a comprehension generator); `< -` is two */
TEST(lex_larrow_is_one_token) {
  lexed l;
  lex(&l, "[i | i<-0..n, j <- 0..m]\na<-1 a < -1 a<- -1 a<--1 a<=-1");
  char got[512];
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "[ identifier | identifier <- integer .. identifier , identifier <- integer .. identifier ] "
                 "identifier <- integer identifier < - integer identifier <- - integer identifier <- - integer "
                 "identifier <= - integer end of file");
  CHECK_INT(l.errors, 0);
  const tl_token *t = l.lx.tokens;
  CHECK(t[4].kind == TL_TOK_LARROW && t[4].line == 1 && t[4].col == 7 && t[4].len == 2);
  CHECK(t[10].kind == TL_TOK_LARROW && t[10].col == 17);
  CHECK(t[16].kind == TL_TOK_LARROW && t[16].line == 2 && t[16].col == 2);
  CHECK(t[19].kind == TL_TOK_LT && t[20].kind == TL_TOK_MINUS);
  done(&l);
}

TEST(lex_keywords_and_reserved_words) {
  lexed l;
  lex(&l, "fn let mut if else while for in loop break continue return struct impl self true false as relation "
          "enum match use mod pub trait fnord self_ _x");
  char got[512];
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "fn let mut if else while for in loop break continue return struct impl self true false as "
                 "relation enum match use mod pub trait identifier identifier identifier end of file");
  CHECK(tl_tok_is_reserved(TL_TOK_PUB) && tl_tok_is_reserved(TL_TOK_TRAIT) && !tl_tok_is_reserved(TL_TOK_FN) &&
        !tl_tok_is_reserved(TL_TOK_MATCH) && !tl_tok_is_reserved(TL_TOK_ENUM));
  done(&l);
}

TEST(lex_numbers) {
  lexed l;
  lex(&l, "0 42 9223372036854775807 0x1F 1.0 3.25 2.5e-3 1e3 7E+2 1.x 5.sum");
  const tl_token *t = l.lx.tokens;
  CHECK_INT(l.errors, 0);
  CHECK_INT(t[0].v.i, 0);
  CHECK_INT(t[1].v.i, 42);
  CHECK(t[2].v.i == INT64_MAX);
  CHECK_INT(t[3].v.i, 31);
  CHECK(t[4].kind == TL_TOK_FLOAT && t[4].v.f == 1.0);
  CHECK_NEAR(t[5].v.f, 3.25, 0);
  CHECK_NEAR(t[6].v.f, 0.0025, 1e-18);
  CHECK(t[7].kind == TL_TOK_FLOAT && t[7].v.f == 1000);
  CHECK(t[8].kind == TL_TOK_FLOAT && t[8].v.f == 700);
  CHECK(t[9].kind == TL_TOK_INT && t[10].kind == TL_TOK_DOT && t[11].kind == TL_TOK_IDENT); /* 1.x: a field */
  CHECK(t[12].kind == TL_TOK_INT && t[13].kind == TL_TOK_DOT); /* 5.sum: a method call */
  done(&l);
}

TEST(lex_strings_and_chars) {
  lexed l;
  lex(&l, "\"a\\tb\\n\\\\ \\\"q\\\" \\u{e9}\\u{1F600}\" 'x' '\\n' '\\u{3bb}' '\xce\xbb' \"\"");
  CHECK_INT(l.errors, 0);
  const tl_token *t = l.lx.tokens;
  CHECK(t[0].kind == TL_TOK_STRING);
  CHECK_STR(t[0].str, "a\tb\n\\ \"q\" \xc3\xa9\xf0\x9f\x98\x80");
  CHECK_INT(t[0].len, 16);
  CHECK_INT(t[1].v.i, 'x');
  CHECK_INT(t[2].v.i, '\n');
  CHECK_INT(t[3].v.i, 0x3bb);
  CHECK_INT(t[4].v.i, 0x3bb); /* a UTF-8 character as it is */
  CHECK(t[5].kind == TL_TOK_STRING && t[5].len == 0 && t[5].str[0] == 0);
  done(&l);
  lex(&l, "\"a\\0b\"");
  CHECK_INT(l.lx.tokens[0].len, 3); /* a NUL is part of the string */
  CHECK(l.lx.tokens[0].str[1] == 0 && l.lx.tokens[0].str[2] == 'b');
  done(&l);
}

/* literals are strict UTF-8: every well-formed length is read as its code point, and
 * each ill-formed kind is one error at its byte, once per literal */
TEST(lex_utf8_in_literals) {
  lexed l;
  lex(&l, "'\x7f' '\xc2\x80' '\xe0\xa0\x80' '\xf0\x90\x80\x80' '\xf4\x8f\xbf\xbf'");
  CHECK_INT(l.errors, 0);
  CHECK_INT(l.lx.tokens[0].v.i, 0x7f);
  CHECK_INT(l.lx.tokens[1].v.i, 0x80);
  CHECK_INT(l.lx.tokens[2].v.i, 0x800);
  CHECK_INT(l.lx.tokens[3].v.i, 0x10000);
  CHECK_INT(l.lx.tokens[4].v.i, 0x10FFFF);
  done(&l);
  static const char *bad[] = {
      "\"\x80\"",             /* a continuation byte alone */
      "\"\xc1\xbf\"",         /* overlong: U+007F in two bytes */
      "\"\xe0\x9f\xbf\"",     /* overlong: U+07FF in three */
      "\"\xf0\x8f\xbf\xbf\"", /* overlong: U+FFFF in four */
      "\"\xed\xbf\xbf\"",     /* a surrogate, U+DFFF */
      "\"\xf4\x90\x80\x80\"", /* past U+10FFFF */
      "\"\xf5\x80\x80\x80\"", /* a lead no sequence starts with */
      "\"\xe2\x82\"",         /* cut off before the closing quote */
      "\"\xe2\x82",           /* cut off by the end of the file (and unterminated) */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lex(&l, bad[i]);
    CHECK(l.errors >= 1);
    CHECK(strstr(diag_text(&l), "t.tl:1:2: error: invalid UTF-8 in a literal") == diag_text(&l));
    done(&l);
  }
  lex(&l, "\"\xff\xfe ok \xff\"");
  CHECK_INT(l.errors, 1); /* once per literal */
  CHECK_STR(l.lx.tokens[0].str, " ok ");
  done(&l);
}

/* a token with a lexical error in it, or just after skipped bytes, is marked, so the
 * parser says nothing about what follows from it; end of file sits after the last text */
TEST(lex_marks_error_tokens_and_places_end_of_file) {
  lexed l;
  lex(&l, "a \"open\nb @ c\n\n  \n");
  CHECK_INT(l.errors, 2);
  CHECK(!l.lx.tokens[0].lex_error);                                                /* a */
  CHECK(l.lx.tokens[1].kind == TL_TOK_STRING && l.lx.tokens[1].lex_error);         /* "open: its line */
  CHECK(l.lx.tokens[2].kind == TL_TOK_IDENT && !l.lx.tokens[2].lex_error);         /* b, lexed as code */
  CHECK(l.lx.tokens[3].kind == TL_TOK_IDENT && l.lx.tokens[3].lex_error);          /* c, after the @ */
  CHECK(l.lx.tokens[4].kind == TL_TOK_EOF && l.lx.tokens[4].line == 2 && l.lx.tokens[4].col == 6);
  done(&l);
  lex(&l, "");
  CHECK(l.lx.tokens[0].kind == TL_TOK_EOF && l.lx.tokens[0].line == 1 && l.lx.tokens[0].col == 1);
  done(&l);
}

TEST(lex_comments_nest) {
  lexed l;
  lex(&l, "a /* outer /* inner */ still outer */ b // to the end\nc");
  char got[128];
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "identifier identifier identifier end of file");
  CHECK_INT(l.lx.tokens[2].line, 2);
  done(&l);
}

/* every error of the file is reported, each with its line, caret and message */
TEST(lex_errors_are_all_reported) {
  lexed l;
  lex(&l, "let s = \"bad \\q escape\";\nlet n = 99999999999999999999;\nlet c = '';\nx @ y\n\"open");
  CHECK_INT(l.errors, 5);
  CHECK_STR(diag_text(&l), "t.tl:1:14: error: unknown escape '\\q'\n"
                           "let s = \"bad \\q escape\";\n"
                           "             ^\n"
                           "t.tl:2:9: error: integer literal 99999999999999999999 is too large for i64\n"
                           "let n = 99999999999999999999;\n"
                           "        ^\n"
                           "t.tl:3:9: error: empty character literal\n"
                           "let c = '';\n"
                           "        ^\n"
                           "t.tl:4:3: error: unexpected character '@'\n"
                           "x @ y\n"
                           "  ^\n"
                           "t.tl:5:1: error: unterminated string literal\n"
                           "\"open\n"
                           "^\n");
  /* the tokens around the errors are still there */
  char got[512];
  kinds(&l, got, sizeof got);
  CHECK_STR(got, "let identifier = string ; let identifier = integer ; let identifier = character ; identifier "
                 "identifier string end of file");
  done(&l);
}

TEST(lex_more_errors) {
  lexed l;
  lex(&l, "/* never closed\n a \"\\u{110000}\" '\\u{zz}' 0x 'ab'");
  CHECK_INT(l.errors, 1);
  CHECK_STR(diag_text(&l), "t.tl:1:1: error: unterminated block comment\n/* never closed\n^\n");
  done(&l);
  lex(&l, "'\nx'\n");
  CHECK_INT(l.errors, 2); /* a quote before a newline, twice */
  CHECK_CONTAINS(diag_text(&l), "t.tl:1:1: error: unterminated character literal");
  CHECK_CONTAINS(diag_text(&l), "t.tl:2:2: error: unterminated character literal");
  done(&l);
  lex(&l, "\"\\u{110000}\" '\\u{zz}' 0x 'ab' \t\xff");
  CHECK_INT(l.errors, 5);
  CHECK_CONTAINS(diag_text(&l), "t.tl:1:2: error: \\u{...} is not a Unicode scalar value");
  CHECK_CONTAINS(diag_text(&l), "t.tl:1:15: error: malformed \\u escape: write \\u{1F600} (1 to 6 hex digits)");
  CHECK_CONTAINS(diag_text(&l), "t.tl:1:23: error: hexadecimal literal has no digits");
  CHECK_CONTAINS(diag_text(&l), "t.tl:1:26: error: a character literal holds one character");
  CHECK_CONTAINS(diag_text(&l), "t.tl:1:32: error: unexpected character byte 0xFF\n"
                                "\"\\u{110000}\" '\\u{zz}' 0x 'ab' \t\xff\n"
                                "                              \t^\n");
  done(&l);
}
