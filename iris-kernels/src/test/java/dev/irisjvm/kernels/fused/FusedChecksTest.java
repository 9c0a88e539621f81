package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every argument check of the fused operations, without a GPU: the message names the rank, the class, the argument and what was expected. */
class FusedChecksTest {
    private static final String AR = FusedChecks.who(1, FusedOp.ALL_REDUCE);

    private static Operand t(String name, DType d, long address, long... shape) {
        long n = 1;
        for (long s : shape) n *= s;
        return new Operand(name, d, shape, true, true, address, n * d.byteSize(), "T" + java.util.Arrays.toString(shape));
    }

    private static void rejects(String expected, Executable check) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, check);
        assertEquals(expected, e.getMessage());
    }

    private static void rejectsWith(String fragment, Executable check) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, check);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertTrue(e.getMessage().startsWith("rank "), e.getMessage());
    }

    @Test
    void whoNamesRankAndClass() {
        assertEquals("rank 1: GemmAllReduce", AR);
        assertEquals("rank 0: AllGatherGemm", FusedChecks.who(0, FusedOp.ALL_GATHER));
    }

    @Test
    void problemShapes() {
        FusedChecks.problem(AR, FusedOp.ALL_REDUCE, 300, 264, 520, 2);
        FusedChecks.problem(AR, FusedOp.ALL_SCATTER, 200, 136, 72, 2);
        FusedChecks.problem(AR, FusedOp.ALL_REDUCE, 1, 8, 8, 1);  // world 1 is accepted
        rejects("rank 1: GemmAllReduce: K_local = 100 is not a multiple of 8 (the kernels copy rows of A in 16-byte units)",
                () -> FusedChecks.problem(AR, FusedOp.ALL_REDUCE, 256, 256, 100, 2));
        rejects("rank 1: GemmAllReduce: N_local = 12 is not a multiple of 8 (tiles are stored and sent in 16-byte vectors)",
                () -> FusedChecks.problem(AR, FusedOp.ALL_SCATTER, 256, 12, 64, 2));
        rejects("rank 1: GemmAllReduce: M = 301 is not a multiple of world size 2 (the rows of C are split evenly over the ranks)",
                () -> FusedChecks.problem(AR, FusedOp.REDUCE_SCATTER, 301, 256, 64, 2));
        rejectsWith("M = 9 is not a multiple of world size 4 (the rows of A are split evenly",
                () -> FusedChecks.problem(AR, FusedOp.ALL_GATHER, 9, 256, 64, 4));
        FusedChecks.problem(AR, FusedOp.REDUCE_SCATTER, 300, 256, 64, 2);  // the kernels' whole tiles are rows()'s rule
        FusedChecks.problem(AR, FusedOp.ALL_GATHER, 128, 256, 64, 2);
        rejects("rank 1: GemmAllReduce: M, N and K_local must be >= 1, got M = 0, N = 8, K_local = 8",
                () -> FusedChecks.problem(AR, FusedOp.ALL_REDUCE, 0, 8, 8, 2));
        rejectsWith("M = 4294967296 exceeds 2^31 - 1", () -> FusedChecks.problem(AR, FusedOp.ALL_REDUCE, 1L << 32, 8, 8, 2));
        rejectsWith("world size x N_local = 4294967296 exceeds",
                () -> FusedChecks.problem(AR, FusedOp.ALL_SCATTER, 128, 1L << 30, 8, 4));
    }

    @Test
    void rowsPerRankOfTheKernelsAndOfUnfused() {
        rejects("rank 1: GemmAllReduce: M = 300 is not a multiple of 128 x world size 2 = 256 (the rows of C are split over "
                + "the ranks in blocks of whole 128-row tiles; UNFUSED, which AUTO chooses for such M, takes any multiple of "
                + "the world size)", () -> FusedChecks.rows(AR, FusedOp.REDUCE_SCATTER, FusedVariant.SPARE_WARPS, 300, 2));
        rejects("rank 1: GemmAllReduce: M = 128 is not a multiple of 128 x world size 2 = 256 (the rows of A are split over "
                + "the ranks in blocks of whole 128-row tiles; UNFUSED, which AUTO chooses for such M, takes any multiple of "
                + "the world size)", () -> FusedChecks.rows(AR, FusedOp.ALL_GATHER, FusedVariant.SPARE_WARPS, 128, 2));
        FusedChecks.rows(AR, FusedOp.ALL_GATHER, FusedVariant.UNFUSED, 2, 2);
        rejectsWith("M = 8 is not a multiple of 128 x world size 2",
                () -> FusedChecks.rows(AR, FusedOp.REDUCE_SCATTER, FusedVariant.EPILOGUE, 8, 2));
        FusedChecks.rows(AR, FusedOp.REDUCE_SCATTER, FusedVariant.UNFUSED, 8, 2);
        FusedChecks.rows(AR, FusedOp.REDUCE_SCATTER, FusedVariant.SPARE_WARPS, 512, 2);
        FusedChecks.rows(AR, FusedOp.ALL_REDUCE, FusedVariant.SPARE_WARPS, 3, 2);  // all-reduce splits no rows
        FusedChecks.rows(AR, FusedOp.ALL_SCATTER, FusedVariant.EPILOGUE, 3, 2);
    }

    @Test
    void unfusedCallWithColumnsPastNNeedsTheKernelsRows() {
        rejects("rank 1: GemmAllReduce: C's leading dimension 264 is more than N = 256: such a call runs the fused kernel (the "
                + "collective of UNFUSED would overwrite the columns past N), whose rows per rank are whole 128-row tiles, and "
                + "M = 8 is not a multiple of 128 x world size 2; give C N columns (ldc = N)",
                () -> FusedChecks.kernelCall(AR, FusedOp.REDUCE_SCATTER, 8, 256, 2, 264));
        FusedChecks.kernelCall(AR, FusedOp.REDUCE_SCATTER, 8, 256, 2, 256);
        FusedChecks.kernelCall(AR, FusedOp.REDUCE_SCATTER, 256, 256, 2, 264);
        FusedChecks.kernelCall(AR, FusedOp.ALL_REDUCE, 8, 256, 2, 264);
    }

    @Test
    void variants() {
        FusedChecks.variant(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, FusedVariant.EPILOGUE);
        FusedChecks.variant(AR, FusedOp.ALL_GATHER, GemmMainloop.HOPPER, FusedVariant.SPARE_WARPS);
        rejectsWith("variant EPILOGUE does not exist for all-gather + GEMM on the hopper mainloop; it has [SPARE_WARPS, UNFUSED] (the spare producer warps push",
                () -> FusedChecks.variant(AR, FusedOp.ALL_GATHER, GemmMainloop.HOPPER, FusedVariant.EPILOGUE));
        rejectsWith("variant AUTO does not exist", () -> FusedChecks.variant(AR, FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, FusedVariant.AUTO));
        // The portable kernels: every operation, all-gather's included, runs EPILOGUE only.
        for (FusedOp op : FusedOp.values()) {
            FusedChecks.variant(AR, op, GemmMainloop.PORTABLE, FusedVariant.EPILOGUE);
        }
        rejectsWith("variant SPARE_WARPS does not exist for GEMM + all-scatter on the portable mainloop; it has [EPILOGUE] (the "
                + "portable kernels' warps all compute: none is spare)",
                () -> FusedChecks.variant(AR, FusedOp.ALL_SCATTER, GemmMainloop.PORTABLE, FusedVariant.SPARE_WARPS));
        // UNFUSED: all but all-scatter, on either mainloop.
        FusedChecks.variant(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, FusedVariant.UNFUSED);
        FusedChecks.variant(AR, FusedOp.ALL_GATHER, GemmMainloop.HOPPER, FusedVariant.UNFUSED);
        FusedChecks.variant(AR, FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, FusedVariant.UNFUSED);
        FusedChecks.variant(AR, FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, FusedVariant.UNFUSED);
        rejectsWith("variant UNFUSED does not exist for GEMM + all-scatter on the hopper mainloop; it has [EPILOGUE, SPARE_WARPS]",
                () -> FusedChecks.variant(AR, FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, FusedVariant.UNFUSED));
    }

    @Test
    void tileWidths() {
        FusedChecks.tileN(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 0);
        FusedChecks.tileN(AR, FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 192);
        FusedChecks.tileN(AR, FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 128);
        rejectsWith("rank 1: GemmAllReduce: config tileN 192 is not a tile width of the GEMM + all-reduce kernels on the "
                + "hopper mainloop; they come in [256] (or 0: chosen per shape)", () -> FusedChecks.tileN(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 192));
        rejectsWith("tileN 128 is not a tile width", () -> FusedChecks.tileN(AR, FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 128));
        FusedChecks.tileN(AR, FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, 256);
        rejectsWith("config tileN 128 is not a tile width of the all-gather + GEMM kernels on the portable mainloop; they come in "
                + "[256]", () -> FusedChecks.tileN(AR, FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, 128));
    }

    @Test
    void tracing() {
        FusedChecks.tracing(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, FusedVariant.SPARE_WARPS, true, 256, 2);
        FusedChecks.tracing(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, FusedVariant.EPILOGUE, false, 256, 2);
        FusedChecks.tracing(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, FusedVariant.UNFUSED, false, 256, 2);
        rejects("rank 1: GemmAllReduce: config tracing: the portable mainloop's kernels record no timeline (the Hopper ones do); "
                + "turn tracing off or run the HOPPER mainloop",
                () -> FusedChecks.tracing(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, FusedVariant.EPILOGUE, true, 256, 2));
        rejects("rank 1: GemmAllReduce: config tracing: UNFUSED runs no fused kernel, whose timeline tracing records; turn tracing"
                + " off or choose EPILOGUE or SPARE_WARPS",
                () -> FusedChecks.tracing(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, FusedVariant.UNFUSED, true, 256, 2));
        rejects("rank 1: GemmAllReduce: config tracing: UNFUSED runs no fused kernel, whose timeline tracing records; turn tracing"
                + " off (the kernels cannot take M = 8: they need a multiple of 128 x world size 2)",
                () -> FusedChecks.tracing(AR, FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, FusedVariant.UNFUSED, true, 8, 2));
    }

    @Test
    void splitK() {
        FusedChecks.splitK(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 1, 8);
        FusedChecks.splitK(AR, FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 2, FusedOp.MIN_SPLIT_K);
        rejectsWith("rank 1: GemmAllReduce: config splitK 2: the GEMM + all-reduce kernels do not split K",
                () -> FusedChecks.splitK(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 2, 8192));
        rejectsWith("config splitK 2 needs K >= 256 (a k-block of 128 columns on each side), got K = 248",
                () -> FusedChecks.splitK(AR, FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 2, 248));
        FusedChecks.splitK(AR, FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, 1, 8192);
        rejects("rank 1: GemmAllReduce: config splitK 2: the portable mainloop's kernels do not split K; use 0 or 1",
                () -> FusedChecks.splitK(AR, FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, 2, 8192));
    }

    @Test
    void device() {
        DeviceProperties h200 = new DeviceProperties(0, "NVIDIA H200", 9, 0, 132, 32, 1024, 0, 0x1b, 0, 141L << 30, 60L << 20, 232448);
        FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, Platform.CUDA, h200);
        DeviceProperties a100 = new DeviceProperties(0, "NVIDIA A100", 8, 0, 108, 32, 1024, 0, 0x1b, 0, 80L << 30, 40L << 20, 166912);
        IrisPlatformException e = assertThrows(IrisPlatformException.class,
                () -> FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, Platform.CUDA, a100));
        assertTrue(e.getMessage().contains("gemm_reduce needs compute capability 9.0 (sm_90a (wgmma, TMA)); GPU 0 (NVIDIA A100) has 8.0"),
                e.getMessage());
        assertThrows(IrisPlatformException.class, () -> FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, Platform.HIP, h200));
        // The portable kernels: Ampere and later, with 96 KiB of shared memory per block (an L40S allows 99 KiB).
        FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, Platform.CUDA, a100);
        FusedChecks.device(AR, FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, Platform.CUDA, h200);
        DeviceProperties l40s = new DeviceProperties(0, "NVIDIA L40S", 8, 9, 142, 32, 1024, 0, 0x1b, 0, 45L << 30, 96L << 20, 101376);
        FusedChecks.device(AR, FusedOp.ALL_SCATTER, GemmMainloop.PORTABLE, Platform.CUDA, l40s);
        DeviceProperties v100 = new DeviceProperties(0, "Tesla V100", 7, 0, 80, 32, 1024, 0, 0x1b, 0, 32L << 30, 6L << 20, 98304);
        IrisPlatformException old = assertThrows(IrisPlatformException.class,
                () -> FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, Platform.CUDA, v100));
        assertTrue(old.getMessage().contains("rank 1: GemmAllReduce: not available on this GPU: fused_portable needs compute "
                + "capability 8.0 or later (mma.sync, ldmatrix, cp.async); GPU 0 (Tesla V100) has 7.0"), old.getMessage());
        DeviceProperties small = new DeviceProperties(0, "small", 8, 6, 84, 32, 1024, 0, 0x1b, 0, 24L << 30, 6L << 20, 65536);
        IrisPlatformException shared = assertThrows(IrisPlatformException.class,
                () -> FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, Platform.CUDA, small));
        assertTrue(shared.getMessage().contains("fused_portable needs 98304 bytes of shared memory per block; GPU 0 (small) allows "
                + "65536"), shared.getMessage());
        assertThrows(IrisPlatformException.class,
                () -> FusedChecks.device(AR, FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, Platform.HIP, a100));
    }

    @Test
    void tensors() {
        Operand a = t("A", DType.BF16, 1 << 20, 300, 520);
        Operand freed = new Operand("B", DType.BF16, new long[] {264, 520}, false, true, 0, 0, "T[264, 520], freed");
        rejects("rank 1: GemmAllReduce: B T[264, 520], freed was freed", () -> FusedChecks.live(AR, freed));
        rejects("rank 1: GemmAllReduce: A has dtype F32; expected BF16 or F16",
                () -> FusedChecks.inputs(AR, t("A", DType.F32, 4096, 8, 8), a));
        rejects("rank 1: GemmAllReduce: B has dtype F16; expected BF16 (A's dtype)",
                () -> FusedChecks.inputs(AR, a, t("B", DType.F16, 4096, 8, 8)));
        rejects("rank 1: GemmAllReduce: C has dtype F32; expected BF16 (the fused kernels compute in F32 and store C and read the "
                + "bias in the input type)", () -> FusedChecks.sameType(AR, t("C", DType.F32, 4096, 8, 8), DType.BF16));
        rejects("rank 1: GemmAllReduce: A T[300, 520] has shape [300, 520]; expected [M, K_local] = [300, 512] (created for ...)",
                () -> FusedChecks.shape(AR, a, "[M, K_local]", new long[] {300, 512}, "created for ..."));
        FusedChecks.shape(AR, a, "[M, K_local]", new long[] {300, 520}, "x");
        rejects("rank 1: GemmAllReduce: B T[520, 264] has shape [520, 264]; expected [N, K_local] = [264, 520] for layout NK "
                + "(N x K; ctx)", () -> FusedChecks.b(AR, t("B", DType.BF16, 4096, 520, 264), GemmLayout.NK, 264, 520, "N", "K_local", "ctx"));
        FusedChecks.b(AR, t("B", DType.BF16, 4096, 520, 264), GemmLayout.KN, 264, 520, "N", "K_local", "ctx");
        rejects("rank 1: GemmAllReduce: bias T[263] has shape [263]; expected [N] = [264]",
                () -> FusedChecks.bias(AR, t("bias", DType.BF16, 4096, 263), 264, "N", DType.BF16));
        rejectsWith("bias has dtype F32", () -> FusedChecks.bias(AR, t("bias", DType.F32, 4096, 264), 264, "N", DType.BF16));
    }

    @Test
    void outputs() {
        assertEquals(272, FusedChecks.output(AR, t("C", DType.BF16, 4096, 200, 272), 200, 272, "[M, ldc]", "ctx"));
        assertEquals(280, FusedChecks.output(AR, t("C", DType.BF16, 4096, 200, 280), 200, 272, "[M, ldc]", "ctx"));
        rejects("rank 1: GemmAllReduce: C T[200, 264] has shape [200, 264]; expected [M, ldc] with 200 rows and ldc >= 272 (ctx)",
                () -> FusedChecks.output(AR, t("C", DType.BF16, 4096, 200, 264), 200, 272, "[M, ldc]", "ctx"));
        rejects("rank 1: GemmAllReduce: C's leading dimension 276 is not a multiple of 8 (every row must start 16-byte aligned)",
                () -> FusedChecks.output(AR, t("C", DType.BF16, 4096, 200, 276), 200, 272, "[M, ldc]", "ctx"));
        rejectsWith("has rank 1; expected a rank-2 tensor [M, ldc]",
                () -> FusedChecks.output(AR, t("C", DType.BF16, 4096, 200), 200, 8, "[M, ldc]", "ctx"));
        Operand local = new Operand("C", DType.BF16, new long[] {8, 8}, true, false, 4096, 128, "T[8, 8]");
        rejects("rank 1: GemmAllReduce: C T[8, 8] is not on the symmetric heap of the Iris instance this operation was created "
                + "from; peers store into it", () -> FusedChecks.symmetric(AR, local, "peers store into it"));
    }

    @Test
    void addresses() {
        rejects("rank 1: GemmAllReduce: A's address 0x1008 is not 16-byte aligned",
                () -> FusedChecks.aligned(AR, t("A", DType.BF16, 0x1008, 8, 8)));
        rejects("rank 1: GemmAllReduce: A's address is 0 (NULL)", () -> FusedChecks.aligned(AR, t("A", DType.BF16, 0, 8, 8)));
        Operand c = t("C", DType.BF16, 0x10000, 64, 64);
        Operand a = t("A", DType.BF16, 0x10000 + 64 * 64 * 2 - 16, 8, 8);
        rejectsWith("C T[64, 64] overlaps A T[8, 8]; the output must not alias an input", () -> FusedChecks.disjoint(AR, c, a));
        FusedChecks.disjoint(AR, c, t("A", DType.BF16, 0x10000 + 64 * 64 * 2, 8, 8));
    }
}
