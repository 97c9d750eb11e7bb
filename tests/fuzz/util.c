/* Implementation of tests/fuzz/util.h. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *vl_fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

void vl_fuzz_check_error_line(const char *err, size_t errlen, const char *input)
{
    size_t n = strnlen(err, errlen);
    VL_FUZZ_ASSERT(n < errlen, "error message not NUL-terminated within %zu bytes for input '%s'", errlen,
                   input ? input : "(binary)");
    /* A message may echo the input; a line break in it is the input's, not the parser's. */
    if (!input || !strchr(input, '\n'))
        VL_FUZZ_ASSERT(memchr(err, '\n', n) == NULL, "error message has a newline: '%s' (input '%s')", err,
                       input ? input : "(binary)");
    if (errlen >= 16) VL_FUZZ_ASSERT(n > 0, "empty error message for input '%s'", input ? input : "(binary)");
}

void vl_fuzz_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: property violated: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
