/* gemm_host.h — the GEMM routine that tier-1 (libtcc) kernels call (gemm_host.c);
 * given to each libtcc state by name, with the void pointers it is declared with
 * in the kernel prelude (TL_GEMM_HOST). */
#ifndef TL_RUNTIME_GEMM_HOST_H
#define TL_RUNTIME_GEMM_HOST_H

extern const void *const tl_gemm_host_symbols[2]; /* tl_gemm_host_f32, tl_gemm_host_f64 */

#endif
