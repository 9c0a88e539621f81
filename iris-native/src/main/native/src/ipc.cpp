// ipc.cpp: exporting a device allocation to other processes and mapping theirs.
//
// The symmetric heap is built on these three calls: each rank exports its heap, the handles
// travel through the rendezvous, and each rank opens every peer's heap.
#include <cstring>

#include "check.h"

static_assert(sizeof(gpuIpcMemHandle_t) == IRIS_IPC_HANDLE_BYTES,
              "IRIS_IPC_HANDLE_BYTES must match the runtime's IPC handle size");

extern "C" {

int iris_ipc_export(uint64_t device_address, uint8_t* handle) {
    iris::clear_error();
    IRIS_REQUIRE(handle, "iris_ipc_export", "NULL handle buffer");
    gpuIpcMemHandle_t h;
    IRIS_GPU_CHECK(gpuIpcGetMemHandle(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(device_address))));
    std::memcpy(handle, &h, sizeof(h));
    return IRIS_SUCCESS;
}

int iris_ipc_open(const uint8_t* handle, uint64_t* device_address) {
    iris::clear_error();
    IRIS_REQUIRE(handle && device_address, "iris_ipc_open", "NULL argument");
    gpuIpcMemHandle_t h;
    std::memcpy(&h, handle, sizeof(h));
    void* p = nullptr;
    IRIS_GPU_CHECK(gpuIpcOpenMemHandle(&p, h, gpuIpcMemLazyEnablePeerAccess));
    *device_address = reinterpret_cast<uintptr_t>(p);
    return IRIS_SUCCESS;
}

int iris_ipc_close(uint64_t device_address) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuIpcCloseMemHandle(reinterpret_cast<void*>(static_cast<uintptr_t>(device_address))));
    return IRIS_SUCCESS;
}

}  // extern "C"
