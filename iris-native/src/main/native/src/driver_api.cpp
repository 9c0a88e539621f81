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

}  // namespace iris
#endif  // !IRIS_PLATFORM_HIP
