// gemm_tiles.cuh: the plain GEMM's tiles, one line each, read by gemm.cu (a kernel per tile and
// variant) and by the host test that holds the Java side's tiles (dev.irisjvm.kernels.gemm.GemmTile)
// and its plans against them (src/test/native/gemm_schedule.cu).
//
// IRIS_GEMM_TILES(X, ...) calls, for each tile, X(part, threads, consumers, tile_n, split_k,
// cluster_m, cluster_n, ...): the kernels are iris_gemm_<part><variant>; consumers, tile_n and
// split_k as Config takes them; a block of cluster_m x cluster_n tiles per cluster.
// IRIS_GEMM_SWAPPED_TILES(X, ...) calls X(part, rows, cluster_n, ...) for each swapped tile: C^T
// = B A^T in tiles of 64 columns of C by `rows` of its rows (Config's TileN), in clusters of
// cluster_n of them, one above another (swapped.cuh). The trailing arguments pass through.
#pragma once

#include "iris/abi/gemm.h"

#define IRIS_GEMM_TILES(X, ...)                                                                        \
    X(,                 IRIS_GEMM_THREADS,       2, IRIS_GEMM_TILE_N,        false, 1, 1, __VA_ARGS__) \
    X(mid_,             IRIS_GEMM_THREADS,       2, IRIS_GEMM_MID_TILE_N,    false, 1, 1, __VA_ARGS__) \
    X(narrow_,          IRIS_GEMM_THREADS,       2, IRIS_GEMM_NARROW_TILE_N, false, 1, 1, __VA_ARGS__) \
    X(short_,           IRIS_GEMM_SHORT_THREADS, 1, IRIS_GEMM_SHORT_TILE_N,  false, 1, 1, __VA_ARGS__) \
    X(short_thin_,      IRIS_GEMM_THREADS,       2, IRIS_GEMM_THIN_TILE_N,   true,  1, 1, __VA_ARGS__) \
    X(pair_,            IRIS_GEMM_THREADS,       2, IRIS_GEMM_TILE_N,        false, 2, 1, __VA_ARGS__) \
    X(mid_pair_,        IRIS_GEMM_THREADS,       2, IRIS_GEMM_MID_TILE_N,    false, 2, 1, __VA_ARGS__) \
    X(narrow_pair_,     IRIS_GEMM_THREADS,       2, IRIS_GEMM_NARROW_TILE_N, false, 2, 1, __VA_ARGS__) \
    X(short_pair_,      IRIS_GEMM_SHORT_THREADS, 1, IRIS_GEMM_SHORT_TILE_N,  false, 2, 1, __VA_ARGS__) \
    X(short_thin_pair_, IRIS_GEMM_THREADS,       2, IRIS_GEMM_THIN_TILE_N,   true,  2, 1, __VA_ARGS__) \
    X(short_thin_1x2_,  IRIS_GEMM_THREADS,       2, IRIS_GEMM_THIN_TILE_N,   true,  1, 2, __VA_ARGS__) \
    X(short_thin_2x2_,  IRIS_GEMM_THREADS,       2, IRIS_GEMM_THIN_TILE_N,   true,  2, 2, __VA_ARGS__) \
    X(short_thin_4x1_,  IRIS_GEMM_THREADS,       2, IRIS_GEMM_THIN_TILE_N,   true,  4, 1, __VA_ARGS__) \
    X(short_thin_1x4_,  IRIS_GEMM_THREADS,       2, IRIS_GEMM_THIN_TILE_N,   true,  1, 4, __VA_ARGS__)

#define IRIS_GEMM_SWAPPED_TILES(X, ...)     \
    X(swap8_,      8,  1, __VA_ARGS__)      \
    X(swap16_,     16, 1, __VA_ARGS__)      \
    X(swap32_,     32, 1, __VA_ARGS__)      \
    X(swap48_,     48, 1, __VA_ARGS__)      \
    X(swap32_1x2_, 32, 2, __VA_ARGS__)      \
    X(swap16_1x2_, 16, 2, __VA_ARGS__)
