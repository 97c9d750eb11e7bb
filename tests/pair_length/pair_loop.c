/* tests/pair_length: N cache-hit alloc+free pairs of 512 B under one SPEC on the simulated
 * device, after one warm-up pair; run.sh counts its instructions with valgrind for N and
 * for 0, so the difference over N is one pair's length.
 *   pair_loop SPEC N */
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "device.h"

int main(int argc, char **argv)
{
    char err[256], *end;
    int status;
    long n = argc == 3 ? strtol(argv[2], &end, 10) : -1;
    if (argc != 3 || *end || n < 0) {
        fprintf(stderr, "usage: pair_loop SPEC N (N >= 0 pairs)\n");
        return 2;
    }
    vl_device *dev = vl_device_open("sim", &status, err, sizeof err);
    if (!dev) {
        fprintf(stderr, "pair_loop: %s\n", err);
        return 1;
    }
    vl_allocator *a = vl_alloc_open(argv[1], dev, &status, err, sizeof err);
    if (!a) {
        fprintf(stderr, "pair_loop: %s\n", err);
        return 1;
    }
    void *warm = vl_allocate(a, 512, NULL); /* the first pair is a miss: it grows a segment */
    if (!warm) {
        fprintf(stderr, "pair_loop: the first 512 B request failed\n");
        return 1;
    }
    vl_deallocate(a, warm, 512, NULL);
    for (long i = 0; i < n; i++) {
        void *p = vl_allocate(a, 512, NULL);
        if (p != warm) { /* a cache hit hands back the same block */
            fprintf(stderr, "pair_loop: pair %ld got %p, not the cached %p\n", i, p, warm);
            return 1;
        }
        vl_deallocate(a, p, 512, NULL);
    }
    vl_alloc_close(a);
    vl_device_close(dev);
    return 0;
}
