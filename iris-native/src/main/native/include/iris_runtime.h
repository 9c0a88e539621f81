/*
 * iris_runtime.h: the C API that Java (through JavaCPP) calls on the host side.
 *
 * Conventions, as in NCCL's public header:
 *  - every function returns an iris_status; outputs come back through pointer arguments;
 *  - on failure, iris_last_error() returns a one-line message for the calling thread that
 *    names the failing GPU runtime call and its error ("cudaMalloc(...) failed: out of memory
 *    (cudaErrorMemoryAllocation)"), and iris_last_gpu_error() the numeric runtime error;
 *  - device memory is addressed by uint64_t device addresses (unified virtual addressing), so
 *    offsets and translation are plain integer arithmetic on the Java side;
 *  - streams, events and modules are opaque handles; a NULL stream is the legacy default stream.
 * Nothing here ever calls exit() or abort(): this code runs inside a JVM.
 */
#ifndef IRIS_RUNTIME_H
#define IRIS_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum iris_status {
    IRIS_SUCCESS = 0,
    IRIS_ERROR_GPU = 1,              /* a CUDA/HIP runtime call failed */
    IRIS_ERROR_INVALID_ARGUMENT = 2, /* an argument was out of range or NULL */
    IRIS_ERROR_NOT_FOUND = 3,        /* e.g. no kernel of that name in the module */
    IRIS_ERROR_NOT_READY = 4,        /* a query found work still pending (not a failure) */
    IRIS_ERROR_UNSUPPORTED = 5       /* not available on this platform (e.g. TMA descriptors on HIP) */
} iris_status;

/* Bytes in an exported IPC memory handle (cudaIpcMemHandle_t / hipIpcMemHandle_t). */
#define IRIS_IPC_HANDLE_BYTES 64

typedef struct iris_stream_s* iris_stream;
typedef struct iris_event_s* iris_event;
typedef struct iris_module_s* iris_module;
typedef struct iris_function_s* iris_function;
typedef struct iris_graph_s* iris_graph;
typedef struct iris_rtc_program_s* iris_rtc_program;

/* Device properties that callers size work from. */
typedef struct iris_device_properties {
    char name[256];
    int major;
    int minor;
    int multiprocessor_count;
    int warp_size;
    int max_threads_per_block;
    int pci_domain_id;
    int pci_bus_id;
    int pci_device_id;
    uint64_t total_global_memory;
    uint64_t l2_cache_bytes;
    uint64_t shared_memory_per_block_optin;
} iris_device_properties;

/* ---- errors and versions ------------------------------------------------------------- */

/* The last failure's message on this thread; empty when none. Valid until the next call. */
const char* iris_last_error(void);
/* The last failure's GPU runtime error code on this thread (0 when the failure was not one). */
int iris_last_gpu_error(void);
/* "CUDA" or "HIP": which runtime this library was built against. */
const char* iris_platform_name(void);
/* Runtime and driver versions as the GPU runtime encodes them (CUDA: 1000 * major + 10 * minor,
 * e.g. 13000; HIP: 10000000 * major + 100000 * minor + patch, e.g. 50221153). */
int iris_runtime_version(int* runtime_version, int* driver_version);

/* ---- devices -------------------------------------------------------------------------- */

/* Number of visible GPUs. Fails (with the runtime's reason) where no driver is present. */
int iris_device_count(int* count);
int iris_device_set(int device);
int iris_device_get(int* device);
int iris_device_properties_get(int device, iris_device_properties* properties);
int iris_device_can_access_peer(int device, int peer_device, int* can_access);
/* *native = 1 where atomics from device on peer_device's memory are single-copy atomic in hardware
 * (NVLink), 0 where they are not (PCIe): the heap's flags and packets need them. */
int iris_device_peer_native_atomics(int device, int peer_device, int* native);
/* Enables access from the current device to peer_device; already enabled is not an error. */
int iris_device_enable_peer_access(int peer_device);
int iris_device_synchronize(void);
int iris_mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes);

/* ---- memory --------------------------------------------------------------------------- */

int iris_malloc(uint64_t* device_address, uint64_t bytes);
int iris_free(uint64_t device_address);

/* Kinds of symmetric-heap memory (iris_malloc_heap's flags). */
#define IRIS_HEAP_DEFAULT 0      /* plain device memory (cudaMalloc / coarse-grained hipMalloc) */
#define IRIS_HEAP_FINE_GRAINED 1 /* AMD: hipExtMallocWithFlags(hipDeviceMallocFinegrained);
                                    CUDA: the same as IRIS_HEAP_DEFAULT */
/* Allocates a symmetric heap (freed with iris_free). Why the default is plain device memory on
 * AMD too, and what makes peers' stores visible, is described in memory.cpp and arch.cuh. */
int iris_malloc_heap(uint64_t* device_address, uint64_t bytes, int flags);
/* Page-locked host memory mapped into the device address space: with unified addressing the
 * same address works on host and device, so small status words can be read without a copy. */
int iris_host_alloc_mapped(void** host_address, uint64_t bytes);
int iris_host_free(void* host_address);

/* ---- IPC: share device allocations between processes ----------------------------------- */

/* Writes IRIS_IPC_HANDLE_BYTES bytes describing the allocation that starts at device_address. */
int iris_ipc_export(uint64_t device_address, uint8_t* handle);
/* Maps a peer's exported allocation into this process (peer access enabled lazily). */
int iris_ipc_open(const uint8_t* handle, uint64_t* device_address);
int iris_ipc_close(uint64_t device_address);

/* ---- copies and memset (stream-ordered; host memory may be pageable) ------------------- */

int iris_memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, iris_stream stream);
int iris_memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, iris_stream stream);
int iris_memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, iris_stream stream);
/* Copy-engine copy between devices (the baseline that SM-driven remote access is judged by). */
int iris_memcpy_peer(uint64_t dst, int dst_device, uint64_t src, int src_device, uint64_t bytes,
                     iris_stream stream);
int iris_memset_d8(uint64_t dst, uint8_t value, uint64_t bytes, iris_stream stream);

/* ---- streams and events ---------------------------------------------------------------- */

int iris_stream_create(iris_stream* stream, int non_blocking);
int iris_stream_destroy(iris_stream stream);
int iris_stream_synchronize(iris_stream stream);
/* IRIS_SUCCESS when all work is done, IRIS_ERROR_NOT_READY while some is pending. */
int iris_stream_query(iris_stream stream);
int iris_stream_wait_event(iris_stream stream, iris_event event);
/* Writes the 32-bit value at a 4-byte aligned device address in the stream's order, after the
 * work ahead of it is complete and visible, without an SM (cuStreamWriteValue32): a flag that a
 * kernel on another stream may wait for even while its CTAs hold every SM. Capturable. */
int iris_stream_write_value32(iris_stream stream, uint64_t address, uint32_t value);

int iris_event_create(iris_event* event, int enable_timing);
int iris_event_destroy(iris_event event);
int iris_event_record(iris_event event, iris_stream stream);
int iris_event_synchronize(iris_event event);
int iris_event_elapsed_ms(float* milliseconds, iris_event start, iris_event end);

/* ---- CUDA graphs: capture stream work once, replay it cheaply --------------------------- */

int iris_stream_begin_capture(iris_stream stream);
/* *capturing = 1 while the stream is capturing into a graph (the capture is still valid), else 0. */
int iris_stream_is_capturing(iris_stream stream, int* capturing);
/* Ends the capture and instantiates it; the graph is ready to launch. */
int iris_stream_end_capture(iris_stream stream, iris_graph* graph);
int iris_graph_launch(iris_graph graph, iris_stream stream);
int iris_graph_destroy(iris_graph graph);

/* ---- modules and kernels ---------------------------------------------------------------- */

/* Loads compiled device code: CUDA a fatbin, cubin or PTX image; HIP a code object or a code-object
 * bundle (.hsaco). The bytes are copied; the caller may free them. */
int iris_module_load_data(iris_module* module, const void* image, uint64_t image_bytes);
int iris_module_unload(iris_module module);
/* Looks up an extern "C" kernel and loads its code into the current context (CUDA 12.4+ drivers), so
 * that its first launch does not wait for kernels already running; IRIS_ERROR_NOT_FOUND when the
 * module has none of that name. */
int iris_module_get_function(iris_function* function, iris_module module, const char* name);
/* Raises the kernel's dynamic shared memory limit (needed above 48 KiB). */
int iris_function_set_max_dynamic_shared_memory(iris_function function, int bytes);
/* Asks for the largest shared memory carveout of an SM for this kernel, so that as many of its
 * blocks fit an SM as its shared memory allows (CUDA; a no-op on HIP, whose LDS is not carved out
 * of L1). */
int iris_function_prefer_shared_memory(iris_function function);
/* How many blocks of `threads` threads and `dynamic_shared_bytes` of dynamic shared memory of this
 * kernel one SM runs at once, into *blocks. */
int iris_function_max_active_blocks(iris_function function, int threads, int dynamic_shared_bytes, int* blocks);
/* Registers per thread, static shared memory bytes, local (spill) bytes per thread, and the
 * largest block the kernel can be launched with. */
int iris_function_attributes(iris_function function, int* registers, int* static_shared_bytes,
                             int* local_bytes, int* max_threads_per_block);

/* The kernel's parameters as its compiler laid them out: *count parameters; for the first
 * min(*count, capacity) of them offsets[i] (bytes into the parameter space) and sizes[i] (bytes).
 * offsets and sizes may be NULL when capacity is 0 (to ask for the count). CUDA:
 * cuKernelGetParamInfo, reached through the runtime's driver entry-point query; a driver older
 * than CUDA 12.4 gives IRIS_ERROR_UNSUPPORTED, as does HIP (no such query). */
int iris_function_param_info(iris_function function, uint32_t* count, uint32_t* offsets, uint32_t* sizes,
                             uint32_t capacity);

/* Launches function. The kernel's arguments are packed in arg_buffer: argument i starts at
 * arg_offsets[i] and is passed by value (its size is whatever the kernel declares). */
int iris_launch(iris_function function, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                uint32_t block_x, uint32_t block_y, uint32_t block_z, uint32_t dynamic_shared_bytes,
                iris_stream stream, const void* arg_buffer, const uint32_t* arg_offsets,
                uint32_t arg_count);

/* Flag of iris_launch_ex: the kernel may start before the kernel ahead of it on the stream has
 * finished, as soon as every block of that kernel has executed griddepcontrol.launch_dependents
 * or exited (CUDA programmatic dependent launch; a captured graph keeps it as a programmatic
 * edge). Such a kernel must execute griddepcontrol.wait, which returns once the kernel ahead has
 * finished and its writes are visible, before it touches memory that kernel writes, unless it
 * reads it only after a flag that kernel raises for it with release (the MoE expert GEMM fed by
 * the dispatch's copy); and before it finishes. HIP: ignored. */
#define IRIS_LAUNCH_OVERLAP_PREVIOUS 1

/* iris_launch with IRIS_LAUNCH_* flags; flags 0 is iris_launch. */
int iris_launch_ex(iris_function function, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                   uint32_t block_x, uint32_t block_y, uint32_t block_z, uint32_t dynamic_shared_bytes,
                   iris_stream stream, const void* arg_buffer, const uint32_t* arg_offsets,
                   uint32_t arg_count, uint32_t flags);

/* ---- TMA descriptors (NVIDIA sm_90: the tensor memory accelerator) ---------------------- */

/* Bytes of a tensor map (CUtensorMap); kernels take it by value as a 64-byte aligned
 * __grid_constant__ parameter. */
#define IRIS_TENSOR_MAP_BYTES 128
/* Element types of iris_tensor_map_2d: the codes of iris_dtype (iris/abi/core.h), Java's DType. */
#define IRIS_TMA_F32 0
#define IRIS_TMA_F16 1
#define IRIS_TMA_BF16 2

/* Encodes a tiled 2-D tensor map over a row-major matrix at device address base: outer_elements
 * rows of inner_elements contiguous elements, rows outer_stride_bytes apart; each copy moves a box
 * of box_outer rows x box_inner elements, swizzled in shared memory by swizzle_bytes (0, 32, 64 or
 * 128). No interleave, element strides 1, L2 promotion 256 bytes, out-of-bounds elements read as
 * zeros. Writes IRIS_TENSOR_MAP_BYTES bytes to descriptor. Host-only: nothing is enqueued or
 * allocated, so it may be called during stream capture. The driver encodes for the calling
 * thread's context; on a thread without one, the current device's primary context is initialized
 * first (cudaSetDevice). Requirements (else IRIS_ERROR_INVALID_ARGUMENT naming the argument):
 * base non-zero and 16-byte aligned; 1 <=
 * inner, outer <= 2^32; outer_stride_bytes a multiple of 16, at least a row's bytes, below 2^40;
 * 1 <= box_inner, box_outer <= 256; box_inner * element bytes a multiple of 16 and, when swizzled,
 * at most swizzle_bytes. CUDA: cuTensorMapEncodeTiled, reached through the runtime's driver
 * entry-point query (libiris does not link libcuda). HIP: IRIS_ERROR_UNSUPPORTED. */
int iris_tensor_map_2d(uint8_t* descriptor, int element_type, uint64_t base, uint64_t inner_elements,
                       uint64_t outer_elements, uint64_t outer_stride_bytes, uint32_t box_inner,
                       uint32_t box_outer, int swizzle_bytes);

/* ---- runtime compilation (CUDA: NVRTC; HIP: IRIS_ERROR_UNSUPPORTED) ----------------------- */

/* Loads the runtime compiler once per process and writes its version (1000 * major + 10 * minor,
 * e.g. 13010). NVRTC is opened with dlopen, never linked, so libiris loads where it is absent; the
 * first library that opens wins, tried in this order: library_path (when neither NULL nor empty:
 * the caller's explicit setting, and then the only one tried), libnvrtc.so.13 and
 * libnvrtc.alt.so.13 on the loader's search path, the toolkit's lib64 and
 * targets/x86_64-linux/lib under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda and /usr/local/cuda-13.*,
 * then the nvidia wheels' nvidia/cu13/lib and nvidia/cuda_nvrtc/lib in the site-packages of
 * $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local and /usr. NVRTC's builtins library
 * (libnvrtc-builtins.so.<major>.<minor>) is preloaded from the folder NVRTC came from, so that
 * folder need not be on the search path. When nothing loads, IRIS_ERROR_NOT_FOUND with a message
 * listing every path tried and why each failed. A loaded compiler stays loaded; a later
 * library_path is then ignored. */
int iris_rtc_version(const char* library_path, int* version);

/* Where the loaded compiler came from (after a successful iris_rtc_version): its file, copied to
 * path as a NUL-terminated string of at most capacity bytes. */
int iris_rtc_library(char* path, uint64_t capacity);

/* Compiles one CUDA C++ translation unit. name is the source's file name, as compile messages
 * print it ("allreduce.cu(12): error: ..."); options are NVRTC's (e.g. "-arch=sm_90a",
 * "-std=c++17", "-I/path"). Besides the caller's include paths, NVRTC sees <cstdint>, <cstddef>,
 * <type_traits>, <stdint.h> and <stddef.h> as libcu++'s <cuda/std/...> headers, with their names
 * in std, because NVRTC has no C++ standard library (libcu++ itself must be on an include path).
 * Returns IRIS_SUCCESS when the compiler ran, whatever it found in the source: *compiled is 1
 * when the code compiled, 0 on errors, and the log (iris_rtc_program_log) says why. *program is
 * freed with iris_rtc_program_destroy in both cases. The compiler must be loaded
 * (iris_rtc_version). No GPU or driver is needed. */
int iris_rtc_compile(iris_rtc_program* program, const char* source, const char* name,
                     const char* const* options, uint32_t option_count, int* compiled);
/* The compiler's messages, NUL-terminated: *size bytes (the NUL included) are needed; at most
 * capacity are copied to log (which may be NULL when capacity is 0, to ask for the size). */
int iris_rtc_program_log(iris_rtc_program program, char* log, uint64_t capacity, uint64_t* size);
/* The compiled machine code (a cubin for the -arch=sm_XX it was compiled for), as
 * iris_rtc_program_log: *size bytes are needed, at most capacity are copied. IRIS_ERROR_INVALID_ARGUMENT
 * when the program did not compile. */
int iris_rtc_program_code(iris_rtc_program program, void* code, uint64_t capacity, uint64_t* size);
int iris_rtc_program_destroy(iris_rtc_program program);

#ifdef __cplusplus
}
#endif

#endif /* IRIS_RUNTIME_H */
