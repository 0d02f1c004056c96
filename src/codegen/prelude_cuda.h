/* prelude_cuda.h — the text in front of every CUDA C kernel (NVRTC compiles it as C++,
 * with -default-device: the prelude's functions run on the device), before
 * core/scalar.h (pasted after it: build/gen/prelude_cuda.inc): the words of
 * render_gpu.c's kernels in CUDA, so the same kernel text serves OpenCL and CUDA. Each
 * operation is rounded on its own (NVRTC is given --fmad=false), as on the host and in
 * OpenCL. Not compiled by the host compiler. */
#define TL_SCALAR_CUDA 1
#define TL_KERNEL extern "C" __global__
#define TL_GLOBAL
#define TL_SHARED __shared__
#define TL_BARRIER() __syncthreads()
#define TL_CU_AXIS(v, d) ((d) == 0 ? (v).x : (d) == 1 ? (v).y : (v).z)
#define TL_GID(d) ((long long)TL_CU_AXIS(blockIdx, d) * TL_CU_AXIS(blockDim, d) + TL_CU_AXIS(threadIdx, d))
#define TL_LID(d) ((int)TL_CU_AXIS(threadIdx, d))
#define TL_GRP(d) ((long long)TL_CU_AXIS(blockIdx, d))
#define TL_GROUP_SIZE(x, y) __launch_bounds__((x) * (y))
#define TL_NAN __int_as_float(0x7fc00000)
#define TL_INF __int_as_float(0x7f800000)
#define TL_SHFL_XOR(x, o) __shfl_xor_sync(0xffffffffu, (x), (o))
#define TL_ALIGN16 __align__(16)
#define TL_LOAD4(p) (*(const float4 *)(p))
#define TL_RESTRICT __restrict__
#define TL_UNROLL4 _Pragma("unroll 4")
