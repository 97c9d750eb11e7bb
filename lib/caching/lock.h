/* The allocator's one lock: a test-and-test-and-set spinlock that yields the CPU when
 * it spins long. An uncontended lock + unlock is one atomic exchange and one store
 * (a pthread mutex pair costs ~100 instructions, a third of a cache hit); the critical
 * sections are a few hundred instructions except on device calls, where a waiter
 * yields instead of burning its core. */
#ifndef VL_CACHING_LOCK_H
#define VL_CACHING_LOCK_H

#include <sched.h>
#include <stdatomic.h>

typedef struct vl_lock { atomic_int held; } vl_lock;

#define VL_LOCK_SPINS_BEFORE_YIELD 64

static inline void vl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline void vl_lock_init(vl_lock *l) { atomic_init(&l->held, 0); }

/* Out of line: the callers' uncontended path then calls nothing. */
static __attribute__((noinline, cold, unused)) void vl_lock_wait(vl_lock *l)
{
    do {
        int spins = 0;
        while (atomic_load_explicit(&l->held, memory_order_relaxed)) {
            if (++spins < VL_LOCK_SPINS_BEFORE_YIELD) vl_cpu_relax();
            else sched_yield(), spins = 0;
        }
    } while (atomic_exchange_explicit(&l->held, 1, memory_order_acquire));
}

static inline void vl_lock_acquire(vl_lock *l)
{
    if (atomic_exchange_explicit(&l->held, 1, memory_order_acquire)) vl_lock_wait(l);
}

static inline void vl_lock_release(vl_lock *l) { atomic_store_explicit(&l->held, 0, memory_order_release); }

#endif
