// device.cpp: device selection, properties and peer access.
#include <algorithm>
#include <cstring>

#include "check.h"

extern "C" {

int iris_device_count(int* count) {
    iris::clear_error();
    IRIS_REQUIRE(count, "iris_device_count", "NULL output");
    *count = 0;
    IRIS_GPU_CHECK(gpuGetDeviceCount(count));
    return IRIS_SUCCESS;
}

int iris_device_set(int device) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuSetDevice(device));
    return IRIS_SUCCESS;
}

int iris_device_get(int* device) {
    iris::clear_error();
    IRIS_REQUIRE(device, "iris_device_get", "NULL output");
    IRIS_GPU_CHECK(gpuGetDevice(device));
    return IRIS_SUCCESS;
}

int iris_device_properties_get(int device, iris_device_properties* out) {
    iris::clear_error();
    IRIS_REQUIRE(out, "iris_device_properties_get", "NULL output");
    gpuDeviceProp p{};
    IRIS_GPU_CHECK(gpuGetDeviceProperties(&p, device));
    std::memset(out, 0, sizeof(*out));
    std::memcpy(out->name, p.name, std::min(sizeof(out->name), sizeof(p.name)));
    out->name[sizeof(out->name) - 1] = 0;
    out->major = p.major;
    out->minor = p.minor;
    out->multiprocessor_count = p.multiProcessorCount;
    out->warp_size = p.warpSize;
    out->max_threads_per_block = p.maxThreadsPerBlock;
    out->pci_domain_id = p.pciDomainID;
    out->pci_bus_id = p.pciBusID;
    out->pci_device_id = p.pciDeviceID;
    out->total_global_memory = p.totalGlobalMem;
    out->l2_cache_bytes = static_cast<uint64_t>(p.l2CacheSize);
    out->shared_memory_per_block_optin = gpu::shared_memory_per_block_optin(p);
    return IRIS_SUCCESS;
}

int iris_device_can_access_peer(int device, int peer_device, int* can_access) {
    iris::clear_error();
    IRIS_REQUIRE(can_access, "iris_device_can_access_peer", "NULL output");
    IRIS_GPU_CHECK(gpuDeviceCanAccessPeer(can_access, device, peer_device));
    return IRIS_SUCCESS;
}

int iris_device_peer_native_atomics(int device, int peer_device, int* native) {
    iris::clear_error();
    IRIS_REQUIRE(native, "iris_device_peer_native_atomics", "NULL output");
    IRIS_GPU_CHECK(gpuDeviceGetP2PAttribute(native, gpuDevP2PAttrNativeAtomicSupported, device, peer_device));
    return IRIS_SUCCESS;
}

int iris_device_enable_peer_access(int peer_device) {
    iris::clear_error();
    gpuError_t e = gpuDeviceEnablePeerAccess(peer_device, 0);
    if (e == gpuSuccess || e == gpuErrorPeerAccessAlreadyEnabled) {
        (void)gpuGetLastError();
        return IRIS_SUCCESS;
    }
    return iris::fail_gpu("gpuDeviceEnablePeerAccess(peer_device, 0)", e);
}

int iris_device_synchronize(void) {
    iris::clear_error();
    IRIS_GPU_CHECK(gpuDeviceSynchronize());
    return IRIS_SUCCESS;
}

int iris_mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) {
    iris::clear_error();
    IRIS_REQUIRE(free_bytes && total_bytes, "iris_mem_get_info", "NULL output");
    size_t f = 0, t = 0;
    IRIS_GPU_CHECK(gpuMemGetInfo(&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return IRIS_SUCCESS;
}

}  // extern "C"
