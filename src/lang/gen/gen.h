/* gen.h — the TL code generator: a checked program -> C source (LANGUAGE.md §4-7).
 * in: the checker's result (types, variables, calls resolved) after the ownership
 * pass; out: one self-contained C file (the run-time headers pasted in front) whose
 * `tl_program_main(tlrt *)` runs `main`. Statements carry #line directives that
 * name the .tl file, so a C diagnostic or a debugger points at the TL source. */
#ifndef TL_LANG_GEN_H
#define TL_LANG_GEN_H

#include <stdbool.h>

#include "core/strbuf.h"
#include "lang/check/types.h"

/* malloc'd source, or NULL with a message in err (size errlen) */
char *tl_gen_program(const tl_sema *S, tl_arena *arena, const char *file, bool line_directives, char *err,
                     size_t errlen);
/* appends s as a C string literal, quotes included, escaped so any bytes are safe */
void tl_gen_c_string(tl_strbuf *out, const char *s);

#endif
