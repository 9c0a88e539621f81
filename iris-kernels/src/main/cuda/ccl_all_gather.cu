// ccl_all_gather.cu: all-gather of raw bytes (any element type): ccl_all_gather_push.
//
//   (iris_ccl_args: in, out, count = bytes)
// in holds `bytes` bytes per rank, out world * bytes; out[r * bytes ...] on every rank = rank r's in.
// In place, in is out[rank * bytes ...] itself: each thread then stores back the element it just
// loaded, and no other thread writes that slot.
//
//   push  once every peer has arrived (its output is free), each block writes its piece of the
//         input into slot [rank] of every rank's output (its own included, all in one pass:
//         copy_to_all), then flags every peer; a rank ends once every peer's pieces have
//         arrived. 16-byte stores when the slot offset allows (bytes a multiple of 16), else the
//         widest width it allows.
#include "ccl_common.cuh"

extern "C" __global__ void __launch_bounds__(ccl::kThreads, 1) ccl_all_gather_push(const IRIS_GRID_CONSTANT iris_ccl_args a) {
    ccl::push_to_all<ccl::kSiteAllGather>(a, 0);
}
