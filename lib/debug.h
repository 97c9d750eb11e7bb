/* Internal invariants asserted where they could break (mimalloc's mi_assert_internal):
 * vl_assert_internal(cond) aborts with the file, line and condition where VL_DEBUG is
 * defined (the caching tests' objects, mk/caching.mk; or CPPFLAGS=-DVL_DEBUG), and is
 * compiled out everywhere else: a release neither pays for the checks nor ends its
 * host process (the library only reports errors). The condition is not evaluated then,
 * so it must have no side effects; it is still compiled, so it cannot rot. */
#ifndef VL_DEBUG_H
#define VL_DEBUG_H

#ifdef VL_DEBUG
#include <stdio.h>
#include <stdlib.h>

static inline void vl_assert_fail(const char *cond, const char *file, int line, const char *func)
{
    fprintf(stderr, "%s:%d: %s: internal invariant broken: %s\n", file, line, func, cond);
    abort();
}
#define vl_assert_internal(cond) ((cond) ? (void)0 : vl_assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
#define vl_assert_internal(cond) ((void)sizeof((cond) ? 1 : 0))
#endif

#endif
