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
/* the words of render_gpu.c's kernels, in OpenCL C */
#define TL_KERNEL __kernel
#define TL_GLOBAL __global
#define TL_SHARED __local
#define TL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define TL_GID(d) ((long)get_global_id(d))
#define TL_LID(d) ((int)get_local_id(d))
#define TL_GRP(d) ((long)get_group_id(d))
#define TL_GROUP_SIZE(x, y) __attribute__((reqd_work_group_size(x, y, 1)))
#define TL_NAN NAN
#define TL_INF INFINITY
#define TL_ALIGN16
#define TL_LOAD4(p) vload4(0, (p))
#define TL_RESTRICT restrict
#define TL_UNROLL4
/* tanh is +-1 in f32 past |x| = 13 ln 2, where the exact value is within half an ulp
 * of 1, and the host's libm says so; an OpenCL tanh may be an ulp short there (PoCL's
 * gives 0.99999994 at 100, and mish(100) would print 99.99999). scalar.h names it for
 * tanhf. */
static inline float tl_cl_tanhf(float x) { return fabs(x) >= 9.0110f ? copysign(1.0f, x) : tanh(x); }
