/* render_c.h — the C renderer: a loop AST into the source of one kernel function
 * `void NAME(void *const *bufs, tl_i64 begin, tl_i64 end)`, whose parallel loop runs
 * [begin, end). The kernel prelude is pasted in front. */
#ifndef TL_CODEGEN_RENDER_C_H
#define TL_CODEGEN_RENDER_C_H

#include "codegen/lower.h"

char *tl_render_c(const tl_lowered *l, const char *fn_name);

#endif
