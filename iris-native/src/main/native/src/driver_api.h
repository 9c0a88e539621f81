// driver_api.h: CUDA driver API functions, fetched through the runtime's entry-point query.
//
// libiris links only the static CUDA runtime, so that it builds and loads where there is no
// driver; the few driver functions it needs (tensor-map encoding, stream memory operations) are
// looked up once at first use. CUDA only: HIP callers report IRIS_ERROR_UNSUPPORTED or call HIP.
#ifndef IRIS_DRIVER_API_H
#define IRIS_DRIVER_API_H

#if !defined(IRIS_PLATFORM_HIP)
#include <atomic>
#include <cstddef>
#include <cstdio>

#include <cuda.h>          // driver types and enums only: nothing from libcuda is linked
#include <cudaTypedefs.h>  // PFN_* of each function and version

#include "check.h"

namespace iris {

/// The driver's `symbol` as of CUDA version `version` (e.g. 12000), cached in `slot`. A failed
/// lookup is recorded for `caller` (IRIS_ERROR_GPU) and not remembered: the next call asks again.
template <class Fn>
int driver_function(std::atomic<Fn>& slot, const char* symbol, unsigned version, const char* caller, Fn* out) {
    Fn fn = slot.load(std::memory_order_acquire);
    if (fn == nullptr) {
        void* p = nullptr;
        bool found = false;
        const gpuError_t e = gpu::driver_entry_point(symbol, &p, version, &found);
        if (e != gpuSuccess) {
            char call[160];
            std::snprintf(call, sizeof(call), "%s(\"%s\", &fn, %u, cudaEnableDefault, &query)",
                          IRIS_DRIVER_ENTRY_POINT_NAME, symbol, version);
            return fail_gpu(call, e);
        }
        if (!found) {
            char message[160];
            std::snprintf(message, sizeof(message), "the driver has no %s (it needs a driver for CUDA %u.%u or newer)",
                          symbol, version / 1000, version % 1000 / 10);
            return fail(IRIS_ERROR_GPU, caller, message);
        }
        fn = reinterpret_cast<Fn>(p);
        slot.store(fn, std::memory_order_release);
    }
    *out = fn;
    return IRIS_SUCCESS;
}

/// "CUDA_ERROR_INVALID_VALUE" for a driver result, through the same query; the number where that fails.
void driver_error_name(CUresult r, char* out, size_t size);

/// Makes the runtime's device current on the calling thread when no context is: driver functions
/// that act on the current context fail with CUDA_ERROR_INVALID_CONTEXT on a thread that has not
/// touched the GPU yet (cudaSetDevice initializes the primary context). With a context current
/// nothing is called, so this stays legal during stream capture.
int ensure_context(const char* caller);

/// Records "<function>: <call> failed: <the result's name>" and returns IRIS_ERROR_GPU.
int fail_driver(const char* function, const char* call, CUresult r);

}  // namespace iris

#endif  // !IRIS_PLATFORM_HIP
#endif  // IRIS_DRIVER_API_H
