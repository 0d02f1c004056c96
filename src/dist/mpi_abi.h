/* mpi_abi.h — what TL needs of MPI's binary interface, for the two families it loads
 * at run time (src/dist/mpi_load.c). mpi.h is not included: TL builds without MPI.
 *
 * OpenMPI (libmpi.so.40): a handle (communicator, datatype, op, request) is a pointer;
 * the predefined ones are the addresses of exported objects (MPI_COMM_WORLD is
 * &ompi_mpi_comm_world), found with dlsym. MPICH and its ABI (libmpi.so.12: MPICH,
 * Intel MPI, MVAPICH): handles are ints with fixed values. Both values below are
 * copied from each family's mpi.h; tests/dist/mpi_abi_check.c compares the OpenMPI
 * column with the installed mpi.h. */
#ifndef TL_DIST_MPI_ABI_H
#define TL_DIST_MPI_ABI_H

#include <stdint.h>

enum { TL_MPI_COMM_WORLD, TL_MPI_UNSIGNED_CHAR, TL_MPI_INT32, TL_MPI_INT64, TL_MPI_FLOAT, TL_MPI_DOUBLE,
       TL_MPI_OP_SUM, TL_MPI_OP_MAX, TL_MPI_NHANDLES };

typedef struct {
  const char *ompi_symbol; /* OpenMPI: the object whose address is the handle */
  uint32_t mpich_value;    /* MPICH: the handle */
} tl_mpi_handle_row;

static const tl_mpi_handle_row tl_mpi_handle_rows[TL_MPI_NHANDLES] = {
    [TL_MPI_COMM_WORLD] = {"ompi_mpi_comm_world", 0x44000000u},
    [TL_MPI_UNSIGNED_CHAR] = {"ompi_mpi_unsigned_char", 0x4c000102u},
    [TL_MPI_INT32] = {"ompi_mpi_int32_t", 0x4c000439u},
    [TL_MPI_INT64] = {"ompi_mpi_int64_t", 0x4c00083au},
    [TL_MPI_FLOAT] = {"ompi_mpi_float", 0x4c00040au},
    [TL_MPI_DOUBLE] = {"ompi_mpi_double", 0x4c00080bu},
    [TL_MPI_OP_SUM] = {"ompi_mpi_op_sum", 0x58000003u},
    [TL_MPI_OP_MAX] = {"ompi_mpi_op_max", 0x58000001u},
};

/* the same in both families */
#define TL_MPI_SUCCESS 0
#define TL_MPI_THREAD_FUNNELED 1
#define TL_MPI_THREAD_SERIALIZED 2
/* MPI_IN_PLACE and MPI_STATUS_IGNORE differ */
#define TL_OMPI_IN_PLACE ((void *)1)
#define TL_OMPI_STATUS_IGNORE ((void *)0)
#define TL_MPICH_IN_PLACE ((void *)-1)
#define TL_MPICH_STATUS_IGNORE ((void *)1)

#endif
