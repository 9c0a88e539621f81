package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.runtime.abi.iris_gemm_args;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The GEMM's side of iris/abi/gemm.h: every kernel Gemm loads is in the built fatbin for every
 * architecture, a call fills the fields the kernel reads, and the struct keeps the layout TMA
 * needs. Runs without a GPU (the generated struct is host memory).
 */
class GemmInterfaceTest {

    @Test
    void everyKernelGemmLoadsIsCompiledForEveryArchitecture() {
        List<Set<String>> images = FatbinKernels.of(Gemm.MODULE);
        assertFalse(images.isEmpty(), Gemm.MODULE + " holds no cubin");
        for (DType in : new DType[] {DType.BF16, DType.F16}) {
            for (GemmLayout layout : GemmLayout.values()) {
                for (DType out : new DType[] {in, DType.F32}) {
                    String name = GemmProblem.kernelName(in, layout, out);
                    for (Set<String> image : images) {
                        assertTrue(image.contains(name), name + " is missing from a cubin of " + Gemm.MODULE);
                    }
                }
            }
        }
    }

    @Test
    void aCallFillsTheFieldsTheKernelReads() {
        try (GemmArgs args = new GemmArgs()) {
            iris_gemm_args a = args.operands(0x7000_0000L, 0x7100_0000L, 4096, 2048, 8192, 4096, 8);
            assertEquals(0x7000_0000L, a.c().address());
            assertEquals(0x7100_0000L, a.bias().address());
            assertEquals(4096, a.m());
            assertEquals(2048, a.n());
            assertEquals(8192, a.k());
            assertEquals(4096, a.ldc());
            assertEquals(8, a.group_m());

            a = args.operands(0x7200_0000L, 0, 1, 8, 8, 8, 1);
            assertNull(a.bias(), "no bias: a null pointer");
            assertEquals(0x7200_0000L, a.c().address());
        }
    }

    @Test
    void theDescriptorsAre64ByteAlignedAndTheStructFitsTheParameterSpace() {
        assertEquals(0, AbiLayout.offset(iris_gemm_args.class, "a_map") % 64);
        assertEquals(0, AbiLayout.offset(iris_gemm_args.class, "b_map") % 64);
        assertTrue(AbiLayout.size(iris_gemm_args.class) < 4096, "well under the 4 KiB of kernel parameters");
    }

    @Test
    void theLaunchGivesWhatTheHeaderSays() {
        GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 1024, 512, 512),
                new DeviceMatrix(0x2000_0000L, DType.BF16, 2048, 512, 512), GemmLayout.NK, 0,
                new DeviceMatrix(0x3000_0000L, DType.BF16, 1024, 2048, 2048));
        var shape = Gemm.launchShape(p, 132);
        assertEquals(Gemm.THREADS, shape.blockX());
        assertEquals(Gemm.SHARED_BYTES, shape.sharedBytes());
        assertEquals(64, shape.gridX(), "8 x 8 tiles of 128 x 256 on 132 SMs");
    }
}
