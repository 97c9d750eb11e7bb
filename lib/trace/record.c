/* Trace recording for live allocators: see record.h. */
#include "trace/record.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vl_trace_recorder {
    pthread_mutex_t lock;
    FILE *out;
    char path[256];
    int failed; /* a write failed: reported once, nothing more is written */
};

vl_trace_recorder *vl_trace_record_open(const char *path, char *err, size_t errlen)
{
    vl_trace_recorder *r = calloc(1, sizeof *r);
    if (r == NULL) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    r->out = fopen(path, "w");
    if (r->out == NULL || fprintf(r->out, "vramlab-trace 1\n") < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (r->out) fclose(r->out);
        free(r);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

/* Called with the lock held: a failed write is reported once, then recording stops. */
static void check_write(vl_trace_recorder *r, int rc)
{
    if (rc >= 0 || r->failed) return;
    r->failed = 1;
    fprintf(stderr, "vramlab: trace %s: write failed (%s); recording stopped\n", r->path, strerror(errno));
}

void vl_trace_record_alloc(vl_trace_recorder *r, const void *addr, size_t size, uintptr_t stream)
{
    pthread_mutex_lock(&r->lock);
    if (!r->failed)
        check_write(r, fprintf(r->out, "a 0x%" PRIxPTR " %zu %" PRIuPTR "\n", (uintptr_t)addr, size, stream));
    pthread_mutex_unlock(&r->lock);
}

void vl_trace_record_free(vl_trace_recorder *r, const void *addr, uintptr_t stream)
{
    pthread_mutex_lock(&r->lock);
    if (!r->failed) check_write(r, fprintf(r->out, "f 0x%" PRIxPTR " %" PRIuPTR "\n", (uintptr_t)addr, stream));
    pthread_mutex_unlock(&r->lock);
}

int vl_trace_record_close(vl_trace_recorder *r)
{
    if (r == NULL) return 0;
    pthread_mutex_lock(&r->lock);
    int rc = r->failed ? -1 : 0;
    if (fclose(r->out) != 0 && rc == 0) {
        fprintf(stderr, "vramlab: trace %s: %s\n", r->path, strerror(errno));
        rc = -1;
    }
    pthread_mutex_unlock(&r->lock);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return rc;
}
