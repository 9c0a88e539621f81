// memory.cpp: device and mapped host allocations, copies and memset.
#include "check.h"

namespace {
void* as_ptr(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }
}  // namespace

extern "C" {

int iris_malloc(uint64_t* device_address, uint64_t bytes) {
    iris::clear_error();
    IRIS_REQUIRE(device_address, "iris_malloc", "NULL output");
    IRIS_REQUIRE(bytes > 0, "iris_malloc", "bytes must be positive");
    void* p = nullptr;
    IRIS_GPU_CHECK(gpuMalloc(&p, bytes));
    *device_address = reinterpret_cast<uintptr_t>(p);
    return IRIS_SUCCESS;
}

int iris_free(uint64_t device_address) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuFree(as_ptr(device_address)));
    return IRIS_SUCCESS;
}

int iris_host_alloc_mapped(void** host_address, uint64_t bytes) {
    iris::clear_error();
    IRIS_REQUIRE(host_address, "iris_host_alloc_mapped", "NULL output");
    IRIS_REQUIRE(bytes > 0, "iris_host_alloc_mapped", "bytes must be positive");
    IRIS_GPU_CHECK(gpuHostAlloc(host_address, bytes, gpuHostAllocMapped));
    return IRIS_SUCCESS;
}

int iris_host_free(void* host_address) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuFreeHost(host_address));
    return IRIS_SUCCESS;
}

int iris_memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, iris_stream stream) {
    iris::clear_error();
    IRIS_REQUIRE(src || bytes == 0, "iris_memcpy_htod", "NULL source");
    IRIS_GPU_CHECK(gpuMemcpyAsync(as_ptr(dst), src, bytes, gpuMemcpyHostToDevice,
                                  iris::handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, iris_stream stream) {
    iris::clear_error();
    IRIS_REQUIRE(dst || bytes == 0, "iris_memcpy_dtoh", "NULL destination");
    IRIS_GPU_CHECK(gpuMemcpyAsync(dst, as_ptr(src), bytes, gpuMemcpyDeviceToHost,
                                  iris::handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuMemcpyAsync(as_ptr(dst), as_ptr(src), bytes, gpuMemcpyDeviceToDevice,
                                  iris::handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_memcpy_peer(uint64_t dst, int dst_device, uint64_t src, int src_device, uint64_t bytes,
                     iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuMemcpyPeerAsync(as_ptr(dst), dst_device, as_ptr(src), src_device, bytes,
                                      iris::handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

int iris_memset_d8(uint64_t dst, uint8_t value, uint64_t bytes, iris_stream stream) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuMemsetAsync(as_ptr(dst), value, bytes, iris::handle_cast<gpuStream_t>(stream)));
    return IRIS_SUCCESS;
}

}  // extern "C"
