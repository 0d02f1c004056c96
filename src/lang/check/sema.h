/* sema.h — the TL checker (LANGUAGE.md §3-4): names, types, local inference.
 * in: a parsed program, its diagnostics, the arena; out: the checked tree (types.h):
 * every expression node gets its type, every name its variable, every call its
 * target, or a diagnostic per error. */
#ifndef TL_LANG_SEMA_H
#define TL_LANG_SEMA_H

#include "lang/check/types.h"

/* returns the number of errors */
int tl_sema_check(tl_program *prog, tl_diag *diag, tl_arena *arena, tl_sema *out);

#endif
