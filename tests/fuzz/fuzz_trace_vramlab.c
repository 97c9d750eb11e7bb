/* libFuzzer target: the vramlab trace parser (lib/trace, --format vramlab) on arbitrary bytes. */
#include "trace_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vl_trace_options opt = {.format = VL_TRACE_VRAMLAB, .free_at = VL_TRACE_FREE_AT_COMPLETED};
    vl_fuzz_trace_one(data, size, &opt);
    return 0;
}
