/* parse_dump.c — the syntax tree as S-expressions (tl_ast_dump, format in parse.h):
 * in: a parsed program; out: its text, one item a line. The parser's tests compare it. */
#include "lang/front/parse.h"

#include "lang/front/parse_logic.h"

#include <stdio.h>
#include <string.h>

/* ---- dump: the tree as S-expressions (format in parse.h) ---- */

static void dump_node(tl_strbuf *b, const tl_node *n);

static void dump_type(tl_strbuf *b, const tl_type *t) {
  if (t->is_tuple) {
    tl_strbuf_puts(b, "(");
    for (const tl_type *e = t->elems; e; e = e->next) {
      dump_type(b, e);
      tl_strbuf_puts(b, e->next ? ", " : t->elems->next ? "" : ",");
    }
    tl_strbuf_puts(b, ")");
    return;
  }
  tl_strbuf_puts(b, t->name);
  if (t->dtype && t->rank >= 0) tl_strbuf_printf(b, "<%s,%lld>", t->dtype, (long long)t->rank);
  else if (t->dtype) tl_strbuf_printf(b, "<%s>", t->dtype);
  for (const tl_type *e = t->elems; e; e = e->next) { /* Option<T>, Result<T, E> */
    tl_strbuf_puts(b, e == t->elems ? "<" : ", ");
    dump_type(b, e);
    if (!e->next) tl_strbuf_puts(b, ">");
  }
}

static void dump_list(tl_strbuf *b, const tl_node *n) {
  for (; n; n = n->next) {
    tl_strbuf_puts(b, " ");
    dump_node(b, n);
  }
}

/* a float always shows a '.' or an exponent, so it never reads as an integer */
static void dump_float(tl_strbuf *b, double f) {
  char buf[64];
  double back;
  for (int prec = 1; prec <= 17; prec++) { /* the shortest text that reads back */
    snprintf(buf, sizeof buf, "%.*g", prec, f);
    if (sscanf(buf, "%lf", &back) == 1 && back == f) break;
  }
  tl_strbuf_puts(b, buf);
  if (!strpbrk(buf, ".eEin")) tl_strbuf_puts(b, ".0");
}

static void dump_str(tl_strbuf *b, const char *s, size_t len) {
  tl_strbuf_puts(b, "(str \"");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') tl_strbuf_printf(b, "\\%c", c);
    else if (c == '\n') tl_strbuf_puts(b, "\\n");
    else if (c == '\t') tl_strbuf_puts(b, "\\t");
    else if (c < 0x20) tl_strbuf_printf(b, "\\u{%x}", c);
    else tl_strbuf_printf(b, "%c", c);
  }
  tl_strbuf_puts(b, "\")");
}

static const char *op_text(tl_tok_kind k) { return k == TL_TOK_AMP ? "&mut" : tl_tok_name(k); }

static void dump_node(tl_strbuf *b, const tl_node *n) {
  switch (n->kind) {
  case TL_N_INT: tl_strbuf_printf(b, "%lld", (long long)n->ival); return;
  case TL_N_CLOSURE: tl_strbuf_puts(b, "(closure)"); return;
  case TL_N_FLOAT: dump_float(b, n->fval); return;
  case TL_N_STR: dump_str(b, n->str, n->len); return;
  case TL_N_CHAR:
    if (n->ival >= 0x20 && n->ival < 0x7F && n->ival != '\'' && n->ival != '\\')
      tl_strbuf_printf(b, "(char '%c')", (int)n->ival);
    else tl_strbuf_printf(b, "(char '\\u{%llx}')", (long long)n->ival);
    return;
  case TL_N_BOOL: tl_strbuf_puts(b, n->ival ? "true" : "false"); return;
  case TL_N_IDENT: case TL_N_PATH: tl_strbuf_printf(b, "%s%s", n->is_mut ? "mut " : "", n->name); return;
  case TL_N_SELF: tl_strbuf_puts(b, "self"); return;
  case TL_N_UNARY: tl_strbuf_printf(b, "(%s ", op_text(n->op)); dump_node(b, n->lhs); break;
  case TL_N_BINARY: case TL_N_ASSIGN:
    tl_strbuf_printf(b, "(%s ", tl_tok_name(n->op));
    dump_node(b, n->lhs);
    tl_strbuf_puts(b, " ");
    dump_node(b, n->rhs);
    break;
  case TL_N_TRY: tl_strbuf_puts(b, "(? "); dump_node(b, n->lhs); break;
  case TL_N_CAST:
    tl_strbuf_puts(b, "(as ");
    dump_node(b, n->lhs);
    tl_strbuf_puts(b, " ");
    dump_type(b, n->type);
    break;
  case TL_N_RANGE:
    tl_strbuf_puts(b, n->op == TL_TOK_ASSIGN ? "(..= " : "(.. ");
    if (n->lhs) dump_node(b, n->lhs);
    else tl_strbuf_puts(b, "_");
    tl_strbuf_puts(b, " ");
    if (n->rhs) dump_node(b, n->rhs);
    else tl_strbuf_puts(b, "_");
    break;
  case TL_N_CALL:
    tl_strbuf_puts(b, "(call ");
    dump_node(b, n->lhs);
    dump_list(b, n->args);
    if (n->ival == 1 && !n->args) tl_strbuf_puts(b, " ..");
    break;
  case TL_N_METHOD:
    tl_strbuf_puts(b, "(method ");
    dump_node(b, n->lhs);
    tl_strbuf_printf(b, " %s", n->name);
    dump_list(b, n->args);
    break;
  case TL_N_FIELD: tl_strbuf_puts(b, "(. "); dump_node(b, n->lhs); tl_strbuf_printf(b, " %s", n->name); break;
  case TL_N_INDEX: tl_strbuf_puts(b, "(index "); dump_node(b, n->lhs); dump_list(b, n->args); break;
  case TL_N_ARRAY: tl_strbuf_puts(b, "(array"); dump_list(b, n->args); break;
  case TL_N_TUPLE: tl_strbuf_puts(b, "(tuple"); dump_list(b, n->args); break;
  case TL_N_COMPR:
    tl_strbuf_puts(b, "(compr (");
    for (const tl_node *a = n->args; a; a = a->next) tl_strbuf_printf(b, "%s%s", a == n->args ? "" : " ", a->name);
    tl_strbuf_puts(b, ")");
    dump_list(b, n->stmts);
    if (n->body) tl_strbuf_puts(b, " "), dump_node(b, n->body);
    break;
  case TL_N_GEN: tl_strbuf_printf(b, "(<- %s ", n->name); dump_node(b, n->lhs); break;
  case TL_N_STRUCT_LIT:
    tl_strbuf_printf(b, "(struct-lit %s", n->name);
    dump_list(b, n->args);
    if (n->ival) tl_strbuf_puts(b, " ..");
    break;
  case TL_N_MATCH:
    tl_strbuf_puts(b, n->ival == 2 ? "(while-let " : n->ival ? "(if-let " : "(match ");
    dump_node(b, n->lhs);
    dump_list(b, n->args);
    break;
  case TL_N_ARM:
    tl_strbuf_puts(b, "(=> ");
    dump_node(b, n->lhs);
    if (n->cond) tl_strbuf_puts(b, " (if "), dump_node(b, n->cond), tl_strbuf_puts(b, ")");
    tl_strbuf_puts(b, " ");
    if (n->rhs) dump_node(b, n->rhs);
    else tl_strbuf_puts(b, "_");
    break;
  case TL_N_VARIANT: tl_strbuf_printf(b, "(variant %s", n->name); dump_list(b, n->args); break;
  case TL_N_FIELD_INIT: tl_strbuf_printf(b, "(%s ", n->name); dump_node(b, n->lhs); break;
  case TL_N_IF:
    tl_strbuf_puts(b, "(if ");
    dump_node(b, n->cond);
    tl_strbuf_puts(b, " ");
    dump_node(b, n->then);
    if (n->els) tl_strbuf_puts(b, " "), dump_node(b, n->els);
    break;
  case TL_N_BLOCK:
    tl_strbuf_puts(b, "(block");
    dump_list(b, n->stmts);
    if (n->value) {
      tl_strbuf_puts(b, " (value ");
      dump_node(b, n->value);
      tl_strbuf_puts(b, ")");
    }
    break;
  case TL_N_LET:
    if (n->lhs) tl_strbuf_puts(b, "(let "), dump_node(b, n->lhs);
    else tl_strbuf_printf(b, "(let %s%s", n->is_mut ? "mut " : "", n->name);
    if (n->type) tl_strbuf_puts(b, " : "), dump_type(b, n->type);
    if (n->rhs) tl_strbuf_puts(b, " "), dump_node(b, n->rhs);
    break;
  case TL_N_EXPR_STMT: dump_node(b, n->lhs); return;
  case TL_N_WHILE:
    tl_strbuf_puts(b, "(while ");
    dump_node(b, n->cond);
    tl_strbuf_puts(b, " ");
    dump_node(b, n->body);
    break;
  case TL_N_LOOP: tl_strbuf_puts(b, "(loop "); dump_node(b, n->body); break;
  case TL_N_FOR:
    tl_strbuf_printf(b, "(for %s ", n->name);
    dump_node(b, n->lhs);
    tl_strbuf_puts(b, " ");
    dump_node(b, n->body);
    break;
  case TL_N_BREAK: tl_strbuf_puts(b, "(break"); break;
  case TL_N_CONTINUE: tl_strbuf_puts(b, "(continue"); break;
  case TL_N_RETURN:
    tl_strbuf_puts(b, "(return");
    if (n->lhs) tl_strbuf_puts(b, " "), dump_node(b, n->lhs);
    break;
  case TL_N_ERROR: tl_strbuf_puts(b, "(error"); break;
  case TL_N_LOGIC: case TL_N_LVAR: tl_logic_dump_node(b, n); return;
  }
  tl_strbuf_puts(b, ")");
}

static void dump_fn(tl_strbuf *b, const tl_fn *f) {
  tl_strbuf_printf(b, "(fn %s (", f->name);
  for (const tl_param *pa = f->params; pa; pa = pa->next) {
    if (pa != f->params) tl_strbuf_puts(b, " ");
    if (pa->is_self) {
      tl_strbuf_puts(b, !pa->by_ref ? (pa->is_mut ? "mut self" : "self") : pa->is_mut ? "&mut self" : "&self");
      continue;
    }
    tl_strbuf_printf(b, "(%s%s %s", pa->is_mut ? "mut " : "", pa->name, pa->by_ref ? "&mut " : "");
    dump_type(b, pa->type);
    tl_strbuf_puts(b, ")");
  }
  tl_strbuf_puts(b, ") ");
  if (f->ret) tl_strbuf_puts(b, "-> "), dump_type(b, f->ret), tl_strbuf_puts(b, " ");
  dump_node(b, f->body);
  tl_strbuf_puts(b, ")");
}

char *tl_ast_dump(const tl_program *p) {
  tl_strbuf b = {0};
  tl_strbuf_puts(&b, ""); /* an empty program is "", not NULL */
  for (const tl_ast_item *it = p->items; it; it = it->next) {
    if (it->kind == TL_ITEM_FN) {
      dump_fn(&b, it->fn);
    } else if (it->kind == TL_ITEM_STRUCT) {
      tl_strbuf_printf(&b, "(struct %s", it->name);
      for (const tl_field *f = it->fields; f; f = f->next) {
        tl_strbuf_printf(&b, " (%s ", f->name);
        dump_type(&b, f->type);
        tl_strbuf_puts(&b, ")");
      }
      tl_strbuf_puts(&b, ")");
    } else if (it->kind == TL_ITEM_ENUM) {
      tl_strbuf_printf(&b, "(enum %s", it->name);
      for (const tl_variant *v = it->variants; v; v = v->next) {
        tl_strbuf_printf(&b, " (%s", v->name);
        for (const tl_field *f = v->fields; f; f = f->next) {
          tl_strbuf_puts(&b, " ");
          if (v->named) tl_strbuf_printf(&b, "%s: ", f->name);
          dump_type(&b, f->type);
        }
        tl_strbuf_puts(&b, ")");
      }
      tl_strbuf_puts(&b, ")");
    } else if (it->kind == TL_ITEM_CONST) {
      tl_strbuf_printf(&b, "(%s%s %s ", it->is_static ? "static" : "const", it->is_mut ? " mut" : "", it->name);
      dump_type(&b, it->type);
      tl_strbuf_puts(&b, " ");
      dump_node(&b, it->value);
      tl_strbuf_puts(&b, ")");
    } else if (it->kind != TL_ITEM_IMPL) {
      tl_logic_dump_item(&b, it);
    } else {
      tl_strbuf_printf(&b, "(impl %s", it->name);
      for (const tl_fn *f = it->methods; f; f = f->next) /* a method given up is not in the tree */
        if (!f->partial) tl_strbuf_puts(&b, " "), dump_fn(&b, f);
      tl_strbuf_puts(&b, ")");
    }
    tl_strbuf_puts(&b, "\n");
  }
  return tl_strbuf_take(&b);
}
