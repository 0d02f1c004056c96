/* nvrtc.c — NVRTC through dlopen: its entry points typed here, a program compiled to
 * PTX or to a cubin with the options every TL kernel takes.
 * in: CUDA C source, a compute capability; out: PTX or a cubin, or NVRTC's log. */
#include "runtime/nvrtc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
typedef struct nvrtc_opaque *nvrtcProgram;

#define TL_NVRTC_FUNCTIONS(X)                                                                       \
  X(nvrtcResult, nvrtcVersion, (int *, int *))                                                      \
  X(nvrtcResult, nvrtcCreateProgram,                                                                \
    (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *))    \
  X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram, int, const char *const *))                     \
  X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram, size_t *))                                  \
  X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram, char *))                                        \
  X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram, size_t *))                                         \
  X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram, char *))                                               \
  X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *))                                             \
  X(const char *, nvrtcGetErrorString, (nvrtcResult))

#define TL_NVRTC_FIELD(ret, name, args) ret(*name) args;
typedef struct {
  TL_NVRTC_FUNCTIONS(TL_NVRTC_FIELD)
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *); /* optional: NVRTC 11.1 */
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
} nvrtc_api;

struct tl_nvrtc {
  void *lib;
  nvrtc_api api;
  int major, minor;
};

static void *open_nvrtc_lib(void) {
  const char *own = getenv("TL_NVRTC");
  if (own && *own) return dlopen(own, RTLD_NOW | RTLD_LOCAL);
  static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

tl_status tl_nvrtc_open(tl_nvrtc **out, tl_error *err) {
  *out = NULL;
  tl_nvrtc *n = calloc(1, sizeof *n);
  if (!n) return tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  if (!(n->lib = open_nvrtc_lib())) {
    free(n);
    return tl_error_set(err, TL_ERR_BACKEND,
                        "cuda: not available (NVRTC not found: install the CUDA toolkit's libnvrtc, or set TL_NVRTC)");
  }
#define TL_NVRTC_LOAD(ret, name, args)                                                                  \
  if (!(*(void **)&n->api.name = dlsym(n->lib, #name))) {                                               \
    dlclose(n->lib);                                                                                    \
    free(n);                                                                                            \
    return tl_error_set(err, TL_ERR_BACKEND, "cuda: not available (NVRTC lacks %s: too old)", #name);   \
  }
  TL_NVRTC_FUNCTIONS(TL_NVRTC_LOAD)
#undef TL_NVRTC_LOAD
  *(void **)&n->api.nvrtcGetCUBINSize = dlsym(n->lib, "nvrtcGetCUBINSize");
  *(void **)&n->api.nvrtcGetCUBIN = dlsym(n->lib, "nvrtcGetCUBIN");
  n->api.nvrtcVersion(&n->major, &n->minor);
  *out = n;
  return TL_OK;
}

/* The library stays loaded (each open takes one more reference of the loader's): NVRTC
 * keeps C++ runtime state in its static data, which unloading would strand. */
void tl_nvrtc_close(tl_nvrtc *n) { free(n); }

void tl_nvrtc_version(const tl_nvrtc *n, int *major, int *minor) { *major = n->major, *minor = n->minor; }

bool tl_nvrtc_has_cubin(const tl_nvrtc *n) { return n->api.nvrtcGetCUBINSize && n->api.nvrtcGetCUBIN; }

/* the compiler's log, its first lines, into the error (a kernel's source is long) */
static tl_status compile_failed(tl_nvrtc *n, nvrtcProgram p, nvrtcResult rc, tl_error *err) {
  size_t len = 0;
  char *log = NULL;
  if (n->api.nvrtcGetProgramLogSize(p, &len) == 0 && len > 1 && (log = malloc(len)) &&
      n->api.nvrtcGetProgramLog(p, log) == 0)
    log[len - 1] = 0;
  tl_status st = tl_error_set(err, TL_ERR_COMPILER, "cuda: the kernel did not compile (%s):\n%.1500s",
                              n->api.nvrtcGetErrorString(rc), log ? log : "(no log)");
  free(log);
  return st;
}

tl_status tl_nvrtc_compile(tl_nvrtc *n, const char *src, int cc_major, int cc_minor, bool cubin, char **out,
                           size_t *len, tl_error *err) {
  *out = NULL, *len = 0;
  cubin = cubin && tl_nvrtc_has_cubin(n);
  char arch[48];
  snprintf(arch, sizeof arch, "--gpu-architecture=%s_%d%d", cubin ? "sm" : "compute", cc_major, cc_minor);
  /* -default-device: the prelude's functions are the device's; --fmad=false: each
   * operation rounded on its own, as on the host */
  const char *opts[] = {arch, "-default-device", "--fmad=false", "-w"};
  nvrtcProgram p = NULL;
  nvrtcResult rc = n->api.nvrtcCreateProgram(&p, src, "tl_kernel.cu", 0, NULL, NULL);
  if (rc) return tl_error_set(err, TL_ERR_COMPILER, "cuda: NVRTC: %s", n->api.nvrtcGetErrorString(rc));
  rc = n->api.nvrtcCompileProgram(p, (int)(sizeof opts / sizeof opts[0]), opts);
  tl_status st = rc ? compile_failed(n, p, rc, err) : TL_OK;
  if (!st) rc = cubin ? n->api.nvrtcGetCUBINSize(p, len) : n->api.nvrtcGetPTXSize(p, len);
  if (!st && !rc && !(*out = malloc(*len + 1))) st = tl_error_set(err, TL_ERR_NOMEM, "cuda: out of memory");
  if (!st && !rc) rc = cubin ? n->api.nvrtcGetCUBIN(p, *out) : n->api.nvrtcGetPTX(p, *out);
  if (!st && rc) st = tl_error_set(err, TL_ERR_COMPILER, "cuda: NVRTC: %s", n->api.nvrtcGetErrorString(rc));
  if (st) {
    free(*out);
    *out = NULL, *len = 0;
  } else {
    (*out)[*len] = 0;
  }
  n->api.nvrtcDestroyProgram(&p);
  return st;
}

tl_status tl_nvrtc_ptx(tl_nvrtc *n, const char *src, int cc_major, int cc_minor, char **ptx, tl_error *err) {
  size_t len;
  return tl_nvrtc_compile(n, src, cc_major, cc_minor, false, ptx, &len, err);
}
