/* libFuzzer target: the torch-csv trace parser (lib/trace, --format torch-csv) on
 * arbitrary bytes, in both free modes (at free_completed, the default, and at
 * free_requested), since they take different paths through the live table. */
#include "trace_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vl_trace_options opt = {.format = VL_TRACE_TORCH_CSV, .free_at = VL_TRACE_FREE_AT_COMPLETED};
    vl_fuzz_trace_one(data, size, &opt);
    opt.free_at = VL_TRACE_FREE_AT_REQUESTED;
    vl_fuzz_trace_one(data, size, &opt);
    return 0;
}
