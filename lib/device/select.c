/* --device SPEC dispatch to the cuda and sim implementations (lib/device/cuda.c, sim.c; see device.h). */
#include "device.h"

#include <string.h>

#include "exitcodes.h"

typedef struct device_kind {
    const char *name;
    const vl_opt *options;
    const char *summary;
} device_kind;

static const device_kind kinds[] = {
    {"cuda", vl_device_cuda_options, "a real CUDA device (runtime + driver virtual-memory API)"},
    {"sim", vl_device_sim_options, "a simulated device: no memory touched; results are labelled simulated"},
};

static const device_kind *find_kind(const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    snprintf(err, errlen, "unknown device '%s' (devices: cuda, sim; '--device help' lists options)", name);
    return NULL;
}

int vl_device_spec_parse(const char *spec, vl_spec *out, char *err, size_t errlen)
{
    char name[64];
    if (vl_spec_name(spec, name, sizeof name, err, errlen) != 0) return -1;
    const device_kind *k = find_kind(name, err, errlen);
    return k && vl_spec_parse(spec, k->options, out, err, errlen) == 0 ? 0 : -1;
}

int vl_device_spec_check(const char *spec, char *err, size_t errlen)
{
    vl_spec parsed;
    return vl_device_spec_parse(spec, &parsed, err, errlen);
}

vl_device *vl_device_open(const char *spec, int *status, char *err, size_t errlen)
{
    vl_spec parsed;
    *status = VL_EXIT_USAGE;
    if (vl_device_spec_parse(spec, &parsed, err, errlen) != 0) return NULL;
    return vl_device_open_spec(&parsed, status, err, errlen);
}

vl_device *vl_device_open_spec(const vl_spec *spec, int *status, char *err, size_t errlen)
{
    const device_kind *k = find_kind(spec->name, err, errlen);
    *status = VL_EXIT_USAGE;
    if (!k) return NULL;
    vl_device *d = strcmp(k->name, "sim") == 0 ? vl_device_sim_open(spec, status, err, errlen)
                                               : vl_device_cuda_open(spec, status, err, errlen);
    if (d) snprintf(d->spec, sizeof d->spec, "%s", spec->text);
    return d;
}

void vl_device_close(vl_device *d)
{
    if (d) d->ops->close(d);
}

void vl_device_help(FILE *out)
{
    fprintf(out, "devices (--device SPEC, SPEC = NAME[:key=value,...]):\n");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        fprintf(out, "  %-8s %s\n", kinds[i].name, kinds[i].summary);
        vl_spec_print_docs(out, kinds[i].options);
    }
}
