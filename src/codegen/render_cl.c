/* render_cl.c — OpenCL C text: for now the prelude (prelude_cl.h, then core/scalar.h),
 * so an OpenCL kernel computes every scalar as the C kernels and the interpreter do.
 * in: nothing; out: the prelude's text. */
#include "render_cl.h"

static const char prelude_cl_text[] =
#include "prelude_cl.inc"
    ;

const char *tl_render_cl_prelude(void) { return prelude_cl_text; }
