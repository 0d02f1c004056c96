/* sema_suggest.c — the candidates of "did you mean `zeros`?" (diag.c's tl_suggest):
 * for a name the checker did not find, the names of that kind it could have been
 * (variables in scope, functions, a type's methods or fields, types, variants). The
 * call sites add their own builtin tables and write the hint. */
#include "lang/check/sema_generic.h"

#include <string.h>

void tl_sema_suggest_vars(sema *s, tl_suggest *g) {
  for (sym *e = s->syms; e; e = e->next) tl_suggest_add(g, e->name);
}

/* free functions: the program's (generic ones too) and the library's (assert...) */
void tl_sema_suggest_fns(sema *s, tl_suggest *g) {
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (!f->self_struct && !strstr(f->name, "::") && !strchr(f->name, '<')) tl_suggest_add(g, f->name);
  sema_gen *gen = tl_sema_gen_of(s);
  for (gen_tmpl *t = gen ? gen->tmpls : NULL; t; t = t->next)
    if (t->kind == 'f') tl_suggest_add(g, t->name);
  for (size_t i = 0; tl_sema_sys_row(i); i++)
    if (tl_sema_sys_row(i)->kind == 'f') tl_suggest_add(g, tl_sema_sys_row(i)->name);
}

/* what follows `owner::` of the functions named so: methods (those taking self) or
 * associated functions, and the library's paths (System::time...) */
void tl_sema_suggest_members(sema *s, tl_suggest *g, const char *owner, bool methods) {
  size_t n = strlen(owner);
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (!strncmp(f->name, owner, n) && !strncmp(f->name + n, "::", 2) && (f->self != NULL) == methods)
      tl_suggest_add(g, f->name + n + 2);
  for (size_t i = 0; !methods && tl_sema_sys_row(i); i++) {
    const char *name = tl_sema_sys_row(i)->name;
    if (tl_sema_sys_row(i)->kind != 'm' && !strncmp(name, owner, n) && !strncmp(name + n, "::", 2)) tl_suggest_add(g, name + n + 2);
  }
}

/* the program's struct and enum names (enums: false, only structs) */
void tl_sema_suggest_structs(sema *s, tl_suggest *g, bool enums) {
  for (tl_struct_info *st = s->out->structs; st; st = st->next)
    if (!st->is_tuple && !st->generic && !st->generic_of && (enums || !st->is_enum)) tl_suggest_add(g, st->name);
  sema_gen *gen = tl_sema_gen_of(s);
  for (gen_tmpl *t = gen ? gen->tmpls : NULL; t; t = t->next)
    if (t->kind == 's' || (enums && t->kind == 'e')) tl_suggest_add(g, t->name);
}

/* every type name: the builtin ones, the program's, the type parameters in scope */
void tl_sema_suggest_types(sema *s, tl_suggest *g) {
  static const char *const builtin[] = {"i64", "i32",    "f32",    "f64",    "bool", "char",    "String", "u8",
                                        "i8",  "i16",    "u16",    "u32",    "u64",  "f16",     "bf16",   "Tensor",
                                        "Option", "Result", "Vec", "HashMap", "Self"};
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) tl_suggest_add(g, builtin[i]);
  tl_sema_suggest_structs(s, g, true);
  for (int i = 0; s->env && i < s->env->n; i++) tl_suggest_add(g, s->env->names[i]);
}

void tl_sema_suggest_fields(const tl_struct_info *st, tl_suggest *g) {
  for (int i = 0; !st->is_enum && i < st->nfields; i++) tl_suggest_add(g, st->fields[i].name);
}

void tl_sema_suggest_variants(const tl_struct_info *en, tl_suggest *g) {
  for (int i = 0; i < en->nvariants; i++) tl_suggest_add(g, en->variants[i].name);
}
