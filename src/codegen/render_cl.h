/* render_cl.h — OpenCL C for the opencl backend.
 * in: nothing yet; out: the prelude every OpenCL kernel starts with (the scalar
 * semantics of core/scalar.h under OpenCL's names). The kernels' own text, from the
 * same loop AST as render_c.c's, comes with the opencl backend (issue 25). */
#ifndef TL_CODEGEN_RENDER_CL_H
#define TL_CODEGEN_RENDER_CL_H

const char *tl_render_cl_prelude(void);

#endif
