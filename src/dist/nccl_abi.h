/* nccl_abi.h — what TL needs of NCCL's binary interface (nccl_load.c loads it at run
 * time; nccl.h is not included: TL builds without CUDA). Copied from nccl.h (2.28;
 * unchanged since 2.x); tests/dist/nccl_abi_check.c compares them with the installed
 * nccl.h where there is one. */
#ifndef TL_DIST_NCCL_ABI_H
#define TL_DIST_NCCL_ABI_H

#include <stddef.h>

enum { TL_NCCL_SUCCESS = 0, TL_NCCL_ID_BYTES = 128 };
/* ncclDataType_t and ncclRedOp_t: every TL dtype has its type (bool is uint8) */
enum { TL_NCCL_UINT8 = 1, TL_NCCL_INT32 = 2, TL_NCCL_INT64 = 4, TL_NCCL_FLOAT32 = 7, TL_NCCL_FLOAT64 = 8 };
enum { TL_NCCL_SUM = 0, TL_NCCL_MAX = 2 };

typedef struct {
  char internal[TL_NCCL_ID_BYTES];
} tl_nccl_id;                                  /* ncclUniqueId, passed by value */
typedef struct tl_nccl_opaque *tl_nccl_comm_t; /* ncclComm_t */

/* the functions TL calls, with their C types (enums as int, cudaStream_t as void *) */
#define TL_NCCL_FUNCTIONS(X)                                                                           \
  X(int, ncclGetVersion, (int *))                                                                      \
  X(int, ncclGetUniqueId, (tl_nccl_id *))                                                              \
  X(int, ncclCommInitRank, (tl_nccl_comm_t *, int, tl_nccl_id, int))                                   \
  X(int, ncclCommDestroy, (tl_nccl_comm_t))                                                            \
  X(int, ncclCommAbort, (tl_nccl_comm_t))                                                              \
  X(const char *, ncclGetErrorString, (int))                                                           \
  X(int, ncclAllReduce, (const void *, void *, size_t, int, int, tl_nccl_comm_t, void *))              \
  X(int, ncclBroadcast, (const void *, void *, size_t, int, int, tl_nccl_comm_t, void *))

/* NCCL_VERSION_CODE's major version: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z since 2.9 */
static inline int tl_nccl_major(int code) { return code >= 10000 ? code / 10000 : code / 1000; }

#endif
