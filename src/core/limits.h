/* limits.h — the engine's fixed limits, in one place every stage may include.
 * in: nothing; out: constants (core is the lowest folder: sched, codegen and runtime
 * read these instead of reaching into each other). */
#ifndef TL_CORE_LIMITS_H
#define TL_CORE_LIMITS_H

/* buffers a kernel takes, its output included: the scheduler computes parts of a
 * kernel that would read more first, the lowering fills the slots, the runtime checks */
#define TL_KERNEL_MAX_ARGS 64

#endif
