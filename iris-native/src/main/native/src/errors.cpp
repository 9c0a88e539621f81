// errors.cpp: the per-thread last-error record behind iris_last_error().
#include <cstdio>
#include <cstring>
#include <string>

#include "check.h"

namespace {
thread_local std::string last_message;
thread_local int last_gpu_error = 0;

// "gpuMalloc(&p, n)" -> "cudaMalloc(&p, n)": messages should name the real API.
std::string platform_call_text(const char* call) {
    std::string text(call);
    if (text.rfind("gpu", 0) == 0) text.replace(0, 3, IRIS_GPU_PREFIX);
    return text;
}
}  // namespace

namespace iris {

int fail_gpu(const char* call, gpuError_t error) {
    last_gpu_error = static_cast<int>(error);
    last_message = platform_call_text(call) + " failed: " + gpuGetErrorString(error) + " (" +
                   gpuGetErrorName(error) + ")";
    // Clear a non-sticky error so that it is not reported again by the next launch check.
    (void)gpuGetLastError();
    return IRIS_ERROR_GPU;
}

int fail(int status, const char* function, const char* message) {
    last_gpu_error = 0;
    last_message = std::string(function) + ": " + message;
    return status;
}

void clear_error() {
    last_message.clear();
    last_gpu_error = 0;
}

}  // namespace iris

extern "C" {

const char* iris_last_error(void) { return last_message.c_str(); }

int iris_last_gpu_error(void) { return last_gpu_error; }

const char* iris_platform_name(void) { return IRIS_GPU_PLATFORM; }

int iris_runtime_version(int* runtime_version, int* driver_version) {
    iris::clear_error();
    IRIS_REQUIRE(runtime_version && driver_version, "iris_runtime_version", "NULL output");
    IRIS_GPU_CHECK(gpuRuntimeGetVersion(runtime_version));
    IRIS_GPU_CHECK(gpuDriverGetVersion(driver_version));
    return IRIS_SUCCESS;
}

}  // extern "C"
