// module.cpp: loading compiled device code at run time and launching its kernels.

#include <atomic>

#include "check.h"
#include "driver_api.h"

using iris::handle_cast;

namespace {
// Kernel parameter space is 32 KiB on current GPUs; more arguments than this is a caller bug.
constexpr uint32_t kMaxKernelArgs = 256;

#if !defined(IRIS_PLATFORM_HIP)
// Under lazy loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2) a kernel's code reaches
// the context at its first launch, and that load waits for the kernels already running: a first
// launch beside a kernel that spins until it is released (a peer's persistent kernel, a wait on this
// very launch) stalls until that kernel ends. Loading at lookup moves the wait to where nothing of
// the caller runs yet. A driver older than 12.4 has no cuFuncLoad: its kernels load at first launch.
int load_in_current_context(gpu::Kernel k) {
    static std::atomic<PFN_cuKernelGetFunction_v12000> get_function{nullptr};
    static std::atomic<PFN_cuFuncLoad_v12040> func_load{nullptr};
    void* probe = nullptr;
    bool found = false;
    if (func_load.load(std::memory_order_acquire) == nullptr &&
        gpu::driver_entry_point("cuFuncLoad", &probe, 12040, &found) == gpuSuccess && !found) {
        return IRIS_SUCCESS;
    }
    PFN_cuKernelGetFunction_v12000 get = nullptr;
    PFN_cuFuncLoad_v12040 load = nullptr;
    if (int status = iris::driver_function(get_function, "cuKernelGetFunction", 12000, "iris_module_get_function", &get)) {
        return status;
    }
    if (int status = iris::driver_function(func_load, "cuFuncLoad", 12040, "iris_module_get_function", &load)) {
        return status;
    }
    if (int status = iris::ensure_context("iris_module_get_function")) return status;
    CUfunction f = nullptr;
    CUresult r = get(&f, reinterpret_cast<CUkernel>(k));
    if (r != CUDA_SUCCESS) return iris::fail_driver("iris_module_get_function", "cuKernelGetFunction(&function, kernel)", r);
    r = load(f);
    if (r != CUDA_SUCCESS) return iris::fail_driver("iris_module_get_function", "cuFuncLoad(function)", r);
    return IRIS_SUCCESS;
}
#endif
}  // namespace

extern "C" {

int iris_module_load_data(iris_module* module, const void* image, uint64_t image_bytes) {
    iris::clear_error();
    IRIS_REQUIRE(module && image && image_bytes > 0, "iris_module_load_data", "NULL or empty image");
    gpu::Library lib{};
    gpuError_t e = gpu::library_load(&lib, image);
    if (e != gpuSuccess) return iris::fail_gpu(IRIS_LIBRARY_LOAD_NAME "(&library, image)", e);
    *module = handle_cast<iris_module>(lib);
    return IRIS_SUCCESS;
}

int iris_module_unload(iris_module module) {
    iris::clear_error();
    gpuError_t e = gpu::library_unload(handle_cast<gpu::Library>(module));
    if (e != gpuSuccess) return iris::fail_gpu("library unload", e);
    return IRIS_SUCCESS;
}

int iris_module_get_function(iris_function* function, iris_module module, const char* name) {
    iris::clear_error();
    IRIS_REQUIRE(function && module && name, "iris_module_get_function", "NULL argument");
    gpu::Kernel k{};
    gpuError_t e = gpu::library_get_kernel(&k, handle_cast<gpu::Library>(module), name);
    if (e != gpuSuccess) {
        iris::fail_gpu(IRIS_LIBRARY_GET_NAME "(&kernel, library, name)", e);
        return IRIS_ERROR_NOT_FOUND;
    }
#if !defined(IRIS_PLATFORM_HIP)
    if (int status = load_in_current_context(k)) return status;
#endif
    *function = handle_cast<iris_function>(k);
    return IRIS_SUCCESS;
}

int iris_function_set_max_dynamic_shared_memory(iris_function function, int bytes) {
    iris::clear_error();
    IRIS_REQUIRE(function && bytes >= 0, "iris_function_set_max_dynamic_shared_memory", "bad argument");
    gpuError_t e = gpu::kernel_set_max_dynamic_smem(handle_cast<gpu::Kernel>(function), bytes);
    if (e != gpuSuccess) return iris::fail_gpu(IRIS_GPU_PREFIX "FuncSetAttribute(kernel, MaxDynamicSharedMemorySize)", e);
    return IRIS_SUCCESS;
}

int iris_function_prefer_shared_memory(iris_function function) {
    iris::clear_error();
    IRIS_REQUIRE(function, "iris_function_prefer_shared_memory", "NULL function");
    gpuError_t e = gpu::kernel_prefer_shared_memory(handle_cast<gpu::Kernel>(function));
    if (e != gpuSuccess) return iris::fail_gpu(IRIS_GPU_PREFIX "FuncSetAttribute(kernel, PreferredSharedMemoryCarveout)", e);
    return IRIS_SUCCESS;
}

int iris_function_max_active_blocks(iris_function function, int threads, int dynamic_shared_bytes, int* blocks) {
    iris::clear_error();
    IRIS_REQUIRE(function && blocks && threads > 0 && dynamic_shared_bytes >= 0, "iris_function_max_active_blocks",
                 "bad argument");
    gpuError_t e = gpu::kernel_max_active_blocks(handle_cast<gpu::Kernel>(function), threads,
                                                 static_cast<size_t>(dynamic_shared_bytes), blocks);
    if (e != gpuSuccess) return iris::fail_gpu(IRIS_GPU_PREFIX "OccupancyMaxActiveBlocksPerMultiprocessor", e);
    return IRIS_SUCCESS;
}

int iris_function_attributes(iris_function function, int* registers, int* static_shared_bytes,
                             int* local_bytes, int* max_threads_per_block) {
    iris::clear_error();
    IRIS_REQUIRE(function && registers && static_shared_bytes && local_bytes && max_threads_per_block,
                 "iris_function_attributes", "NULL argument");
    gpuError_t e = gpu::kernel_attributes(handle_cast<gpu::Kernel>(function), registers,
                                          static_shared_bytes, local_bytes, max_threads_per_block);
    if (e != gpuSuccess) return iris::fail_gpu(IRIS_GPU_PREFIX "FuncGetAttributes(&attributes, kernel)", e);
    return IRIS_SUCCESS;
}

int iris_function_param_info(iris_function function, uint32_t* count, uint32_t* offsets, uint32_t* sizes,
                             uint32_t capacity) {
    iris::clear_error();
    IRIS_REQUIRE(function && count && (capacity == 0 || (offsets && sizes)), "iris_function_param_info",
                 "NULL argument");
#if defined(IRIS_PLATFORM_HIP)
    return iris::fail(IRIS_ERROR_UNSUPPORTED, "iris_function_param_info", "HIP reports no kernel parameter layout");
#else
    static std::atomic<PFN_cuKernelGetParamInfo_v12040> get_param_info{nullptr};
    PFN_cuKernelGetParamInfo_v12040 get = nullptr;
    void* probe = nullptr;
    bool found = false;
    // A driver older than 12.4 lacks the query: that is "no layout to check against", not a failure.
    if (get_param_info.load(std::memory_order_acquire) == nullptr &&
        gpu::driver_entry_point("cuKernelGetParamInfo", &probe, 12040, &found) == gpuSuccess && !found) {
        return iris::fail(IRIS_ERROR_UNSUPPORTED, "iris_function_param_info",
                          "the driver has no cuKernelGetParamInfo (it needs CUDA 12.4 or newer)");
    }
    if (int status = iris::driver_function(get_param_info, "cuKernelGetParamInfo", 12040, "iris_function_param_info", &get)) {
        return status;
    }
    // cudaKernel_t and CUkernel are one handle; the driver answers CUDA_ERROR_INVALID_VALUE past the last parameter.
    CUkernel kernel = reinterpret_cast<CUkernel>(handle_cast<gpu::Kernel>(function));
    uint32_t n = 0;
    for (;; ++n) {
        IRIS_REQUIRE(n <= kMaxKernelArgs, "iris_function_param_info", "more than 256 kernel parameters");
        size_t offset = 0, size = 0;
        CUresult r = get(kernel, n, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        if (r != CUDA_SUCCESS) {
            return iris::fail_driver("iris_function_param_info", "cuKernelGetParamInfo(kernel, index, &offset, &size)", r);
        }
        if (n < capacity) {
            offsets[n] = static_cast<uint32_t>(offset);
            sizes[n] = static_cast<uint32_t>(size);
        }
    }
    *count = n;
    return IRIS_SUCCESS;
#endif
}

int iris_launch_ex(iris_function function, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                   uint32_t block_x, uint32_t block_y, uint32_t block_z, uint32_t dynamic_shared_bytes,
                   iris_stream stream, const void* arg_buffer, const uint32_t* arg_offsets,
                   uint32_t arg_count, uint32_t flags) {
    iris::clear_error();
    IRIS_REQUIRE(function, "iris_launch", "NULL function");
    IRIS_REQUIRE(arg_count <= kMaxKernelArgs, "iris_launch", "more than 256 kernel arguments");
    IRIS_REQUIRE(arg_count == 0 || (arg_buffer && arg_offsets), "iris_launch", "NULL argument buffer");
    IRIS_REQUIRE((flags & ~uint32_t(IRIS_LAUNCH_OVERLAP_PREVIOUS)) == 0, "iris_launch_ex", "unknown flags");
    // The runtime copies argument values at launch, so pointers into arg_buffer need only live
    // for the duration of this call.
    void* args[kMaxKernelArgs];
    const char* base = static_cast<const char*>(arg_buffer);
    for (uint32_t i = 0; i < arg_count; ++i) args[i] = const_cast<char*>(base + arg_offsets[i]);
    const bool overlap = (flags & IRIS_LAUNCH_OVERLAP_PREVIOUS) != 0;
    const auto launch = overlap ? gpu::launch_kernel_overlapping : gpu::launch_kernel;
    gpuError_t e = launch(handle_cast<gpu::Kernel>(function), dim3(grid_x, grid_y, grid_z), dim3(block_x, block_y, block_z),
                          arg_count ? args : nullptr, dynamic_shared_bytes, handle_cast<gpuStream_t>(stream));
    if (e != gpuSuccess) {
        return iris::fail_gpu(overlap ? IRIS_LAUNCH_OVERLAPPING_NAME "(config, kernel, args)"
                                      : IRIS_LAUNCH_NAME "(kernel, grid, block, args, shared, stream)",
                              e);
    }
    // Launch-configuration errors surface here on some runtimes rather than from the launch.
    e = gpuGetLastError();
    if (e != gpuSuccess) {
        return iris::fail_gpu(overlap ? IRIS_LAUNCH_OVERLAPPING_NAME " (deferred launch error)"
                                      : IRIS_LAUNCH_NAME " (deferred launch error)",
                              e);
    }
    return IRIS_SUCCESS;
}

int iris_launch(iris_function function, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                uint32_t block_x, uint32_t block_y, uint32_t block_z, uint32_t dynamic_shared_bytes,
                iris_stream stream, const void* arg_buffer, const uint32_t* arg_offsets,
                uint32_t arg_count) {
    return iris_launch_ex(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, dynamic_shared_bytes, stream,
                          arg_buffer, arg_offsets, arg_count, 0);
}

}  // extern "C"
