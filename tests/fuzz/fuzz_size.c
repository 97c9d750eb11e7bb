/* libFuzzer target for the size parser (lib/size.h): every --size style option and
 * every SIZE option of a SPEC goes through vl_parse_size, so it must never read or
 * write out of bounds, whatever the text and however small the error buffer.
 *
 * Beyond "no crash" it checks the documented contract:
 *   - a success never exceeds 2^62 and leaves err alone;
 *   - a failure writes a NUL-terminated, one-line reason that fits errlen;
 *   - a parsed value printed in plain bytes parses back to itself;
 *   - vl_format_size never overflows its buffer. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks the error buffer's size (1..64), so short buffers get
     * exercised too; ASan sees an overflow of the exact-sized heap block. */
    size_t errlen = size ? (size_t)(data[0] % 64) + 1 : 16;
    char *text = vl_fuzz_cstring(size ? data + 1 : data, size ? size - 1 : 0);
    char *err = malloc(errlen);
    memset(err, 'X', errlen);

    uint64_t value = 0;
    if (vl_parse_size(text, &value, err, errlen) == 0) {
        VL_FUZZ_ASSERT(value <= (UINT64_C(1) << 62), "accepted %llu > 2^62 from '%s'",
                       (unsigned long long)value, text);
        char plain[32], err2[128];
        snprintf(plain, sizeof plain, "%llu", (unsigned long long)value);
        uint64_t again = 0;
        VL_FUZZ_ASSERT(vl_parse_size(plain, &again, err2, sizeof err2) == 0 && again == value,
                       "'%s' parsed to %llu but its plain form did not parse back", text,
                       (unsigned long long)value);
    } else {
        vl_fuzz_check_error_line(err, errlen, text);
    }

    /* Formatting: into a buffer of every small size, exact-sized on the heap. */
    for (size_t buflen = 1; buflen <= 24; buflen += 7) {
        char *buf = malloc(buflen);
        const char *s = vl_format_size(value, buf, buflen);
        VL_FUZZ_ASSERT(s != NULL && strnlen(s, buflen) < buflen, "vl_format_size(%llu) into %zu bytes",
                       (unsigned long long)value, buflen);
        free(buf);
    }

    free(err);
    free(text);
    return 0;
}
