package dev.irisjvm.kernels.attention;

import static dev.irisjvm.kernels.OperandAddresses.ACC;
import static dev.irisjvm.kernels.OperandAddresses.K;
import static dev.irisjvm.kernels.OperandAddresses.LSE;
import static dev.irisjvm.kernels.OperandAddresses.MAX;
import static dev.irisjvm.kernels.OperandAddresses.O;
import static dev.irisjvm.kernels.OperandAddresses.Q;
import static dev.irisjvm.kernels.OperandAddresses.SUM;
import static dev.irisjvm.kernels.OperandAddresses.V;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.kernels.CheckRank;
import dev.irisjvm.kernels.attention.AttentionChecks.Operand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/**
 * Every rule of the attention kernels' argument checks, without a GPU: each failure names the rank,
 * the operation and the argument; each legal corner passes.
 */
class AttentionChecksTest {
    @RegisterExtension
    static final CheckRank RANK = new CheckRank(3);

    private static void rejects(String op, String expected, Executable call) {
        RANK.rejects(op, expected, call);
    }

    private static AttentionProblem problem(int b, int hq, int hkv, int sq, int skv, int d, boolean causal) {
        return AttentionProblem.of(DType.BF16, b, hq, hkv, sq, skv, d, causal);
    }

    // ---- problems ----------------------------------------------------------------------------------

    @Test
    void everyKernelHasItsProblem() {
        for (DType t : new DType[] {DType.BF16, DType.F16}) {
            for (int d : new int[] {64, 128}) {
                for (boolean causal : new boolean[] {false, true}) {
                    AttentionProblem p = AttentionProblem.of(t, 2, 8, 2, 256, 256, d, causal);
                    String suffix = (t == DType.BF16 ? "bf16" : "f16") + "_d" + d + (causal ? "_causal" : "");
                    assertEquals("iris_attention_fwd_" + suffix, p.kernelName());
                    assertEquals("iris_ring_attention_step_" + suffix, p.ringStepKernelName());
                    assertEquals("iris_ring_attention_last_steps_" + suffix, p.ringLastStepsKernelName());
                }
            }
        }
    }

    @Test
    void launchShapeAndSharedMemoryFollowTheKernelFile() {
        AttentionProblem p = problem(3, 32, 8, 4096, 4096, 128, false);
        assertEquals(new LaunchShape(32, 32, 3, 384, 1, 1, 164864), p.launchShape());
        assertEquals(82944, problem(1, 4, 4, 128, 128, 64, false).sharedBytes());
        assertEquals(Attention.MAX_SHARED_BYTES, p.sharedBytes());
    }

    @Test
    void theHopperForwardAtHeadSize64TakesWideTilesAndRoundsTheGridUp() {
        // 4096 rows: 21 blocks of 192 and one of 64 rows (its two other consumers sit out).
        AttentionProblem d64 = problem(3, 32, 8, 4096, 4096, 64, true);
        assertEquals(new LaunchShape(22, 32, 3, 512, 1, 1, 132096), d64.forwardLaunchShape(GemmMainloop.HOPPER));
        assertEquals(new LaunchShape(2, 4, 1, 512, 1, 1, 132096),
                problem(1, 4, 4, 384, 384, 64, false).forwardLaunchShape(GemmMainloop.HOPPER));
        // The ring steps keep 128-row tiles; so do head size 128 and the portable mainloop.
        assertEquals(new LaunchShape(32, 32, 3, 384, 1, 1, 82944), d64.launchShape());
        AttentionProblem d128 = problem(3, 32, 8, 4096, 4096, 128, true);
        assertEquals(d128.launchShape(), d128.forwardLaunchShape(GemmMainloop.HOPPER));
        assertEquals(d64.launchShape(GemmMainloop.PORTABLE), d64.forwardLaunchShape(GemmMainloop.PORTABLE));
    }

    @Test
    void flopsHalveWhenCausal() {
        AttentionProblem p = problem(1, 32, 8, 4096, 4096, 128, false);
        assertEquals(4.0 * 32 * 4096 * 4096 * 128, p.flops());
        assertEquals(p.flops() / 2, p.withCausal(true).flops());
        assertEquals(4.0 * 32 * 4096 * 8192 * 128, p.withKvLen(8192).flops());
    }

    @Test
    void scaleDefaultsToTheInverseRootOfTheHeadSize() {
        AttentionProblem p = problem(1, 4, 4, 128, 128, 64, false);
        assertEquals(0.125, p.scale());
        assertEquals((float) (0.125 * 1.4426950408889634), p.scaleLog2());
    }

    @Test
    void gqaAndMqaPass() {
        assertEquals(4, problem(1, 32, 8, 128, 256, 128, false).groupSize());
        assertEquals(8, problem(1, 8, 1, 128, 128, 64, false).groupSize());
        assertEquals(1, problem(1, 8, 8, 128, 128, 64, false).groupSize());
    }

    @Test
    void rejectsBadProblems() {
        rejects("attention", "dtype F32 is not supported", () -> AttentionProblem.of(DType.F32, 1, 4, 4, 128, 128, 64, false));
        rejects("attention", "headDim = 96", () -> problem(1, 4, 4, 128, 128, 96, false));
        rejects("attention", "qLen = 200 is not a multiple of 128", () -> problem(1, 4, 4, 200, 256, 64, false));
        rejects("attention", "kvLen = 100 is not a multiple of 128", () -> problem(1, 4, 4, 128, 100, 64, false));
        rejects("attention", "qLen = 0 must be >= 1", () -> problem(1, 4, 4, 0, 128, 64, false));
        rejects("attention", "qHeads = 6 is not a multiple of kvHeads = 4", () -> problem(1, 6, 4, 128, 128, 64, false));
        rejects("attention", "batch = 0", () -> problem(0, 4, 4, 128, 128, 64, false));
        rejects("attention", "batch = 70000 exceeds 65535", () -> problem(70000, 4, 4, 128, 128, 64, false));
        rejects("attention", "qHeads = 65536 exceeds 65535", () -> problem(1, 65536, 1, 128, 128, 64, false));
        rejects("attention", "causal attention needs qLen == kvLen", () -> problem(1, 4, 4, 128, 256, 64, true));
        rejects("attention", "scale = -1.0", () -> new AttentionProblem(DType.BF16, 1, 4, 4, 128, 128, 64, false, -1));
        rejects("attention", "scale = NaN", () -> new AttentionProblem(DType.BF16, 1, 4, 4, 128, 128, 64, false, Double.NaN));
        rejects("attention", "rows; the kernel addresses rows with an int",
                () -> problem(64, 1024, 1, 65536, 128, 64, false));
    }

    // ---- buffers -----------------------------------------------------------------------------------

    @Test
    void buffersAreAlignedAndOutputsApart() {
        AttentionProblem p = problem(1, 4, 2, 256, 256, 64, false);
        AttentionChecks.buffers(p, Q, K, V, O, LSE);
        AttentionChecks.buffers(p, Q, K, V, O, 0);
        rejects("attention", "Q's address is 0", () -> AttentionChecks.buffers(p, 0, K, V, O, 0));
        rejects("attention", "K's address 0x7f2000000008 is not 16-byte aligned", () -> AttentionChecks.buffers(p, Q, K + 8, V, O, 0));
        rejects("attention", "lse's address 0x7f5000000002 is not 4-byte aligned", () -> AttentionChecks.buffers(p, Q, K, V, O, LSE + 2));
        rejects("attention", "O [0x7f1000000100, +131072 bytes) overlaps Q", () -> AttentionChecks.buffers(p, Q, K, V, Q + 256, 0));
        rejects("attention", "overlaps V", () -> AttentionChecks.buffers(p, Q, K, V, V, 0));
        rejects("attention", "lse", () -> AttentionChecks.buffers(p, Q, K, V, O, O + p.qBytes() - 16));
        // Right after an input is fine.
        AttentionChecks.buffers(p, Q, K, V, Q + p.qBytes(), 0);
    }

    @Test
    void tensorsDescribeTheirProblem() {
        Operand q = new Operand("q", DType.F16, new long[] {2, 8, 256, 128}, true, "q");
        Operand k = new Operand("k", DType.F16, new long[] {2, 2, 384, 128}, true, "k");
        Operand v = new Operand("v", DType.F16, new long[] {2, 2, 384, 128}, true, "v");
        Operand o = new Operand("o", DType.F16, new long[] {2, 8, 256, 128}, true, "o");
        Operand lse = new Operand("lse", DType.F32, new long[] {2, 8, 256}, true, "lse");
        AttentionProblem p = AttentionChecks.tensors(q, k, v, o, lse, false, 0.5);
        assertEquals(new AttentionProblem(DType.F16, 2, 8, 2, 256, 384, 128, false, 0.5), p);
        assertEquals(p, AttentionChecks.tensors(q, k, v, o, null, false, 0.5));
        rejects("attention", "v has dtype BF16; expected F16",
                () -> AttentionChecks.tensors(q, k, new Operand("v", DType.BF16, new long[] {2, 2, 384, 128}, true, "v"), o, null, false, 1));
        rejects("attention", "o o has shape [2, 8, 384, 128]; expected [2, 8, 256, 128]",
                () -> AttentionChecks.tensors(q, k, v, new Operand("o", DType.F16, new long[] {2, 8, 384, 128}, true, "o"), null, false, 1));
        rejects("attention", "lse lse has shape [2, 8, 255]",
                () -> AttentionChecks.tensors(q, k, v, o, new Operand("lse", DType.F32, new long[] {2, 8, 255}, true, "lse"), false, 1));
        rejects("attention", "lse has dtype F16; expected F32",
                () -> AttentionChecks.tensors(q, k, v, o, new Operand("lse", DType.F16, new long[] {2, 8, 256}, true, "lse"), false, 1));
        rejects("attention", "q q has rank 3", () -> AttentionChecks.tensors(
                new Operand("q", DType.F16, new long[] {8, 256, 128}, true, "q"), k, v, o, null, false, 1));
        rejects("attention", "does not match q", () -> AttentionChecks.tensors(q,
                new Operand("k", DType.F16, new long[] {2, 2, 384, 64}, true, "k"), v, o, null, false, 1));
        rejects("attention", "k k was freed", () -> AttentionChecks.tensors(q,
                new Operand("k", DType.F16, new long[] {2, 2, 384, 128}, false, "k"), v, o, null, false, 1));
        rejects("attention", "causal attention needs qLen == kvLen", () -> AttentionChecks.tensors(q, k, v, o, null, true, 1));
    }

    // ---- ring steps --------------------------------------------------------------------------------

    @Test
    void ringStepModes() {
        AttentionProblem p = problem(1, 4, 2, 512, 512, 64, true);
        Chunks c = Sharding.ZIG_ZAG.chunks(0, 2, 512);
        assertEquals(0, new RingStep(p, Q, K, V, O, LSE, ACC, MAX, SUM, false, false, c, c).mode());
        assertEquals(RingStep.LOAD_STATE, new RingStep(p, Q, K, V, O, LSE, ACC, MAX, SUM, true, false, c, c).mode());
        assertEquals(3, new RingStep(p, Q, K, V, O, LSE, ACC, MAX, SUM, true, true, c, c).mode());
        // A single-step ring needs no state.
        assertEquals(RingStep.FINALIZE, new RingStep(p, Q, K, V, O, 0, 0, 0, 0, false, true, c, c).mode());
        // Steps before the last need no O.
        new RingStep(p, Q, K, V, 0, 0, ACC, MAX, SUM, false, false, c, c);
    }

    @Test
    void ringStepRejects() {
        AttentionProblem p = problem(1, 4, 2, 512, 512, 64, true);
        Chunks c = Sharding.ZIG_ZAG.chunks(0, 2, 512);
        String op = "ring attention step";
        rejects(op, "oAcc's address is 0", () -> new RingStep(p, Q, K, V, O, LSE, 0, MAX, SUM, true, true, c, c));
        rejects(op, "oAcc's address 0x7f6000000004 is not 8-byte aligned", () -> new RingStep(p, Q, K, V, O, LSE, ACC + 4, MAX, SUM, true, true, c, c));
        rejects(op, "O's address is 0", () -> new RingStep(p, Q, K, V, 0, LSE, ACC, MAX, SUM, true, true, c, c));
        rejects(op, "qLen = 512 rows is neither one nor two chunks of 128",
                () -> new RingStep(p, Q, K, V, O, LSE, ACC, MAX, SUM, true, true, new Chunks(128, 0, 1), c));
        rejects(op, "oAcc", () -> new RingStep(p, Q, K, V, O, LSE, O + 256, MAX, SUM, true, true, c, c));
        rejects(op, "rowMax", () -> new RingStep(p, Q, K, V, O, LSE, ACC, K + 64, SUM, true, true, c, c));
        rejects(op, "qChunks must not be null", () -> new RingStep(p, Q, K, V, O, LSE, ACC, MAX, SUM, true, true, null, c));
        // Not causal: the chunks are not used, so any pass.
        new RingStep(p.withCausal(false), Q, K, V, O, LSE, ACC, MAX, SUM, true, true, new Chunks(128, 0, 1), c);
    }

    // ---- sharding ----------------------------------------------------------------------------------

    @Test
    void zigZagHoldsChunksRAndTheirMirror() {
        assertEquals(new Chunks(4096, 0, 3), Sharding.ZIG_ZAG.chunks(0, 2, 8192));
        assertEquals(new Chunks(4096, 1, 2), Sharding.ZIG_ZAG.chunks(1, 2, 8192));
        assertEquals(new Chunks(1024, 2, 5), Sharding.ZIG_ZAG.chunks(2, 4, 2048));
        assertEquals(new Chunks(8192, 1, 1), Sharding.CONTIGUOUS.chunks(1, 2, 8192));
    }

    @Test
    void positionsAreAPermutationAndLocateInvertsThem() {
        for (Sharding s : Sharding.values()) {
            for (int world : new int[] {1, 2, 3, 4}) {
                int shard = 512;
                boolean[] seen = new boolean[world * shard];
                for (int r = 0; r < world; r++) {
                    for (int row = 0; row < shard; row++) {
                        int pos = s.globalPosition(r, world, shard, row);
                        assertTrue(!seen[pos], s + " world " + world + ": position " + pos + " twice");
                        seen[pos] = true;
                        assertArrayEquals(new int[] {r, row}, s.locate(world, shard, pos));
                    }
                }
            }
        }
    }

    @Test
    void zigZagBalancesCausalWork() {
        int world = 4;
        int shard = 1024;
        long[] visible = new long[world];
        for (int r = 0; r < world; r++) {
            for (int row = 0; row < shard; row++) {
                visible[r] += Sharding.ZIG_ZAG.globalPosition(r, world, shard, row) + 1;
            }
        }
        for (int r = 1; r < world; r++) {
            assertEquals(visible[0], visible[r], "rank " + r);
        }
    }

    @Test
    void shardingRejects() {
        rejects("attention sharding", "shard length 384 is not a multiple of 256", () -> Sharding.ZIG_ZAG.chunks(0, 2, 384));
        Sharding.CONTIGUOUS.chunks(0, 2, 384);
        rejects("attention sharding", "rank 2 is outside [0, 2)", () -> Sharding.CONTIGUOUS.chunks(2, 2, 384));
        rejects("attention sharding", "shard length = 100", () -> Sharding.CONTIGUOUS.chunks(0, 2, 100));
        rejects("attention chunks", "chunk ids must be >= 0", () -> new Chunks(128, -1, 0));
        rejects("ring attention", "shard qLen = 256 and kvLen = 512 differ",
                () -> RingAttention.checkShard(problem(1, 4, 2, 256, 512, 64, false), Sharding.CONTIGUOUS, 0, 2));
    }

    @Test
    void ringWorkspaceHoldsWhatTheWorldNeeds() {
        AttentionProblem p = problem(1, 32, 8, 16384, 16384, 128, true);
        long acc = p.qRows() * 128 * 4;
        long rows = p.qRows() * 4;
        long word = RingAttention.PART_ALIGNMENT;
        // Two ranks: one launch, so no state; one receive buffer and the ready word.
        long[] two = RingAttention.layout(p, 2, true);
        assertEquals(2 * p.kvBytes() + word, two[8]);
        assertEquals(two[3], two[0]);
        assertEquals(two[7], two[5]);
        // More: the state and two buffers.
        long[] four = RingAttention.layout(p, 4, true);
        assertEquals(acc + 2 * rows + 4 * p.kvBytes() + word, four[8]);
        for (int i = 0; i < 8; i++) {
            assertEquals(0, four[i] % RingAttention.PART_ALIGNMENT);
        }
        assertEquals(0, RingAttention.layout(p, 1, true)[8]);
    }

    @Test
    void portableRingWorkspaceKeepsTheStateFromTwoRanksAndNoWord() {
        AttentionProblem p = problem(1, 32, 8, 16384, 16384, 128, true);
        long acc = p.qRows() * 128 * 4;
        long rows = p.qRows() * 4;
        // Two ranks: two step launches carry the state through memory; no ready word.
        long[] two = RingAttention.layout(p, 2, false);
        assertEquals(acc + 2 * rows + 2 * p.kvBytes(), two[8]);
        assertEquals(two[8], two[7]);
        long[] four = RingAttention.layout(p, 4, false);
        assertEquals(acc + 2 * rows + 4 * p.kvBytes(), four[8]);
        assertEquals(0, RingAttention.layout(p, 1, false)[8]);
    }

    @Test
    void ringLastStepsRejects() {
        AttentionProblem p = problem(1, 4, 2, 512, 512, 64, true);
        Chunks c = Sharding.ZIG_ZAG.chunks(0, 2, 512);
        Chunks peer = Sharding.ZIG_ZAG.chunks(1, 2, 512);
        long k2 = 0x7f90_0000_0000L;
        long v2 = 0x7fa0_0000_0000L;
        long ready = 0x7fb0_0000_0000L;
        RingStep first = new RingStep(p, Q, K, V, O, LSE, 0, 0, 0, false, true, c, c);
        new RingLastSteps(first, k2, v2, peer, ready);
        String op = "ring attention last steps";
        rejects(op, "the first step must finalize",
                () -> new RingLastSteps(new RingStep(p, Q, K, V, O, LSE, ACC, MAX, SUM, false, false, c, c), k2, v2, peer, ready));
        rejects(op, "secondReady's address 0x7fb000000004 is not 8-byte aligned", () -> new RingLastSteps(first, k2, v2, peer, ready + 4));
        rejects(op, "second K's address is 0", () -> new RingLastSteps(first, 0, v2, peer, ready));
        rejects(op, "O [0x7f4000000000", () -> new RingLastSteps(first, O + 4096, v2, peer, ready));
        rejects(op, "secondReady", () -> new RingLastSteps(first, k2, v2, peer, v2 + 8));
        rejects(op, "kvLen = 512 rows is neither one nor two chunks of 128",
                () -> new RingLastSteps(first, k2, v2, new Chunks(128, 0, 1), ready));
        rejects(op, "kvChunks must not be null", () -> new RingLastSteps(first, k2, v2, null, ready));
    }

    // ---- flash decode ------------------------------------------------------------------------------

    @Test
    void flashDecodeProblem() {
        FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, 65536, 512);
        assertEquals(128, p.chunks());
        assertEquals(4, p.group());
        assertEquals(8L * 8 * 128 * 4 * 132, p.slotFloats());
        assertEquals("iris_flash_decode_bf16_d128", p.kernelName());
        assertEquals("iris_flash_decode_partial_bf16_d128", p.partialKernelName());
        assertEquals("iris_flash_decode_combine_bf16_d128", p.combineKernelName());
        assertEquals("iris_flash_decode_merge_d128", p.mergeKernelName());
        assertEquals("iris_flash_decode_merge_d64", FlashDecodeProblem.of(DType.F16, 1, 8, 8, 64, 64, 64).mergeKernelName());
        assertEquals(new LaunchShape(128, 8, 8, 128, 1, 1, 0), p.launchShape());
        assertEquals(new LaunchShape(8, 8, 4, 128, 1, 1, 0), p.combineLaunchShape());
        assertEquals(3, p.withLen(1100).chunks());
        assertEquals(1, p.withLen(1).chunks());
    }

    /** One merged entry per query head, whatever the length: chunks times fewer floats than the partials. */
    @Test
    void flashDecodeMergedEntries() {
        FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, 65536, 512);
        assertEquals(8L * 32 * 132, p.mergedFloats());
        assertEquals(p.mergedFloats(), p.withLen(1).mergedFloats());
        assertEquals(p.slotFloats(), p.chunks() * p.mergedFloats());
        assertEquals(2L * 8 * 68, FlashDecodeProblem.of(DType.F16, 2, 8, 2, 64, 777, 64).mergedFloats());
    }

    /**
     * The workspace create() allocates: two sets of world slots, the send slot and world gathered
     * slots of partials, the merged send slot and world gathered merged slots, the counters.
     */
    @Test
    void flashDecodeWorkspace() {
        FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, 2, 16, 8, 128, 1024, 64);
        long slot = 2L * 8 * 16 * 2 * 132;
        long merged = 2L * 16 * 132;
        long words = 2L * 16 + 16L * 16;
        assertEquals(slot, p.slotFloats());
        assertEquals(4 * (2 * 3 * slot + slot + 3 * slot) + 4 * (merged + 3 * merged) + 8 * words, FlashDecode.workspaceBytes(p, 3));
        assertEquals(4 * (4 * slot + 2 * merged) + 8 * words, FlashDecode.workspaceBytes(p, 1));
        rejects("flash decode", "world = 0 must be >= 1", () -> FlashDecode.workspaceBytes(p, 0));
    }

    @Test
    void flashDecodeMergeAndCombineRejects() {
        String op = "flash decode";
        FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, 2, 8, 2, 64, 4096, 256);
        long partials = 0x7f10_0000_0000L;
        long out = 0x7f20_0000_0000L;
        rejects(op, "partials's address 0x7f1000000008 is not 16-byte aligned", () -> FlashDecode.checkMerge(p, partials + 8, out, null));
        rejects(op, "merged entries's address 0x7f2000000004 is not 16-byte aligned",
                () -> FlashDecode.checkMerge(p, partials, out + 4, null));
        rejects(op, "merged entries's address is 0", () -> FlashDecode.checkMerge(p, partials, 0, null));
        rejects(op, "merged entries [0x7f1000000100", () -> FlashDecode.checkMerge(p, partials, partials + 256, null));
        rejects(op, "stream must not be null", () -> FlashDecode.checkMerge(p, partials, out, null));
        rejects(op, "problem must not be null", () -> FlashDecode.checkMerge(null, partials, out, null));
        rejects(op, "gathered partials's address 0x7f1000000004 is not 16-byte aligned",
                () -> FlashDecode.checkCombine(p, partials + 4, 2, out, null));
        rejects(op, "O's address 0x7f2000000001 is not 2-byte aligned", () -> FlashDecode.checkCombine(p, partials, 2, out + 1, null));
        rejects(op, "world = 0 must be >= 1", () -> FlashDecode.checkCombine(p, partials, 0, out, null));
        rejects(op, "stream must not be null", () -> FlashDecode.checkCombine(p, partials, 2, out, null));
    }

    @Test
    void flashDecodeRejects() {
        String op = "flash decode";
        rejects(op, "chunkLen = 100", () -> FlashDecodeProblem.of(DType.BF16, 1, 8, 8, 128, 1000, 100));
        rejects(op, "chunkLen = 2048", () -> FlashDecodeProblem.of(DType.BF16, 1, 8, 8, 128, 1000, 2048));
        rejects(op, "16 query heads per K/V head exceed 8", () -> FlashDecodeProblem.of(DType.BF16, 1, 32, 2, 128, 1000, 64));
        rejects(op, "len = 0", () -> FlashDecodeProblem.of(DType.BF16, 1, 8, 8, 128, 0, 64));
        rejects(op, "headDim = 256", () -> FlashDecodeProblem.of(DType.BF16, 1, 8, 8, 256, 10, 64));
        FlashDecodeProblem max = FlashDecodeProblem.of(DType.BF16, 2, 8, 2, 64, 4096, 256);
        FlashDecode.checkFits(max, max.withLen(17));
        rejects(op, "len = 4097 exceeds this instance's 4096", () -> FlashDecode.checkFits(max, max.withLen(4097)));
        rejects(op, "does not fit this instance", () -> FlashDecode.checkFits(max, FlashDecodeProblem.of(DType.BF16, 2, 8, 2, 64, 4096, 128)));
        Operand q = new Operand("q", DType.BF16, new long[] {2, 8, 64}, true, "q");
        Operand k = new Operand("k", DType.BF16, new long[] {2, 2, 100, 64}, true, "k");
        Operand o = new Operand("o", DType.BF16, new long[] {2, 8, 64}, true, "o");
        FlashDecode.checkTensors(max.withLen(100), q, k, k, o);
        rejects(op, "o o has shape [2, 8, 128]", () -> FlashDecode.checkTensors(max.withLen(100), q, k, k,
                new Operand("o", DType.BF16, new long[] {2, 8, 128}, true, "o")));
    }

    @Test
    void defaultChunkLenFillsTheGpuWithinTheKernelsLimits() {
        int len = FlashDecodeProblem.defaultChunkLen(1, 8, 16384, 132);
        assertEquals(0, len % 64);
        assertTrue(16384 / len * 8 >= 2 * 132, "chunks " + 16384 / len);
        assertEquals(1024, FlashDecodeProblem.defaultChunkLen(8, 8, 262144, 132));
        assertEquals(64, FlashDecodeProblem.defaultChunkLen(1, 8, 10, 132));
        // 1024 keys would make 1024 CTAs, 1.55 waves of 660: the last wave leaves HBM idle. 832 keys
        // make 1264 CTAs, 1.9 waves.
        assertEquals(832, FlashDecodeProblem.defaultChunkLen(1, 8, 131072, 132));
    }

    // ---- device ------------------------------------------------------------------------------------

    private static final DeviceProperties H200 =
            new DeviceProperties(0, "NVIDIA H200", 9, 0, 132, 32, 1024, 0, 0x1b, 0, 140L << 30, 60L << 20, 232448);
    private static final DeviceProperties A100 =
            new DeviceProperties(0, "NVIDIA A100", 8, 0, 108, 32, 1024, 0, 0x1b, 0, 80L << 30, 40L << 20, 166912);
    private static final DeviceProperties L40S =
            new DeviceProperties(0, "NVIDIA L40S", 8, 9, 142, 32, 1024, 0, 0x1b, 0, 48L << 30, 96L << 20, 101376);
    private static final DeviceProperties V100 =
            new DeviceProperties(0, "Tesla V100", 7, 0, 80, 32, 1024, 0, 0x1b, 0, 32L << 30, 6L << 20, 98304);

    @Test
    void deviceNeedsHopperAndItsSharedMemory() {
        AttentionChecks.device(Platform.CUDA, H200, GemmMainloop.HOPPER);
        IrisPlatformException e = assertThrows(IrisPlatformException.class,
                () -> AttentionChecks.device(Platform.CUDA, A100, GemmMainloop.HOPPER));
        assertTrue(e.getMessage().contains("compute capability 9.0"), e.getMessage());
        assertThrows(IrisPlatformException.class, () -> AttentionChecks.device(Platform.HIP, H200, GemmMainloop.HOPPER));
    }

    @Test
    void thePortableKernelsRunOnEveryGpuFromComputeCapability8() {
        for (DeviceProperties gpu : new DeviceProperties[] {A100, L40S, H200}) {
            AttentionChecks.device(Platform.CUDA, gpu, GemmMainloop.PORTABLE);
        }
        IrisPlatformException e = assertThrows(IrisPlatformException.class,
                () -> AttentionChecks.device(Platform.CUDA, V100, GemmMainloop.PORTABLE));
        assertTrue(e.getMessage().contains("GPU 0 (Tesla V100) has 7.0"), e.getMessage());
        assertTrue(e.getMessage().contains(Attention.PORTABLE_MODULE + " needs compute capability 8.0 or later"), e.getMessage());
        assertThrows(IrisPlatformException.class, () -> AttentionChecks.device(Platform.HIP, A100, GemmMainloop.PORTABLE));
    }

    @Test
    void thePortableBlockFitsTheSmallestSharedMemoryOfItsGpus() {
        // sm_86 and sm_89 allow a block 99 KiB: the L40S's 101376 bytes.
        assertTrue(Attention.PORTABLE_MAX_SHARED_BYTES <= L40S.sharedMemoryPerBlockOptin());
        DeviceProperties small = new DeviceProperties(0, "small", 8, 6, 10, 32, 1024, 0, 0x1b, 0, 8L << 30, 1L << 20, 65536);
        IrisPlatformException e = assertThrows(IrisPlatformException.class,
                () -> AttentionChecks.device(Platform.CUDA, small, GemmMainloop.PORTABLE));
        assertTrue(e.getMessage().contains(Attention.PORTABLE_MAX_SHARED_BYTES + " bytes of shared memory per block"), e.getMessage());
    }

    @Test
    void autoChoosesHopperOnHopperAndThePortableKernelsElsewhere() {
        assumeTrue(System.getenv(GemmMainloop.VARIABLE) == null, GemmMainloop.VARIABLE + " is set: AUTO follows it");
        assertEquals(GemmMainloop.HOPPER, GemmMainloop.AUTO.resolve(H200));
        assertEquals(GemmMainloop.PORTABLE, GemmMainloop.AUTO.resolve(A100));
        assertEquals(GemmMainloop.PORTABLE, GemmMainloop.AUTO.resolve(L40S));
        assertEquals(GemmMainloop.PORTABLE, GemmMainloop.PORTABLE.resolve(H200));
    }

    @Test
    void theMainloopNamesItsKernelsAndLaunch() {
        AttentionProblem p = problem(2, 8, 2, 512, 512, 128, true);
        assertEquals("iris_attention_fwd_portable_bf16_d128_causal", p.kernelName(GemmMainloop.PORTABLE));
        assertEquals("iris_ring_attention_step_portable_bf16_d128_causal", p.ringStepKernelName(GemmMainloop.PORTABLE));
        assertEquals(p.kernelName(), p.kernelName(GemmMainloop.HOPPER));
        assertEquals(p.ringStepKernelName(), p.ringStepKernelName(GemmMainloop.HOPPER));
        assertEquals(new LaunchShape(4, 8, 2, 256, 1, 1, 98304), p.launchShape(GemmMainloop.PORTABLE));
        assertEquals(49152, problem(1, 4, 4, 128, 128, 64, false).sharedBytes(GemmMainloop.PORTABLE));
        assertEquals(p.launchShape(), p.launchShape(GemmMainloop.HOPPER));
    }
}
