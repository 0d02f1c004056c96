/* nvrtc.h — NVRTC, CUDA's run-time compiler, loaded with dlopen (no build-time
 * dependency): CUDA C in, PTX or a cubin (machine code for one GPU) out, or the
 * compiler's log as the error. It needs no GPU: the tests compile every kind of kernel
 * for sm_90 on machines that have only the CUDA toolkit. */
#ifndef TL_RUNTIME_NVRTC_H
#define TL_RUNTIME_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct tl_nvrtc tl_nvrtc;

/* TL_NVRTC names the library; else the loader's path, then /usr/local/cuda */
tl_status tl_nvrtc_open(tl_nvrtc **out, tl_error *err);
void tl_nvrtc_close(tl_nvrtc *n);
void tl_nvrtc_version(const tl_nvrtc *n, int *major, int *minor);
bool tl_nvrtc_has_cubin(const tl_nvrtc *n); /* NVRTC 11.1 and later */
/* src compiled for compute capability major.minor: a cubin (cubin true) or PTX
 * (NUL-terminated); *out malloc'd, *len its bytes. A failure is TL_ERR_COMPILER with
 * NVRTC's log */
tl_status tl_nvrtc_compile(tl_nvrtc *n, const char *src, int cc_major, int cc_minor, bool cubin, char **out,
                           size_t *len, tl_error *err);
/* PTX, for the tests */
tl_status tl_nvrtc_ptx(tl_nvrtc *n, const char *src, int cc_major, int cc_minor, char **ptx, tl_error *err);

#endif
