/* sema_sys.c — the checker's system calls (LANGUAGE.md §10): assert, args_count,
 * args_get, System::, Env::, File::, Logic::, String::from_int and the String methods. One
 * table says each one's name, arguments, result and run-time function (rt_sys.h);
 * the code generator (gen_sys.c) reads the same row, found in node->len. */
#include <string.h>

#include "lang/check/sema_impl.h"

/* kind: 'f' a free function, 'p' a path call, 'm' a String method (the receiver goes
 * first), 'v' a path that is a value (cfn: a C string literal, the String it is). args and ret: b bool, i i64, s String, u unit (ret), f f32, d f64, c char,
 * B Vec<u8>, I Vec<i64>, S Vec<String>, R (ret) Result<Vec<u8>, String>, T (ret) Result<String, String> (for R and T
 * cfn takes a String ** before the place).
 * loc: the run-time function takes the call's line and column (it can fail). */
static const tl_sys_entry rows[] = {
    {"assert", 'f', "tlrt_assert", "bs", 'u', true},
    {"args_count", 'f', "tlrt_args_count", "", 'i', false},
    {"args_get", 'f', "tlrt_args_get", "i", 's', true},
    {"System::time", 'p', "tlrt_sys_time", "", 'd', false},
    {"System::sleep", 'p', "tlrt_sys_sleep", "i", 'u', true},
    {"System::exit", 'p', "tlrt_sys_exit", "i", 'u', true},
    {"System::memory_mb", 'p', "tlrt_sys_memory_mb", "", 'i', false},
    {"System::memory_bytes", 'p', "tlrt_sys_memory_bytes", "", 'i', false},
    {"tl_get_memory_mb", 'f', "tlrt_sys_memory_mb", "", 'i', false}, /* the seed's spelling of System::memory_mb */
    {"Env::get", 'p', "tlrt_env_get", "s", 's', false},
    {"Env::set", 'p', "tlrt_env_set", "ss", 'u', true},
    {"Path::exists", 'p', "tlrt_file_exists", "s", 'b', false},
    {"char_at", 'f', "tlrt_str_char_at", "si", 'c', true}, /* the seed's free function: s.char_at(i) */
    {"File::read_string", 'p', "tlrt_file_read", "s", 's', true},
    {"File::read", 'p', "tlrt_file_read", "s", 's', true},
    {"File::write_string", 'p', "tlrt_file_write", "ss", 'u', true},
    {"File::write", 'p', "tlrt_file_write_ok", "ss", 'b', true},
    {"File::exists", 'p', "tlrt_file_exists", "s", 'b', false},
    {"String::from_int", 'p', "tlrt_str_from_int", "i", 's', false},
    {"String::from_chars", 'p', "tlrt_str_from_codes", "I", 's', true},
    {"String::from_utf8", 'p', "tlrt_str_from_utf8_or", "B", 'T', true},
    {"String::from_utf8_lossy", 'p', "tlrt_str_from_utf8_lossy", "B", 's', true},
    {"File::read_bytes", 'p', "tlrt_file_read_bytes", "s", 'B', true},
    {"File::read_binary", 'p', "tlrt_file_read_bytes_or", "s", 'R', true},
    {"File::write_bytes", 'p', "tlrt_file_write_bytes", "sB", 'u', true},
    {"File::write_binary", 'p', "tlrt_file_write_bytes_ok", "sB", 'b', true},
    {"to_bytes", 'm', "tlrt_str_to_bytes", "", 'B', true},
    {"into_bytes", 'm', "tlrt_str_to_bytes", "", 'B', true},
    {"index_of", 'm', "tlrt_str_index_of", "s", 'i', false},
    {"split", 'm', "tlrt_str_split", "s", 'S', true},
    {"lines", 'm', "tlrt_str_lines", "", 'S', true},
    {"char_at", 'm', "tlrt_str_char_at", "i", 'c', true},
    {"contains", 'm', "tlrt_str_contains", "s", 'b', false},
    {"substring", 'm', "tlrt_str_substring", "ii", 's', true},
    {"concat", 'm', "tlrt_str_concat", "s", 's', true},
    {"to_i64", 'm', "tlrt_str_to_i64", "", 'i', true},
    {"to_f32", 'm', "tlrt_str_to_f32", "", 'f', true},
    {"is_empty", 'm', "tlrt_str_is_empty", "", 'b', false},
    {"trim", 'm', "tlrt_str_trim", "", 's', false},
    {"to_uppercase", 'm', "tlrt_str_to_upper", "", 's', false},
    {"to_lowercase", 'm', "tlrt_str_to_lower", "", 's', false},
    {"starts_with", 'm', "tlrt_str_starts_with", "s", 'b', false},
    {"ends_with", 'm', "tlrt_str_ends_with", "s", 'b', false},
    {"replace", 'm', "tlrt_str_replace", "ss", 's', true},
    /* devices: the CPU is the only one for now; a device is its name as a String */
    {"Param::set_device", 'p', "tlrt_set_device", "s", 'u', true},
    /* the limit of tuples in one relation (LANGUAGE.md §8) */
    {"Logic::set_max_tuples", 'p', "tlrt_logic_set_max_tuples", "i", 'u', true},
    {"Logic::max_tuples", 'p', "tlrt_logic_max_tuples", "", 'i', false},
    {"Device::Auto", 'v', "\"auto\"", "", 's', false},
    {"Device::Cpu", 'v', "\"cpu\"", "", 's', false},
    {"Device::Cuda", 'v', "\"cuda\"", "", 's', false},
    {"Device::Metal", 'v', "\"metal\"", "", 's', false},
    /* what the library's File handle and Path (front/stdlib.c) are made of */
    {"File::append", 'p', "tlrt_file_append", "ss", 'u', true},
    {"File::check_handle", 'p', "tlrt_file_check_handle", "sss", 'u', true},
    {"Path::is_dir", 'p', "tlrt_path_is_dir", "s", 'b', false},
    {"Path::is_file", 'p', "tlrt_path_is_file", "s", 'b', false},
    {"Regex::check", 'p', "tlrt_regex_check", "s", 'b', false},
    {"Regex::matches", 'p', "tlrt_regex_matches", "ss", 'b', true},
    {"Regex::replace_all", 'p', "tlrt_regex_replace_all", "sss", 's', true},
};

const tl_sys_entry *tl_sema_sys_row(size_t i) { return i < sizeof rows / sizeof rows[0] ? &rows[i] : NULL; }

static tl_ty *sema_sys_type(sema *s, char c) {
  switch (c) {
  case 'B': return tl_sema_vec_type(s, TY_U8_T);
  case 'I': return tl_sema_vec_type(s, TY_I64_T);
  case 'S': return tl_sema_vec_type(s, TY_STR_T);
  case 'R': return tl_sema_option_result_type(s, tl_sema_vec_type(s, TY_U8_T), TY_STR_T);
  case 'T': return tl_sema_option_result_type(s, TY_STR_T, TY_STR_T);
  case 'b': return TY_BOOL_T;
  case 'i': return TY_I64_T;
  case 's': return TY_STR_T;
  case 'f': return TY_F32_T;
  case 'd': return TY_F64_T;
  case 'c': return TY_CHAR_T;
  default: return TY_UNIT_T;
  }
}

static tl_ty *check(sema *s, tl_node *n, size_t row) {
  const tl_sys_entry *e = &rows[row];
  n->ival = B_SYS;
  n->len = row;
  n->sys = e;
  const char *shown = e->kind == 'm' ? n->name : e->name;
  int want = (int)strlen(e->args), got = 0;
  for (tl_node *a = n->args; a; a = a->next) got++;
  if (got != want) {
    tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", shown, want, want == 1 ? "" : "s", got);
    for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", shown);
    return TY_ERR;
  }
  int k = 0;
  for (tl_node *a = n->args; a; a = a->next, k++) {
    tl_ty *want_ty = sema_sys_type(s, e->args[k]);
    if (a->kind == TL_N_FIELD_INIT) {
      tl_sema_error(s, a, "`%s` has no argument named `%s`", shown, a->name);
      continue;
    }
    tl_ty *t = tl_sema_expr(s, a, want_ty);
    if (!tl_sema_ty_fits(want_ty, t)) tl_sema_mismatch(s, a, "argument", want_ty, t);
  }
  return sema_sys_type(s, e->ret);
}

bool tl_sema_sys_call_named(const char *path) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == 'p' && !strcmp(rows[i].name, path)) return true;
  return false;
}

tl_ty *tl_sema_sys_call(sema *s, tl_node *n, const char *name) {
  char kind = n->lhs->kind == TL_N_PATH ? 'p' : 'f';
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == kind && !strcmp(rows[i].name, name)) return check(s, n, i);
  return NULL;
}

/* `s.parse::<T>()`: Rust's, a Result<T, String> for T a number or bool (the error says
 * why the text is not one) */
static tl_ty *check_parse(sema *s, tl_node *n) {
  n->ival = B_STR_PARSE;
  if (!tl_sema_arity(s, n, "parse", 0)) return TY_ERR;
  if (!n->type || n->type->next) {
    tl_sema_error(s, n, "`parse` needs its type written: `s.parse::<i64>()`");
    return TY_ERR;
  }
  tl_ty *to = tl_sema_resolve_type(s, n->type);
  if (to->kind == TY_ERROR) return TY_ERR;
  if (!tl_ty_is_numeric(to) && to->kind != TY_BOOL) {
    char b[64];
    tl_sema_error(s, n, "`parse` reads numbers and bools, not %s", tl_ty_name(to, b, sizeof b));
    return TY_ERR;
  }
  return tl_sema_option_result_type(s, to, TY_STR_T);
}

tl_ty *tl_sema_sys_method(sema *s, tl_node *n, tl_ty *t) {
  if (t->kind != TY_STR) return NULL;
  if (!strcmp(n->name, "parse")) return check_parse(s, n);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == 'm' && !strcmp(rows[i].name, n->name)) return check(s, n, i);
  return NULL;
}

/* ---- positional construction: `Linear(w, b)` is `Linear { w: w, b: b }` ---- */

tl_ty *tl_sema_positional_struct(sema *s, tl_node *n, const char *name, tl_ty *expect) {
  tl_struct_info *st = s->out->structs;
  while (st && strcmp(st->name, name)) st = st->next;
  if (!st) return NULL;
  int got = 0;
  for (tl_node *a = n->args; a; a = a->next) {
    got++;
    if (a->kind == TL_N_FIELD_INIT) {
      tl_sema_error(s, a, "`%s(..)` takes the fields in order, without names", name);
      tl_diag_hint(s->diag, "name them in a literal: `%s { %s: .. }`", name, a->name);
      for (tl_node *b = n->args; b; b = b->next) tl_sema_expr(s, b->kind == TL_N_FIELD_INIT ? b->lhs : b, NULL);
      return TY_ERR;
    }
  }
  if (got != st->nfields && !st->partial) {
    tl_sema_error(s, n, "`%s` has %d field%s, so `%s(..)` takes %d argument%s, not %d", name, st->nfields,
               st->nfields == 1 ? "" : "s", name, st->nfields, st->nfields == 1 ? "" : "s", got);
    for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  tl_node head = {0}, *cur = &head;
  int i = 0;
  for (tl_node *a = n->args; a && i < st->nfields; i++) {
    tl_node *next = a->next;
    tl_node *f = tl_arena_alloc(s->arena, sizeof *f);
    if (!f) return TY_ERR;
    f->kind = TL_N_FIELD_INIT;
    f->line = a->line;
    f->col = a->col;
    f->name = st->fields[i].name;
    f->lhs = a;
    a->next = NULL;
    cur = cur->next = f;
    a = next;
  }
  n->kind = TL_N_STRUCT_LIT;
  n->name = st->name;
  n->args = head.next;
  n->lhs = NULL;
  n->ival = 0;
  return tl_sema_expr(s, n, expect);
}

tl_ty *tl_sema_sys_path_value(sema *s, tl_node *n) {
  (void)s;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == 'v' && !strcmp(rows[i].name, n->name)) {
      n->ival = B_SYS;
      n->len = i;
      n->sys = &rows[i];
      return sema_sys_type(s, rows[i].ret);
    }
  return NULL;
}
