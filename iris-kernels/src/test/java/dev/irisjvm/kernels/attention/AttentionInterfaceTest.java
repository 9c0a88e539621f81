package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.testing.ContextBytes;
import static dev.irisjvm.kernels.OperandAddresses.ACC;
import static dev.irisjvm.kernels.OperandAddresses.K;
import static dev.irisjvm.kernels.OperandAddresses.K2;
import static dev.irisjvm.kernels.OperandAddresses.LSE;
import static dev.irisjvm.kernels.OperandAddresses.MAX;
import static dev.irisjvm.kernels.OperandAddresses.O;
import static dev.irisjvm.kernels.OperandAddresses.Q;
import static dev.irisjvm.kernels.OperandAddresses.READY;
import static dev.irisjvm.kernels.OperandAddresses.SUM;
import static dev.irisjvm.kernels.OperandAddresses.V;
import static dev.irisjvm.kernels.OperandAddresses.V2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_attention_args;
import dev.irisjvm.runtime.abi.iris_attention_chunks;
import dev.irisjvm.runtime.abi.iris_flash_decode_args;
import dev.irisjvm.runtime.abi.iris_tma_descriptor;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;

/**
 * The attention family's side of iris/abi/attention.h and iris/abi/flash_decode.h: each call fills
 * the fields its kernel reads, read back through the generated getters, and the layout keeps the
 * TMA descriptors where TMA can read them. Runs without a GPU (the generated structs are host
 * memory). {@link AttentionKernelsBuiltTest} checks the kernels' names against the built fatbins.
 */
class AttentionInterfaceTest {
    /** The causal problem both ring tests split: 512 tokens zig-zagged over two ranks. */
    private static final AttentionProblem RING = AttentionProblem.of(DType.BF16, 1, 4, 2, 512, 512, 64, true);
    private static final Chunks MINE = Sharding.ZIG_ZAG.chunks(0, 2, 512);
    private static final Chunks PEER = Sharding.ZIG_ZAG.chunks(1, 2, 512);

    @Test
    void tmaDescriptorsSit64ByteAlignedInsideTheParameterSpace() {
        for (String map : new String[] {"q_map", "k_map", "v_map", "k2_map", "v2_map"}) {
            assertEquals(0, AbiLayout.offset(iris_attention_args.class, map) % 64, map);
        }
        assertEquals(KernelAbi.IRIS_TMA_DESCRIPTOR_BYTES, AbiLayout.size(iris_tma_descriptor.class));
        assertTrue(AbiLayout.size(iris_attention_args.class) <= 4096, "well inside a kernel's 4 KiB of parameters");
        assertTrue(AbiLayout.size(iris_flash_decode_args.class) <= 4096);
    }

    /**
     * The fused flash-decode kernel's u64 words after arrived (flash_decode.cu): two sets of [B][Hkv]
     * arrival counters, then [B][Hkv][chunks] claims on the chunks.
     */
    @Test
    void flashDecodeCountsArrivalsAndClaims() {
        // B 2, Hkv 8, 1024 keys per rank in chunks of 64: 16 (sequence, head) pairs of 16 chunks.
        assertEquals(2L * 16 + 16L * 16, FlashDecode.arrivalWords(FlashDecodeProblem.of(DType.BF16, 2, 16, 8, 128, 1024, 64)));
        // A ragged last chunk counts: 1000 keys in chunks of 256 are 4.
        assertEquals(2L + 4, FlashDecode.arrivalWords(FlashDecodeProblem.of(DType.BF16, 1, 8, 1, 128, 1000, 256)));
    }

    @Test
    void theLaunchConstantsAreTheHeaders() {
        assertEquals(KernelAbi.IRIS_ATTENTION_THREADS, AttentionProblem.of(DType.BF16, 1, 1, 1, 128, 128, 64, false)
                .launchShape().blockX());
        assertEquals(KernelAbi.IRIS_ATTENTION_SHARED_BYTES_D64, AttentionProblem.sharedBytes(GemmMainloop.HOPPER, 64));
        assertEquals(KernelAbi.IRIS_ATTENTION_SHARED_BYTES_D128, AttentionProblem.sharedBytes(GemmMainloop.HOPPER, 128));
        AttentionProblem d64 = AttentionProblem.of(DType.BF16, 1, 1, 1, 384, 384, 64, false);
        assertEquals(KernelAbi.IRIS_ATTENTION_WIDE_THREADS, d64.forwardLaunchShape(GemmMainloop.HOPPER).blockX());
        assertEquals(384 / KernelAbi.IRIS_ATTENTION_WIDE_ROWS, d64.forwardLaunchShape(GemmMainloop.HOPPER).gridX());
        assertEquals(KernelAbi.IRIS_ATTENTION_WIDE_SHARED_BYTES_D64,
                AttentionProblem.forwardSharedBytes(GemmMainloop.HOPPER, 64));
        assertEquals(KernelAbi.IRIS_ATTENTION_PORTABLE_THREADS, AttentionProblem.of(DType.BF16, 1, 1, 1, 128, 128, 64, false)
                .launchShape(GemmMainloop.PORTABLE).blockX());
        assertEquals(KernelAbi.IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D64, AttentionProblem.sharedBytes(GemmMainloop.PORTABLE, 64));
        assertEquals(KernelAbi.IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D128, AttentionProblem.sharedBytes(GemmMainloop.PORTABLE, 128));
        assertEquals(KernelAbi.IRIS_FLASH_DECODE_THREADS, FlashDecodeProblem.of(DType.BF16, 1, 8, 1, 64, 64, 64)
                .launchShape().blockX());
        assertEquals(1L * 8 * (64 + KernelAbi.IRIS_FLASH_DECODE_PARTIAL_EXTRA),
                FlashDecodeProblem.of(DType.BF16, 1, 8, 1, 64, 64, 64).slotFloats());
    }

    @Test
    void forwardFinalizesOverChunksOfOne() {
        AttentionProblem p = AttentionProblem.of(DType.F16, 2, 8, 2, 512, 1024, 128, false);
        try (AttentionArgs args = new AttentionArgs()) {
            iris_attention_args a = args.forward(p, O, LSE);
            assertEquals(O, address(a.o()));
            assertEquals(LSE, address(a.lse()));
            assertEquals(0, address(a.o_acc()));
            assertModeAndShapes(KernelAbi.IRIS_ATTENTION_FINALIZE, p, a);
            assertChunks(512, 0, 0, a.q_chunks());
            assertChunks(1024, 0, 0, a.kv_chunks());
        }
    }

    @Test
    void aRingStepCarriesItsStateModeAndChunks() {
        try (AttentionArgs args = new AttentionArgs()) {
            args.forward(RING, O + 4096, 0);  // a previous call's fields are all replaced
            iris_attention_args a = args.step(new RingStep(RING, Q, K, V, 0, 0, ACC, MAX, SUM, true, false, MINE, PEER));
            assertEquals(0, address(a.o()));
            assertEquals(0, address(a.lse()));
            assertEquals(ACC, address(a.o_acc()));
            assertEquals(MAX, address(a.row_max()));
            assertEquals(SUM, address(a.row_sum()));
            assertModeAndShapes(KernelAbi.IRIS_ATTENTION_LOAD_STATE, RING, a);
            assertChunks(256, 0, 3, a.q_chunks());
            assertChunks(256, 1, 2, a.kv_chunks());
        }
    }

    @Test
    void theLastStepsAddTheSecondShardItsFlagAndTheContext() {
        RingStep first = new RingStep(RING, Q, K, V, O, LSE, ACC, MAX, SUM, true, true, MINE, MINE);
        try (AttentionArgs args = new AttentionArgs()) {
            args.context(ContextBytes.of(1, 2));
            iris_attention_args a = args.lastSteps(new RingLastSteps(first, K2, V2, PEER, READY));
            assertEquals(O, address(a.o()));
            assertEquals(READY, address(a.second_ready()));
            assertEquals(KernelAbi.IRIS_ATTENTION_LOAD_STATE | KernelAbi.IRIS_ATTENTION_FINALIZE, a.mode());
            assertChunks(256, 0, 3, a.kv_chunks());
            assertChunks(256, 1, 2, a.second_chunks());
            assertEquals(1, a.ctx().rank());
            assertEquals(2, a.ctx().world());
        }
    }

    @Test
    void theInputAddressesThePortableKernelsReadLandInTheirMembers() {
        try (AttentionArgs args = new AttentionArgs()) {
            args.inputs(Q, K, V);
            iris_attention_args a = args.forward(RING, O, LSE);
            assertEquals(Q, address(a.q()));
            assertEquals(K, address(a.k()));
            assertEquals(V, address(a.v()));
            args.inputs(Q + 256, K2, V2);  // the next call's replace them
            assertEquals(Q + 256, address(a.q()));
            assertEquals(K2, address(a.k()));
            assertEquals(V2, address(a.v()));
        }
    }

    @Test
    void theInputAddressesFollowTheChunksEightByteAligned() {
        long chunks = AbiLayout.offset(iris_attention_args.class, "second_chunks");
        assertEquals(chunks + 16, AbiLayout.offset(iris_attention_args.class, "q"));
        assertEquals(chunks + 24, AbiLayout.offset(iris_attention_args.class, "k"));
        assertEquals(chunks + 32, AbiLayout.offset(iris_attention_args.class, "v"));
        assertEquals(0, AbiLayout.offset(iris_attention_args.class, "q") % 8);
    }

    @Test
    void mapsLandInTheirMembers() {
        try (AttentionArgs args = new AttentionArgs()) {
            BytePointer[] views = {args.qMap(), args.kMap(), args.vMap(), args.k2Map(), args.v2Map()};
            for (int m = 0; m < views.length; m++) {
                byte[] descriptor = new byte[KernelAbi.IRIS_TMA_DESCRIPTOR_BYTES];
                descriptor[0] = (byte) (m + 1);
                descriptor[descriptor.length - 1] = (byte) (0x80 + m);
                views[m].put(descriptor);  // as TensorMap.copyTo writes it
            }
            iris_attention_args a = args.forward(AttentionProblem.of(DType.BF16, 1, 1, 1, 128, 128, 64, false), O, 0);
            iris_tma_descriptor[] members = {a.q_map(), a.k_map(), a.v_map(), a.k2_map(), a.v2_map()};
            for (int m = 0; m < members.length; m++) {
                assertEquals(m + 1, members[m].opaque(0), "first byte of map " + m);
                assertEquals((0x80L + m) << 56, members[m].opaque(15), "last byte of map " + m);
            }
        }
    }

    @Test
    void flashDecodeCallsFillTheFieldsTheirKernelsRead() {
        FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, 3000, 512);
        try (FlashDecodeArgs args = new FlashDecodeArgs(ContextBytes.of(1, 4))) {
            iris_flash_decode_args a = args.fused(p, Q, K, V, O, ACC, MAX, 7);
            assertEquals(1, a.ctx().rank());
            assertEquals(4, a.ctx().world());
            assertEquals(Q, address(a.q()));
            assertEquals(K, address(a.k()));
            assertEquals(V, address(a.v()));
            assertEquals(O, address(a.o()));
            assertEquals(ACC, address(a.partials()));
            assertEquals(MAX, address(a.arrived()));
            assertEquals(7, a.epoch());
            assertEquals(8, a.b());
            assertEquals(32, a.hq());
            assertEquals(8, a.hkv());
            assertEquals(3000, a.len());
            assertEquals(512, a.chunk_len());
            assertEquals(p.scaleLog2(), a.scale_log2());

            a = args.partial(p.withLen(1000), Q, K, V, SUM);
            assertEquals(SUM, address(a.partials()));
            assertEquals(1000, a.len());

            a = args.merge(p.withLen(1000), SUM, READY);
            assertEquals(SUM, address(a.partials()));
            assertEquals(READY, address(a.merged()));
            assertEquals(1000, a.len(), "the merge reads ceil(len / chunk_len) chunks");
            assertEquals(512, a.chunk_len());

            a = args.combine(p, LSE, 3, p.chunks(), O + 64);
            assertEquals(LSE, address(a.partials()));
            assertEquals(O + 64, address(a.o()));
            assertEquals(3, a.world());
            assertEquals(6, a.slot_chunks(), "the baseline's slots: every chunk of 3000 keys in chunks of 512");

            a = args.combine(p, LSE, 3, 1, O + 64);
            assertEquals(1, a.slot_chunks(), "the conventional path's slots: one merged entry per query head");
        }
    }

    /** A pointer member's address: the generated getter gives null for 0. */
    private static long address(Pointer p) {
        return p == null ? 0 : p.address();
    }

    private static void assertModeAndShapes(int mode, AttentionProblem p, iris_attention_args a) {
        assertEquals(mode, a.mode());
        assertEquals(p.qLen(), a.sq());
        assertEquals(p.kvLen(), a.skv());
        assertEquals(p.qHeads(), a.hq());
        assertEquals(p.kvHeads(), a.hkv());
        assertEquals(p.scaleLog2(), a.scale_log2());
    }

    private static void assertChunks(int len, int first, int second, iris_attention_chunks c) {
        assertEquals(len, c.len());
        assertEquals(first, c.first());
        assertEquals(second, c.second());
    }
}
