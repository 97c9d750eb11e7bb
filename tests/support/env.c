/* See env.h. */
#include "env.h"

#include <stdlib.h>

uint64_t vl_test_env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : fallback;
}
