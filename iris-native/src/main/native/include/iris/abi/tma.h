/* iris/abi/tma.h: a TMA descriptor (CUtensorMap) inside a kernel's argument struct.
 *
 * The host encodes it (iris_tensor_map_2d; Java: TensorMap) and copies its bytes into the struct;
 * the kernel reads it from the parameter space, which TMA requires to be 64-byte aligned: the
 * member's alignment makes every struct that holds one 64-byte aligned, and the offsets the
 * compilers and the generated Java classes agree on respect it. */
#ifndef IRIS_ABI_TMA_H
#define IRIS_ABI_TMA_H

#include <stdint.h>

/* Alignment of a member in an argument struct: C++ (nvcc, hipcc, the JNI build) and C. */
#ifdef __cplusplus
#define IRIS_ABI_ALIGNED(n) alignas(n)
#else
#define IRIS_ABI_ALIGNED(n) _Alignas(n)
#endif

/* Bytes of a descriptor: sizeof(CUtensorMap), as IRIS_TENSOR_MAP_BYTES of iris_runtime.h. */
#define IRIS_TMA_DESCRIPTOR_BYTES 128

/* Opaque to everyone but the TMA unit. */
typedef struct iris_tma_descriptor {
    IRIS_ABI_ALIGNED(64) uint64_t opaque[IRIS_TMA_DESCRIPTOR_BYTES / 8];
} iris_tma_descriptor;

#ifdef __cplusplus
static_assert(sizeof(iris_tma_descriptor) == IRIS_TMA_DESCRIPTOR_BYTES && alignof(iris_tma_descriptor) == 64,
              "iris_tma_descriptor: 128 bytes, 64-byte aligned");
#endif

#endif
