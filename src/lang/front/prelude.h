/* prelude.h — library types written in TL (prelude.c): joined to the program when it
 * names one. */
#ifndef TL_LANG_PRELUDE_H
#define TL_LANG_PRELUDE_H

#include "lang/front/ast.h"

/* after tl_modules_load: src is the program's text; returns the number of failures */
int tl_prelude_load(tl_program *prog, const char *src, tl_arena *arena);

#endif
