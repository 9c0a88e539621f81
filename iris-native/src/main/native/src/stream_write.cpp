// stream_write.cpp: stream memory operations, a 32-bit write that takes its place in a stream's
// order like a kernel but runs on no SM.
//
// A kernel that waits for work queued on another stream cannot take a flag from a kernel there
// when its own CTAs hold every SM; a stream write needs none. On CUDA it is the driver's
// cuStreamWriteValue32 (driver_api.h), which fences the work ahead of it in the stream before the
// write and can be captured into a CUDA graph; on HIP hipStreamWriteValue32.
#include <atomic>

#include "check.h"
#include "driver_api.h"

extern "C" {

int iris_stream_write_value32(iris_stream stream, uint64_t address, uint32_t value) {
    iris::clear_error();
    constexpr const char* kFunction = "iris_stream_write_value32";
    IRIS_REQUIRE(address != 0, kFunction, "address is NULL");
    IRIS_REQUIRE(address % 4 == 0, kFunction, "address is not 4-byte aligned");
#if defined(IRIS_PLATFORM_HIP)
    void* word = reinterpret_cast<void*>(address);
    IRIS_GPU_CHECK(hipStreamWriteValue32(iris::handle_cast<hipStream_t>(stream), word, value, 0));
    return IRIS_SUCCESS;
#else
    static std::atomic<PFN_cuStreamWriteValue32_v11070> write_value{nullptr};
    PFN_cuStreamWriteValue32_v11070 write = nullptr;
    int status = iris::driver_function(write_value, "cuStreamWriteValue32", 11070, kFunction, &write);
    if (status != IRIS_SUCCESS) return status;
    const CUresult r = write(iris::handle_cast<CUstream>(stream), static_cast<CUdeviceptr>(address), value,
                             CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r != CUDA_SUCCESS) return iris::fail_driver(kFunction, "cuStreamWriteValue32(stream, address, value, 0)", r);
    return IRIS_SUCCESS;
#endif
}

}  // extern "C"
