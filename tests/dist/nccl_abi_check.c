/* nccl_abi_check.c — src/dist/nccl_abi.h against the installed nccl.h, and the library
 * next to it: built by tests/dist/run.sh with the CUDA toolkit's include directory
 * (`nccl_abi_check LIB`). The constants TL copies must be nccl.h's; the types TL passes
 * must have the sizes of NCCL's; LIB must load, resolve every function TL calls, and
 * report nccl.h's version. */
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>

#include "dist/nccl_abi.h"

int main(int argc, char **argv) {
  int bad = 0;
  const struct {
    long tl, nccl;
    const char *name;
  } c[] = {
      {TL_NCCL_SUCCESS, ncclSuccess, "ncclSuccess"},         {TL_NCCL_ID_BYTES, NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES"},
      {TL_NCCL_UINT8, ncclUint8, "ncclUint8"},               {TL_NCCL_INT32, ncclInt32, "ncclInt32"},
      {TL_NCCL_INT64, ncclInt64, "ncclInt64"},               {TL_NCCL_FLOAT32, ncclFloat32, "ncclFloat32"},
      {TL_NCCL_FLOAT64, ncclFloat64, "ncclFloat64"},         {TL_NCCL_SUM, ncclSum, "ncclSum"},
      {TL_NCCL_MAX, ncclMax, "ncclMax"},
      {sizeof(tl_nccl_id), sizeof(ncclUniqueId), "sizeof(ncclUniqueId)"},
      {sizeof(int), sizeof(ncclResult_t), "sizeof(ncclResult_t)"},
      {sizeof(int), sizeof(ncclDataType_t), "sizeof(ncclDataType_t)"},
      {sizeof(int), sizeof(ncclRedOp_t), "sizeof(ncclRedOp_t)"},
      {sizeof(void *), sizeof(cudaStream_t), "sizeof(cudaStream_t)"},
      {sizeof(tl_nccl_comm_t), sizeof(ncclComm_t), "sizeof(ncclComm_t)"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    if (c[i].tl != c[i].nccl) printf("FAIL %s: TL has %ld, nccl.h %ld\n", c[i].name, c[i].tl, c[i].nccl), bad++;
  void *lib = dlopen(argc > 1 ? argv[1] : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("FAIL %s does not load: %s\n", argc > 1 ? argv[1] : "libnccl.so.2", dlerror());
    return 1;
  }
#define TL_NCCL_CHECK(ret, name, args) \
  if (!dlsym(lib, #name)) printf("FAIL " #name " is missing\n"), bad++;
  TL_NCCL_FUNCTIONS(TL_NCCL_CHECK)
  int v = 0;
  ncclResult_t (*version)(int *) = (ncclResult_t(*)(int *))dlsym(lib, "ncclGetVersion");
  if (!version || version(&v) != ncclSuccess || v != NCCL_VERSION_CODE)
    printf("FAIL the library's version %d is not nccl.h's %d\n", v, NCCL_VERSION_CODE), bad++;
  if (tl_nccl_major(v) != NCCL_MAJOR) printf("FAIL major version of %d: %d\n", v, tl_nccl_major(v)), bad++;
  if (!bad) puts("ok nccl_abi");
  return bad != 0;
}
