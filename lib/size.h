/* Byte sizes as people write them: "512", "4KiB", "2MiB", "1.5GiB", "4K", "2MB" (binary units). */
#ifndef VL_SIZE_H
#define VL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parses a size; accepts an optional fraction and a unit B, K/KiB/KB, M/MiB/MB,
 * G/GiB/GB, T/TiB/TB (all powers of 1024, case-insensitive). Returns 0, or -1 with
 * a one-line reason in err. Rejects negatives, empty strings, trailing junk,
 * fractions of a byte and values above 2^62. */
int vl_parse_size(const char *text, uint64_t *out, char *err, size_t errlen);

/* Formats with the largest unit that keeps 1-4 significant digits: "1.50 GiB". */
const char *vl_format_size(uint64_t bytes, char *buf, size_t buflen);

#endif
