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

// The symmetric heap's memory, and the memory-model choice behind it (the device side of the
// same choice is described in include/iris/impl/arch.cuh).
//
// Default (flags = IRIS_HEAP_DEFAULT) on both platforms: plain device memory, gpuMalloc.
//   CUDA: there is one kind of device memory; peers reach it over NVLink and system-scope
//   release/acquire order every access. Tested on 2 x H200.
//   AMD: hipMalloc memory is coarse-grained. It stays the default, as in AMD's Iris, which began
//   with hipExtMallocWithFlags(..., hipDeviceMallocFinegrained) and moved to plain allocations
//   with system-scope atomics: every cross-GPU flag and atomic in the device API is system scope,
//   and the AMDGPU memory model lowers a system-scope release/acquire to an L2 writeback /
//   invalidate (the HIP build checks that the barrier kernel contains them), which is what makes
//   coarse-grained memory coherent at synchronization points. Fine-grained memory would cost
//   every access of the owner's own kernels (it is not cached in L2 the same way), and on MI200
//   hardware float atomics do nothing on it.
// IRIS_HEAP_FINE_GRAINED: hipExtMallocWithFlags(hipDeviceMallocFinegrained) on AMD, for systems
//   where coarse-grained coherence through the scopes is not enough (AMD documents fine-grained
//   memory for coherence during a kernel with other devices and the host); Java sets it with
//   IRIS_HEAP_FINE_GRAINED=1. On CUDA it is the same as the default.
// Neither AMD variant has run on AMD hardware: the HIP build is compiled and linked only.
int iris_malloc_heap(uint64_t* device_address, uint64_t bytes, int flags) {
    iris::clear_error();
    IRIS_REQUIRE(device_address, "iris_malloc_heap", "NULL output");
    IRIS_REQUIRE(bytes > 0, "iris_malloc_heap", "bytes must be positive");
    IRIS_REQUIRE(flags == IRIS_HEAP_DEFAULT || flags == IRIS_HEAP_FINE_GRAINED, "iris_malloc_heap",
                 "flags must be IRIS_HEAP_DEFAULT or IRIS_HEAP_FINE_GRAINED");
    void* p = nullptr;
    if (flags == IRIS_HEAP_FINE_GRAINED) {
        gpuError_t e = gpu::malloc_fine_grained(&p, bytes);
        if (e != gpuSuccess) return iris::fail_gpu(IRIS_MALLOC_FINE_GRAINED_NAME, e);
    } else {
        IRIS_GPU_CHECK(gpuMalloc(&p, bytes));
    }
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
