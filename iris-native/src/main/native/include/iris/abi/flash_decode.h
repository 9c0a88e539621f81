/* iris/abi/flash_decode.h: the interface of distributed flash-decode (iris-kernels, flash_decode.cu;
 * Java: dev.irisjvm.kernels.attention.FlashDecode). One declaration of the launch constants, the
 * partials' layout, the wait site and the argument struct its four kernels take as their one
 * __grid_constant__ parameter; the JavaCPP build generates the Java side from it. */
#ifndef IRIS_ABI_FLASH_DECODE_H
#define IRIS_ABI_FLASH_DECODE_H

#include "iris/abi/ctx.h"

/* Threads of every block of the four kernels; none takes dynamic shared memory. */
#define IRIS_FLASH_DECODE_THREADS 128
/* Blocks of the fused and partial kernels resident on one SM of an H200 (at most 96 registers per
 * thread, under 44 KiB of shared memory each): the partial kernel is bounded to it, and the host's
 * chunk length counts waves of this many blocks per SM. */
#define IRIS_FLASH_DECODE_BLOCKS_PER_SM 5
/* Most query heads per K/V head: a block keeps its group's queries and scores in shared memory. */
#define IRIS_FLASH_DECODE_MAX_GROUP 8
/* Keys per block (chunk_len): a multiple of IRIS_FLASH_DECODE_CHUNK_MULTIPLE, at most IRIS_FLASH_DECODE_MAX_CHUNK. */
#define IRIS_FLASH_DECODE_CHUNK_MULTIPLE 64
#define IRIS_FLASH_DECODE_MAX_CHUNK 1024
/* Floats of a partial after its D numerators: the chunk's max score (log2 units), its sum of
 * exponentials, and two that keep every partial 16-byte aligned for the combine's vector loads. A
 * merged entry (the merge kernel's output) has the same layout: D normalized outputs, the
 * log-sum-exp (log2 units) in the max's place, and a sum of 1. */
#define IRIS_FLASH_DECODE_PARTIAL_EXTRA 4

/* Sites a recorded error names (iris_device_status.site). */
enum iris_flash_decode_site {
    IRIS_FLASH_DECODE_SITE_ARRIVED = 9101 /* fused: the wait for every rank's partials of a (sequence, head) */
};

/* The one parameter of the four flash-decode kernels. q [B, Hq, D]; k, v [B, Hkv, len, D], this
 * rank's part of each sequence's cache; o [B, Hq, D]. Partials are [slots][B][Hkv][chunks][G][D + 4]
 * floats, chunks = ceil(len / chunk_len), G = hq / hkv. Each kernel reads the fields its name says:
 * the fused kernel all but merged, world and slot_chunks; the partial kernel q, k, v, partials, the
 * shapes and scale_log2; the merge partials, merged and the shapes; the combine partials, o, world,
 * slot_chunks and the shapes but len and chunk_len. */
typedef struct iris_flash_decode_args {
    iris_ctx ctx;       /* fused: reaches every rank's partials and counters, bounds the wait */
    /* Device addresses, untyped as in every argument struct; the element types are the comments'. */
    const void* q;      /* q, k, v and o: bf16 or f16, as the kernel's name says */
    const void* k;
    const void* v;
    void* o;
    void* partials;     /* f32. fused: the symmetric two sets of world slots; partial: its one slot
                           (written); merge: this rank's one slot (read); combine: world gathered
                           slots (read) */
    void* arrived;      /* fused: uint64_t, the symmetric two sets of [B][Hkv] arrival counters, then
                           [B][Hkv][chunks] claims on the chunks (this rank's own; see flash_decode.cu) */
    void* merged;       /* merge: f32 [B][Hkv][1][G][D + 4] (written), one entry per query head */
    uint64_t epoch;     /* fused: the call number, from 1; its parity picks the set */
    int32_t b;
    int32_t hq;
    int32_t hkv;
    int32_t len;        /* this rank's keys per sequence */
    int32_t chunk_len;
    float scale_log2;   /* softmax scale * log2(e) */
    int32_t world;      /* combine: the slots of partials */
    int32_t slot_chunks; /* combine: the chunks of each slot, [B][Hkv][slot_chunks][G][D + 4]: ceil(len /
                            chunk_len) for the partial kernel's slots, 1 for the merge's */
} iris_flash_decode_args;

#ifdef __cplusplus
static_assert(offsetof(iris_flash_decode_args, q) == 112 && offsetof(iris_flash_decode_args, epoch) == 168 &&
                  offsetof(iris_flash_decode_args, b) == 176 && offsetof(iris_flash_decode_args, world) == 200 &&
                  sizeof(iris_flash_decode_args) == 208,
              "iris_flash_decode_args: the context, then a 64-bit layout without padding");
#endif

#endif
