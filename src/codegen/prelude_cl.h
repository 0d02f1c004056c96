/* prelude_cl.h — the text in front of every OpenCL C kernel, before core/scalar.h
 * (pasted after it: build/gen/prelude_cl.inc), so the OpenCL kernels compute with the
 * same scalar semantics as the C ones: saturating casts, NaN-aware max, the exp and erf
 * approximations, integer division by zero, the Philox stream. Not compiled by the
 * host compiler. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* each operation rounded on its own, as the host's C11 build does: a contraction into
 * an FMA would change the last bits of exp, erf and the polynomials */
#pragma OPENCL FP_CONTRACT OFF
#define TL_SCALAR_OPENCL 1
