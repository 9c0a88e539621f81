package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.testing.ContextBytes;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.runtime.abi.iris_ccl_args;
import org.junit.jupiter.api.Test;

/**
 * The collectives' side of iris/abi/ccl.h: every kernel Collectives looks up is in the built
 * fatbins for every architecture, and each call fills the fields its kernel reads. Runs without a
 * GPU (the generated struct is host memory).
 */
class CclInterfaceTest {

    @Test
    void everyKernelCollectivesLooksUpIsCompiledForEveryArchitecture() {
        FatbinKernels.assertEveryModuleHolds(Collectives.kernelNames());
        assertEquals(4 * 3 * ReduceOp.values().length + 3 * ReduceOp.values().length,
                Collectives.kernelNames().get("ccl_all_reduce").size(), "four algorithms and the copy engine's reduction");
    }

    @Test
    void callsFillTheFieldsTheirKernelsRead() {
        try (CclArgs args = new CclArgs(ContextBytes.of(1, 2), 0x7000_0000L, 1L << 20)) {
            iris_ccl_args a = args.call(0x1000, 0x2000, 77);
            assertEquals(0x1000, a.in().address());
            assertEquals(0x2000, a.out().address());
            assertEquals(77, a.count());
            assertEquals(0x7000_0000L, a.workspace().address());
            assertEquals(1L << 20, a.staging_bytes());
            assertEquals(1, a.ctx().rank());
            assertEquals(2, a.ctx().world());

            a = args.broadcast(0x3000, 64, 1);
            assertEquals(0x3000, a.out().address());
            assertEquals(1, a.root());

            a = args.chunk(0x1000, 0x2000, 0x9000, 4096, 16, 48);
            assertEquals(0x9000, a.stage().address());
            assertEquals(4096, a.stride());
            assertEquals(16, a.begin());
            assertEquals(48, a.end());

            a = args.allToAllV(0x1000, 0x2000, new long[] {1, 2}, new long[] {0, 1}, new long[] {3, 4}, new long[] {0, 3}, 2);
            assertEquals(2, a.counts().send_count(1));
            assertEquals(1, a.counts().send_displ(1));
            assertEquals(4, a.counts().recv_count(1));
            assertEquals(3, a.counts().recv_displ(1));
            assertEquals(0, a.counts().send_count(7), "ranks beyond the world are zero");
            assertEquals(2, a.counts().elem_bytes());
        }
    }


    @Test
    void inlineFlagPacketsCarryTheKernelsPayloadWords() {
        // ccl_common.cuh: 3 payload words per packet on Hopper, 1 for the scatter and on AMD.
        assertEquals(3, Collectives.llWordsPerPacket(false, Platform.CUDA));
        assertEquals(1, Collectives.llWordsPerPacket(true, Platform.CUDA));
        assertEquals(1, Collectives.llWordsPerPacket(false, Platform.HIP));
        assertEquals(1, Collectives.llWordsPerPacket(true, Platform.HIP));
    }
}
