/* Helpers shared by the libFuzzer targets in tests/fuzz/: turn fuzz bytes into C
 * strings and check the "one clear error line" contract of vramlab's parsers. A
 * broken property aborts, which libFuzzer records as a crash with its input. */
#ifndef VL_FUZZ_UTIL_H
#define VL_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A malloc'd, NUL-terminated copy of data (exact size, so ASan sees overreads). */
char *vl_fuzz_cstring(const uint8_t *data, size_t size);

/* err (errlen bytes) must hold a NUL-terminated line without '\n' (unless the input
 * text has one, which a message may quote); when errlen leaves room for a reason
 * (>= 16), the line must not be empty. input: the text parsed, or NULL for binary
 * input (then no '\n' at all is allowed). */
void vl_fuzz_check_error_line(const char *err, size_t errlen, const char *input);

void vl_fuzz_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

#define VL_FUZZ_ASSERT(cond, ...)                                  \
    do {                                                           \
        if (!(cond)) vl_fuzz_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#endif
