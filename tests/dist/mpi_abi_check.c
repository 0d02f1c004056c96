/* mpi_abi_check.c — src/dist/mpi_abi.h's OpenMPI column against the installed mpi.h:
 * built with mpicc by tests/dist/run.sh. Each predefined handle must be the address of
 * the symbol the table names, and the constants TL copies must be mpi.h's. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

#include "dist/mpi_abi.h"

int main(void) {
#ifndef OPEN_MPI
  puts("skip: not OpenMPI's mpi.h");
  return 0;
#else
  int bad = 0;
  const struct {
    int row;
    void *handle;
    const char *name;
  } h[] = {
      {TL_MPI_COMM_WORLD, (void *)MPI_COMM_WORLD, "MPI_COMM_WORLD"},
      {TL_MPI_UNSIGNED_CHAR, (void *)MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"},
      {TL_MPI_INT32, (void *)MPI_INT32_T, "MPI_INT32_T"},
      {TL_MPI_INT64, (void *)MPI_INT64_T, "MPI_INT64_T"},
      {TL_MPI_FLOAT, (void *)MPI_FLOAT, "MPI_FLOAT"},
      {TL_MPI_DOUBLE, (void *)MPI_DOUBLE, "MPI_DOUBLE"},
      {TL_MPI_OP_SUM, (void *)MPI_SUM, "MPI_SUM"},
      {TL_MPI_OP_MAX, (void *)MPI_MAX, "MPI_MAX"},
  };
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
    void *s = dlsym(RTLD_DEFAULT, tl_mpi_handle_rows[h[i].row].ompi_symbol);
    if (s != h[i].handle) {
      printf("FAIL %s is not &%s\n", h[i].name, tl_mpi_handle_rows[h[i].row].ompi_symbol);
      bad++;
    }
  }
  if (sizeof h / sizeof h[0] != TL_MPI_NHANDLES) bad++, puts("FAIL: a row of the table is not checked");
  if (MPI_SUCCESS != TL_MPI_SUCCESS || MPI_THREAD_FUNNELED != TL_MPI_THREAD_FUNNELED || MPI_THREAD_SERIALIZED != TL_MPI_THREAD_SERIALIZED)
    bad++, puts("FAIL: MPI_SUCCESS or the thread levels");
  if (MPI_IN_PLACE != TL_OMPI_IN_PLACE || (void *)MPI_STATUS_IGNORE != TL_OMPI_STATUS_IGNORE)
    bad++, puts("FAIL: MPI_IN_PLACE or MPI_STATUS_IGNORE");
  if (!bad) puts("ok mpi_abi");
  return bad != 0;
#endif
}
