/* Temporary files for tests (see tmpfile.h). */
#include "tmpfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int vl_test_tmpfile(const char *tag, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "/tmp/vl_test_%s_XXXXXX", tag);
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}
