package dev.irisjvm.kernels;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Set;

/**
 * The operands' tensor maps of the GEMM mainloop (iris/gemm/config.cuh), for {@link Gemm}, the kernels
 * that reuse its mainloop (the fused ones) and users' kernels on it ({@link
 * dev.irisjvm.kernels.gemm.GemmKernelArgs}): one place for the boxes the mainloop's TMA loads expect.
 *
 * <pre>{@code
 * TensorMap a = MainloopMaps.operandMapA(maps, DType.BF16, aAddress, m, k, k * 2L);
 * }</pre>
 */
public final class MainloopMaps {
    /** Box of an MK A's map: 64 elements of K x 128 rows of M. */
    static final int A_BOX_INNER = Gemm.TILE_K;
    static final int A_BOX_OUTER = Gemm.TILE_M;
    /** Box of a KM A's map: 64 elements of M x 64 rows of K (two boxes cover a tile's 128 rows, one per consumer). */
    static final int A_KM_BOX_INNER = KernelAbi.IRIS_GEMM_KN_BOX_COLS;
    static final int A_KM_BOX_OUTER = Gemm.TILE_K;
    /** Box of an NK B's map: 64 elements of K x a tile's N rows. */
    static final int B_NK_BOX_INNER = Gemm.TILE_K;
    /** Box of a KN B's map: 64 elements of N x 64 rows of K (four boxes cover a tile's 256 columns, two a narrow tile's). */
    static final int B_KN_BOX_INNER = KernelAbi.IRIS_GEMM_KN_BOX_COLS;
    static final int B_KN_BOX_OUTER = Gemm.TILE_K;

    /** Box of C's map for the plain GEMM's TMA stores: a consumer's rows x 128 bytes of columns (iris/abi/gemm.h). */
    static final int C_BOX_ROWS = KernelAbi.IRIS_GEMM_STORE_BOX_ROWS;
    static final int C_BOX_BYTES = KernelAbi.IRIS_GEMM_SWIZZLE_BYTES;

    /** The rows of C a swapped kernel's tile takes (iris/gemm/swapped.cuh), whose product's N x K B is A. */
    private static final Set<Integer> SWAPPED_ROWS = Set.of(8, 16, 32, 48);

    private MainloopMaps() {}

    /**
     * A's tensor map for the GEMM mainloop (iris/gemm/config.cuh), from {@code maps}: an M x K matrix
     * ({@code rows} x {@code cols}), boxes of 128 rows x 64 elements. Kernels that reuse the mainloop
     * (the fused ones) build their maps here too.
     */
    public static TensorMap operandMapA(TensorMapCache maps, DType type, long address, long rows, long cols,
                                        long rowStrideBytes) {
        return operandMapA(maps, type, address, GemmALayout.MK, rows, cols, rowStrideBytes);
    }

    /**
     * A's tensor map for a mainloop whose Config has A stored as {@code layout} (iris/gemm/config.cuh
     * ALayout): for MK an M x K matrix with boxes of 128 rows x 64 elements, for KM a K x M matrix
     * ({@code rows} K, {@code cols} M) with boxes of 64 rows x 64 elements, as a KN B's.
     */
    public static TensorMap operandMapA(TensorMapCache maps, DType type, long address, GemmALayout layout, long rows,
                                        long cols, long rowStrideBytes) {
        return operandMapA(maps, type, address, layout, rows, cols, rowStrideBytes, A_BOX_OUTER);
    }

    /** Whether {@link #operandMapA(TensorMapCache, DType, long, GemmALayout, long, long, long, int)} takes {@code tileM}. */
    public static boolean takesTileM(int tileM) {
        return tileM == Gemm.TILE_M || tileM == Gemm.SHORT_TILE_M || tileM == Gemm.SHORT_TILE_M / 2 || tileM == Gemm.SHORT_TILE_M / 4;
    }

    /**
     * A's tensor map for a mainloop of tiles of {@code tileM} rows ({@link Gemm#TILE_M}, or {@link
     * Gemm#SHORT_TILE_M} for a Config of one consumer, or a half or a quarter of the latter for each
     * CTA of a cluster that shares A): an MK box holds {@code tileM} rows; a KM box 64 K rows, and for
     * a CTA's share of a 64-row tile's one box, that share of them.
     */
    public static TensorMap operandMapA(TensorMapCache maps, DType type, long address, GemmALayout layout, long rows,
                                        long cols, long rowStrideBytes, int tileM) {
        if (!takesTileM(tileM)) {
            throw new IllegalArgumentException("tile height " + tileM + ": the mainloop takes " + Gemm.TILE_M + ", " + Gemm.SHORT_TILE_M
                    + ", or a half or a quarter of " + Gemm.SHORT_TILE_M + " for a CTA of a cluster that shares A");
        }
        boolean mk = layout == GemmALayout.MK;
        return maps.tiled2d(type, address, cols, rows, rowStrideBytes, mk ? A_BOX_INNER : A_KM_BOX_INNER,
                mk ? tileM : knBoxRows(tileM));
    }

    /**
     * B's tensor map for the GEMM mainloop, from {@code maps}: for NK an N x K matrix with boxes of 256
     * rows x 64 elements, for KN a K x N matrix with boxes of 64 rows x 64 elements.
     */
    public static TensorMap operandMapB(TensorMapCache maps, DType type, long address, GemmLayout layout, long rows,
                                        long cols, long rowStrideBytes) {
        return operandMapB(maps, type, address, layout, rows, cols, rowStrideBytes, Gemm.TILE_N);
    }

    /** Whether {@link #operandMapB(TensorMapCache, DType, long, GemmLayout, long, long, long, int)} takes {@code tileN}. */
    public static boolean takesTileN(int tileN) {
        return tileN == Gemm.TILE_N || tileN == Gemm.MID_TILE_N || tileN == Gemm.NARROW_TILE_N || tileN == Gemm.THIN_TILE_N
                || tileN == Gemm.MID_TILE_N / 2 || tileN == Gemm.THIN_TILE_N / 2 || tileN == Gemm.THIN_TILE_N / 4
                || SWAPPED_ROWS.contains(tileN);
    }

    /**
     * B's tensor map for a mainloop with tiles of {@code tileN} columns ({@link Gemm#TILE_N}, {@link
     * Gemm#MID_TILE_N}, {@link Gemm#NARROW_TILE_N} or {@link Gemm#THIN_TILE_N}, each CTA's share of
     * one where a cluster shares B, or 8 to 48 for a swapped kernel, whose B is an M x K A): an NK box
     * holds {@code tileN} rows; a KN box 64 K rows, and for a CTA's share of a 64-column tile's one
     * box, that share of them.
     */
    public static TensorMap operandMapB(TensorMapCache maps, DType type, long address, GemmLayout layout, long rows,
                                        long cols, long rowStrideBytes, int tileN) {
        if (!takesTileN(tileN)) {
            throw new IllegalArgumentException("tile width " + tileN + ": the mainloop takes " + Gemm.TILE_N + ", "
                    + Gemm.MID_TILE_N + ", " + Gemm.NARROW_TILE_N + ", " + Gemm.THIN_TILE_N + ", half of " + Gemm.MID_TILE_N
                    + ", a half or a quarter of " + Gemm.THIN_TILE_N + " for a CTA of a cluster that shares B, or "
                    + SWAPPED_ROWS.stream().sorted().toList() + " for a swapped kernel");
        }
        boolean nk = layout == GemmLayout.NK;
        return maps.tiled2d(type, address, cols, rows, rowStrideBytes, nk ? B_NK_BOX_INNER : B_KN_BOX_INNER,
                nk ? tileN : knBoxRows(tileN));
    }

    /**
     * C's tensor map for the plain GEMM's stores ({@code iris_gemm_args}' {@code c_map}): an M x N
     * matrix of {@code type} ({@code rows} x {@code cols}), boxes of {@value #C_BOX_ROWS} rows x 128
     * bytes of columns, 128-byte swizzle; the epilogue stages its chunks in that swizzle.
     *
     * <pre>{@code
     * TensorMap c = MainloopMaps.outputMapC(maps, DType.BF16, cAddress, m, n, ldc * 2L);
     * }</pre>
     */
    public static TensorMap outputMapC(TensorMapCache maps, DType type, long address, long rows, long cols, long rowStrideBytes) {
        return maps.tiled2d(type, address, cols, rows, rowStrideBytes, C_BOX_BYTES / type.byteSize(), C_BOX_ROWS);
    }

    /**
     * K rows of a box of an operand stored K rows first (a KN B, a KM A) for tiles of {@code extent}
     * columns of B (rows of A): 64, or where a CTA of a cluster loads fewer than one box holds (32 or
     * 16 of a 64 x 64 tile), the same share of the box's rows.
     */
    static int knBoxRows(int extent) {
        return extent < B_KN_BOX_INNER ? B_KN_BOX_OUTER * extent / B_KN_BOX_INNER : B_KN_BOX_OUTER;
    }
}
