/* fake_nccl.c — a stand-in for libnccl.so.2 with the functions TL calls, so that
 * tests/dist/run.sh can check the communicator's set-up (src/dist/nccl_load.c) where
 * there is no GPU: built as a shared library and named by TL_NCCL_LIB.
 * ncclGetUniqueId gives 128 bytes of 0x5a, and ncclCommInitRank checks that it got
 * them (the id went through MPI's broadcast, by value); it fails on the rank
 * FAKE_NCCL_FAIL_RANK names, and ncclGetUniqueId fails when FAKE_NCCL_FAIL_ID is set. Each ncclCommDestroy or ncclCommAbort appends a line
 * "destroy R" or "abort R" to the file FAKE_NCCL_LOG. The collectives are not faked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char internal[128];
} id_t128;

static int me = -1;

static void note(const char *what) {
  const char *log = getenv("FAKE_NCCL_LOG");
  FILE *f = log ? fopen(log, "a") : NULL;
  if (f) fprintf(f, "%s %d\n", what, me), fclose(f);
}

int ncclGetVersion(int *v) { return *v = 22809, 0; }
int ncclGetUniqueId(id_t128 *id) {
  if (getenv("FAKE_NCCL_FAIL_ID")) return 2;
  return memset(id->internal, 0x5a, sizeof id->internal), 0;
}
const char *ncclGetErrorString(int rc) { return rc == 2 ? "fake system error" : "fake invalid usage"; }

int ncclCommInitRank(void **comm, int n, id_t128 id, int rank) {
  me = rank;
  for (size_t i = 0; i < sizeof id.internal; i++)
    if (id.internal[i] != 0x5a || rank < 0 || rank >= n) return 5;
  const char *fail = getenv("FAKE_NCCL_FAIL_RANK");
  if (fail && atoi(fail) == rank) return 2;
  return (*comm = malloc(16)) ? 0 : 2;
}

int ncclCommDestroy(void *comm) { return note("destroy"), free(comm), 0; }
int ncclCommAbort(void *comm) { return note("abort"), free(comm), 0; }
int ncclAllReduce(const void *a, void *b, size_t n, int t, int op, void *comm, void *stream) {
  return (void)a, (void)b, (void)n, (void)t, (void)op, (void)comm, (void)stream, 5;
}
int ncclBroadcast(const void *a, void *b, size_t n, int t, int root, void *comm, void *stream) {
  return (void)a, (void)b, (void)n, (void)t, (void)root, (void)comm, (void)stream, 5;
}
