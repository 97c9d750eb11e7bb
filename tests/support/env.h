/* Test lengths and seeds from the environment (VL_PROPTEST_OPS=10000000 ...), so CI
 * runs short and `make proptest` runs long with the same binaries. */
#ifndef VL_TEST_ENV_H
#define VL_TEST_ENV_H

#include <stdint.h>

/* The variable as an unsigned integer, or fallback when it is unset or empty. */
uint64_t vl_test_env_u64(const char *name, uint64_t fallback);

#endif
