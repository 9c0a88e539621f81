// gpu_runtime.h: the one place where CUDA and HIP runtime names meet.
//
// Sources use the neutral gpu* names below; building with IRIS_PLATFORM_HIP maps them to HIP,
// otherwise to CUDA. Names are mapped with the preprocessor because that is what a name mapping
// is; anything with behaviour lives in the small inline functions at the end. The HIP branch is
// host code for g++ with __HIP_PLATFORM_AMD__ (CMake: -DIRIS_GPU_PLATFORM=HIP); it is compiled
// and linked in CI against Debian's HIP 5.2, never run (no AMD GPU there).
#ifndef IRIS_GPU_RUNTIME_H
#define IRIS_GPU_RUNTIME_H

#include <cstddef>
#include <cstdint>

#if defined(IRIS_PLATFORM_HIP)
#include <hip/hip_runtime.h>
#define IRIS_GPU_PLATFORM "HIP"
#define IRIS_GPU_PREFIX "hip"
#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuError_t hipError_t
#define gpuStream_t hipStream_t
#define gpuEvent_t hipEvent_t
#define gpuGraph_t hipGraph_t
#define gpuGraphExec_t hipGraphExec_t
#define gpuIpcMemHandle_t hipIpcMemHandle_t
#define gpuDeviceProp hipDeviceProp_t
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceGetP2PAttribute hipDeviceGetP2PAttribute
#define gpuDevP2PAttrNativeAtomicSupported hipDevP2PAttrNativeAtomicSupported
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuMemGetInfo hipMemGetInfo
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc hipHostMalloc
#define gpuHostAllocMapped hipHostMallocMapped
#define gpuFreeHost hipHostFree
#define gpuIpcGetMemHandle hipIpcGetMemHandle
#define gpuIpcOpenMemHandle hipIpcOpenMemHandle
#define gpuIpcCloseMemHandle hipIpcCloseMemHandle
#define gpuIpcMemLazyEnablePeerAccess hipIpcMemLazyEnablePeerAccess
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuMemsetAsync hipMemsetAsync
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDefault hipStreamDefault
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamQuery hipStreamQuery
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define gpuStreamIsCapturing hipStreamIsCapturing
#define gpuStreamCaptureStatus hipStreamCaptureStatus
#define gpuStreamCaptureStatusNone hipStreamCaptureStatusNone
#define gpuStreamCaptureStatusActive hipStreamCaptureStatusActive
#define gpuGraphInstantiate(exec, graph) hipGraphInstantiate(exec, graph, nullptr, nullptr, 0)
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphExecDestroy hipGraphExecDestroy
#define gpuGraphDestroy hipGraphDestroy
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDefault hipEventDefault
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#else
#include <cuda_runtime.h>
#define IRIS_GPU_PLATFORM "CUDA"
#define IRIS_GPU_PREFIX "cuda"
#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuError_t cudaError_t
#define gpuStream_t cudaStream_t
#define gpuEvent_t cudaEvent_t
#define gpuGraph_t cudaGraph_t
#define gpuGraphExec_t cudaGraphExec_t
#define gpuIpcMemHandle_t cudaIpcMemHandle_t
#define gpuDeviceProp cudaDeviceProp
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceGetP2PAttribute cudaDeviceGetP2PAttribute
#define gpuDevP2PAttrNativeAtomicSupported cudaDevP2PAttrNativeAtomicSupported
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc cudaHostAlloc
#define gpuHostAllocMapped cudaHostAllocMapped
#define gpuFreeHost cudaFreeHost
#define gpuIpcGetMemHandle cudaIpcGetMemHandle
#define gpuIpcOpenMemHandle cudaIpcOpenMemHandle
#define gpuIpcCloseMemHandle cudaIpcCloseMemHandle
#define gpuIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuMemsetAsync cudaMemsetAsync
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDefault cudaStreamDefault
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamQuery cudaStreamQuery
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define gpuStreamIsCapturing cudaStreamIsCapturing
#define gpuStreamCaptureStatus cudaStreamCaptureStatus
#define gpuStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define gpuStreamCaptureStatusActive cudaStreamCaptureStatusActive
#define gpuGraphInstantiate(exec, graph) cudaGraphInstantiate(exec, graph, 0)
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphExecDestroy cudaGraphExecDestroy
#define gpuGraphDestroy cudaGraphDestroy
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDefault cudaEventDefault
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#endif

// Loading compiled device code and launching from it. CUDA's runtime "library" API needs no
// libcuda at link time (this library links the static runtime only); HIP's module API is the
// counterpart there.
namespace gpu {
#if defined(IRIS_PLATFORM_HIP)
using Library = hipModule_t;
using Kernel = hipFunction_t;
inline gpuError_t library_load(Library* lib, const void* image) { return hipModuleLoadData(lib, image); }
inline gpuError_t library_unload(Library lib) { return hipModuleUnload(lib); }
inline gpuError_t library_get_kernel(Kernel* k, Library lib, const char* name) {
    return hipModuleGetFunction(k, lib, name);
}
// hipFuncSetAttribute / hipFuncGetAttributes take a host stub of a kernel compiled into the
// program, not a hipFunction_t from a loaded module: module kernels use hipFuncGetAttribute. AMD
// has no opt-in for dynamic shared memory (LDS): every block may use the device's whole LDS, so
// "raising the limit" is checking the request against it.
inline gpuError_t kernel_set_max_dynamic_smem(Kernel k, int bytes) {
    int static_bytes = 0, device = 0, limit = 0;
    gpuError_t e = hipFuncGetAttribute(&static_bytes, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k);
    if (e == hipSuccess) e = hipGetDevice(&device);
    if (e == hipSuccess) e = hipDeviceGetAttribute(&limit, hipDeviceAttributeMaxSharedMemoryPerBlock, device);
    if (e != hipSuccess) return e;
    return static_cast<long>(bytes) + static_bytes <= limit ? hipSuccess : hipErrorInvalidValue;
}
/// LDS is not carved out of L1 on AMD: nothing to ask for.
inline gpuError_t kernel_prefer_shared_memory(Kernel) { return hipSuccess; }
inline gpuError_t kernel_max_active_blocks(Kernel k, int threads, size_t smem, int* blocks) {
    return hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k, threads, smem);
}
inline gpuError_t kernel_attributes(Kernel k, int* regs, int* smem, int* local, int* max_threads) {
    gpuError_t e = hipFuncGetAttribute(regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, k);
    if (e == hipSuccess) e = hipFuncGetAttribute(smem, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k);
    if (e == hipSuccess) e = hipFuncGetAttribute(local, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k);
    if (e == hipSuccess) e = hipFuncGetAttribute(max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k);
    return e;
}
inline gpuError_t launch_kernel(Kernel k, dim3 grid, dim3 block, void** args, size_t smem,
                                gpuStream_t stream) {
    return hipModuleLaunchKernel(k, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                 static_cast<unsigned>(smem), stream, args, nullptr);
}
/// HIP has no programmatic dependent launch: the kernel waits for the one ahead, as always.
inline gpuError_t launch_kernel_overlapping(Kernel k, dim3 grid, dim3 block, void** args, size_t smem,
                                            gpuStream_t stream) {
    return launch_kernel(k, grid, block, args, smem, stream);
}
/// Largest shared memory (LDS) one block may have: CUDA's opt-in limit; on AMD every block may
/// use the whole LDS, which HIP reports as sharedMemPerBlock.
inline uint64_t shared_memory_per_block_optin(const gpuDeviceProp& p) { return p.sharedMemPerBlock; }
/// The heap's allocation (see iris_malloc_heap in memory.cpp for the choice).
inline gpuError_t malloc_fine_grained(void** p, size_t bytes) {
    return hipExtMallocWithFlags(p, bytes, hipDeviceMallocFinegrained);
}
#define IRIS_MALLOC_FINE_GRAINED_NAME "hipExtMallocWithFlags(&p, bytes, hipDeviceMallocFinegrained)"
#define IRIS_LIBRARY_LOAD_NAME "hipModuleLoadData"
#define IRIS_LIBRARY_GET_NAME "hipModuleGetFunction"
#define IRIS_LAUNCH_NAME "hipModuleLaunchKernel"
#define IRIS_LAUNCH_OVERLAPPING_NAME "hipModuleLaunchKernel"
#else
using Library = cudaLibrary_t;
using Kernel = cudaKernel_t;
inline gpuError_t library_load(Library* lib, const void* image) {
    return cudaLibraryLoadData(lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
}
inline gpuError_t library_unload(Library lib) { return cudaLibraryUnload(lib); }
inline gpuError_t library_get_kernel(Kernel* k, Library lib, const char* name) {
    return cudaLibraryGetKernel(k, lib, name);
}
// A cudaKernel_t may stand wherever the runtime takes a kernel's address.
inline gpuError_t kernel_set_max_dynamic_smem(Kernel k, int bytes) {
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(k),
                                cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
inline gpuError_t kernel_prefer_shared_memory(Kernel k) {
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(k), cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared);
}
inline gpuError_t kernel_max_active_blocks(Kernel k, int threads, size_t smem, int* blocks) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(k), threads, smem);
}
inline gpuError_t kernel_attributes(Kernel k, int* regs, int* smem, int* local, int* max_threads) {
    cudaFuncAttributes a{};
    gpuError_t e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k));
    *regs = a.numRegs; *smem = static_cast<int>(a.sharedSizeBytes);
    *local = static_cast<int>(a.localSizeBytes); *max_threads = a.maxThreadsPerBlock;
    return e;
}
inline gpuError_t launch_kernel(Kernel k, dim3 grid, dim3 block, void** args, size_t smem,
                                gpuStream_t stream) {
    return cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, args, smem, stream);
}
/// launch_kernel with programmatic stream serialization (IRIS_LAUNCH_OVERLAP_PREVIOUS).
inline gpuError_t launch_kernel_overlapping(Kernel k, dim3 grid, dim3 block, void** args, size_t smem,
                                            gpuStream_t stream) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(k), args);
}
inline uint64_t shared_memory_per_block_optin(const gpuDeviceProp& p) { return p.sharedMemPerBlockOptin; }
/// CUDA has one kind of device memory: system-scope fences cover peer stores (memory.cpp).
inline gpuError_t malloc_fine_grained(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
#define IRIS_MALLOC_FINE_GRAINED_NAME "cudaMalloc(&p, bytes)"
/// A driver API function (e.g. cuTensorMapEncodeTiled) as of CUDA version cuda_version, fetched
/// through the runtime, so that libiris never links libcuda; *found says whether the driver has
/// it. CUDA only: HIP callers report IRIS_ERROR_UNSUPPORTED instead.
inline gpuError_t driver_entry_point(const char* symbol, void** fn, unsigned cuda_version, bool* found) {
    cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
    gpuError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, cuda_version, cudaEnableDefault, &query);
    *found = e == cudaSuccess && query == cudaDriverEntryPointSuccess && *fn != nullptr;
    return e;
}
#define IRIS_DRIVER_ENTRY_POINT_NAME "cudaGetDriverEntryPointByVersion"
#define IRIS_LIBRARY_LOAD_NAME "cudaLibraryLoadData"
#define IRIS_LIBRARY_GET_NAME "cudaLibraryGetKernel"
#define IRIS_LAUNCH_NAME "cudaLaunchKernel"
#define IRIS_LAUNCH_OVERLAPPING_NAME "cudaLaunchKernelExC"
#endif
}  // namespace gpu

#endif  // IRIS_GPU_RUNTIME_H
