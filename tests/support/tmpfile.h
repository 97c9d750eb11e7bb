/* A fresh, empty temporary file for a test: its path is written into path. */
#ifndef VL_TEST_TMPFILE_H
#define VL_TEST_TMPFILE_H

#include <stddef.h>

/* path receives "/tmp/vl_test_<tag>_XXXXXX" made unique; returns 0, or -1 when no file
 * could be made. The caller unlinks it. */
int vl_test_tmpfile(const char *tag, char *path, size_t pathlen);

#endif
