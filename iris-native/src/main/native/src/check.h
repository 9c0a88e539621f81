// check.h: how every runtime call in this library is checked and reported.
//
// A failing call records a one-line message for the calling thread (read back through
// iris_last_error()) and returns a status, NCCL-style; nothing here exits or aborts.
#ifndef IRIS_CHECK_H
#define IRIS_CHECK_H

#include "gpu_runtime.h"
#include "iris_runtime.h"

namespace iris {

// Records "<call> failed: <message> (<error name>)" and returns IRIS_ERROR_GPU.
int fail_gpu(const char* call, gpuError_t error);
// Records "<function>: <message>" and returns the given status.
int fail(int status, const char* function, const char* message);
// Clears the calling thread's last error; each public entry point starts with it.
void clear_error();

// Handles are the runtime's own handles, cast; no wrapper objects to allocate or leak.
template <class To, class From>
inline To handle_cast(From h) { return reinterpret_cast<To>(h); }

}  // namespace iris

// The call text names the runtime function with its platform prefix ("gpuMalloc" reads as
// "cudaMalloc" or "hipMalloc" in the message), so the Java exception names the real call.
#define IRIS_GPU_CHECK(call)                                  \
    do {                                                      \
        gpuError_t iris_err_ = (call);                        \
        if (iris_err_ != gpuSuccess) {                        \
            return ::iris::fail_gpu(#call, iris_err_);        \
        }                                                     \
    } while (0)

#define IRIS_REQUIRE(condition, function, message)                               \
    do {                                                                         \
        if (!(condition)) {                                                      \
            return ::iris::fail(IRIS_ERROR_INVALID_ARGUMENT, function, message); \
        }                                                                        \
    } while (0)

#endif  // IRIS_CHECK_H
