/* Parsing and formatting byte sizes (see size.h). */
#include "size.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define VL_SIZE_MAX (UINT64_C(1) << 62)

static int unit_shift(const char *unit, int *shift)
{
    static const struct { const char *name; int shift; } units[] = {
        {"", 0},    {"b", 0},    {"k", 10},   {"kb", 10}, {"kib", 10}, {"m", 20}, {"mb", 20},
        {"mib", 20}, {"g", 30},  {"gb", 30},  {"gib", 30}, {"t", 40},  {"tb", 40}, {"tib", 40},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(unit, units[i].name) == 0) {
            *shift = units[i].shift;
            return 0;
        }
    }
    return -1;
}

int vl_parse_size(const char *text, uint64_t *out, char *err, size_t errlen)
{
    if (!text || !*text) {
        snprintf(err, errlen, "empty size");
        return -1;
    }
    const char *p = text;
    uint64_t whole = 0;
    int digits = 0;
    while (isdigit((unsigned char)*p)) {
        if (whole > VL_SIZE_MAX / 10) {
            snprintf(err, errlen, "size '%s' is too large", text);
            return -1;
        }
        whole = whole * 10 + (uint64_t)(*p++ - '0');
        digits++;
    }
    double frac = 0, scale = 0.1;
    int frac_digits = 0;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            if (frac_digits < 15) frac += scale * (*p - '0');
            scale /= 10;
            frac_digits++;
            p++;
        }
    }
    if (digits == 0 && frac_digits == 0) {
        snprintf(err, errlen, "size '%s' is not a number (examples: 512, 4KiB, 2MiB, 1.5GiB)", text);
        return -1;
    }
    int shift;
    if (unit_shift(p, &shift) != 0) {
        snprintf(err, errlen, "size '%s' has an unknown unit '%s' (use B, KiB, MiB, GiB, TiB)", text, p);
        return -1;
    }
    if (shift > 0 && whole > (VL_SIZE_MAX >> shift)) {
        snprintf(err, errlen, "size '%s' is too large", text);
        return -1;
    }
    uint64_t bytes = whole << shift;
    double frac_bytes = frac * (double)(UINT64_C(1) << shift);
    if (frac_bytes != floor(frac_bytes)) {
        snprintf(err, errlen, "size '%s' is not a whole number of bytes", text);
        return -1;
    }
    bytes += (uint64_t)frac_bytes;
    if (bytes > VL_SIZE_MAX) {
        snprintf(err, errlen, "size '%s' is too large", text);
        return -1;
    }
    *out = bytes;
    return 0;
}

const char *vl_format_size(uint64_t bytes, char *buf, size_t buflen)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, buflen, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, buflen, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
    return buf;
}
