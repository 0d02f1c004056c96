/* schedule.h — cuts a (rewritten) tensor graph into kernels.
 * in: the root node to realize; out: the nodes that get their own buffer, in an
 * order where every kernel runs after the kernels it reads.
 *
 * Rules: realized BUFFERs are leaves; elementwise chains fuse into their consumer;
 * a reduce fuses with the elementwise work before and after it, and also into a
 * consumer that reads it broadcast back along the reduced axes when those axes are
 * the innermost loops there (a row softmax is one kernel: the row's max and sum are
 * computed once per row, before the loop that writes the row). Any other reduce
 * read through a view is realized. A computed node shared by several consumers, one
 * of them through a view, is realized so that no work is repeated per element.
 * A GATHER fuses like an elementwise op, its sources read as through a view; a
 * SCATTER_ADD and CONV2D are kernels of their own whose sources are computed first. */
#ifndef TL_SCHED_SCHEDULE_H
#define TL_SCHED_SCHEDULE_H

#include "core/hash.h"
#include "graph/rewrite.h"
#include "sched/form.h"

typedef struct tl_schedule {
  int nkernels;
  tl_uop **roots;     /* kernel i computes roots[i]; the last one is the graph's root */
  tl_ptrmap realized; /* node -> (void*)(kernel index + 1) */
  tl_kernel_form *forms; /* kernel i's loop form, which the lowering follows */
} tl_schedule;

/* host: the kernels run on host threads, each a chunk of the parallel loop (the cpu
 * backend), not on a device's grid of work-items */
bool tl_schedule_build(tl_uop *root, bool host, tl_schedule *out);
void tl_schedule_free(tl_schedule *s);
/* kernel index + 1 if u is computed by a kernel of this schedule, else 0 */
int tl_schedule_kernel_of(const tl_schedule *s, const tl_uop *u);
/* the loop form of the kernel whose root is root; NULL if root is no kernel's */
const tl_kernel_form *tl_schedule_form(const tl_schedule *s, const tl_uop *root);

#endif
