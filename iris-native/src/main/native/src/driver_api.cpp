// driver_api.cpp: what driver_api.h declares beyond its template.
#include "driver_api.h"

#if !defined(IRIS_PLATFORM_HIP)
namespace iris {

void driver_error_name(CUresult r, char* out, size_t size) {
    static std::atomic<PFN_cuGetErrorName_v6000> get_error_name{nullptr};
    PFN_cuGetErrorName_v6000 get = nullptr;
    const char* name = nullptr;
    if (driver_function(get_error_name, "cuGetErrorName", 12000, "driver_error_name", &get) == IRIS_SUCCESS &&
        get(r, &name) == CUDA_SUCCESS && name != nullptr) {
        std::snprintf(out, size, "%s", name);
    } else {
        std::snprintf(out, size, "CUresult %d", static_cast<int>(r));
    }
    (void)gpuGetLastError();
}

int fail_driver(const char* function, const char* call, CUresult r) {
    char name[64];
    driver_error_name(r, name, sizeof(name));
    char message[256];
    std::snprintf(message, sizeof(message), "%s failed: %s", call, name);
    return fail(IRIS_ERROR_GPU, function, message);
}

int ensure_context(const char* caller) {
    static std::atomic<PFN_cuCtxGetCurrent_v4000> ctx_get_current{nullptr};
    PFN_cuCtxGetCurrent_v4000 get = nullptr;
    int status = driver_function(ctx_get_current, "cuCtxGetCurrent", 12000, caller, &get);
    if (status != IRIS_SUCCESS) return status;
    CUcontext current = nullptr;
    if (get(&current) == CUDA_SUCCESS && current != nullptr) return IRIS_SUCCESS;
    int device = 0;
    IRIS_GPU_CHECK(gpuGetDevice(&device));
    IRIS_GPU_CHECK(gpuSetDevice(device));
    return IRIS_SUCCESS;
}

}  // namespace iris
#endif  // !IRIS_PLATFORM_HIP
