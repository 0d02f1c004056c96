/* own.h — the ownership pass: liveness, so values move at their last use (own.c). */
#ifndef TL_LANG_OWN_H
#define TL_LANG_OWN_H

#include "lang/check/sema.h"

/* sets node->last_use on every read of a variable in f; -1 when out of memory */
int tl_own_analyze(tl_fninfo *f);

#endif
