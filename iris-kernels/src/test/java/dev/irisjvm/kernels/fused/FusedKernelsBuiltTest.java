package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Every kernel the fused classes load is in every cubin of the built fatbins (no GPU needed). */
class FusedKernelsBuiltTest {
    @Test
    void everyVariantIsCompiled() {
        for (FusedOp op : FusedOp.values()) {
            List<Set<String>> images = FatbinKernels.of(op.module());
            assertFalse(images.isEmpty(), op.module() + " holds no cubin");
            for (FusedVariant v : op.kernelVariants()) {
                for (DType in : new DType[] {DType.BF16, DType.F16}) {
                    for (GemmLayout layout : GemmLayout.values()) {
                        for (int tileN : op.tileWidths()) {
                            for (boolean traced : new boolean[] {false, true}) {
                                String name = op.kernelName(v, in, layout, tileN, traced);
                                for (Set<String> image : images) {
                                    assertTrue(image.contains(name), name + " is missing from a cubin of " + op.module());
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void everyPortableKernelIsCompiledForEveryArchitecture() {
        List<Set<String>> images = FatbinKernels.of(FusedOp.PORTABLE_MODULE);
        // sm_80, sm_86, sm_89, sm_90a, sm_100, sm_120 (cmake/IrisFatbin.cmake); the compute_80 PTX is no cubin.
        assertTrue(images.size() >= 6, FusedOp.PORTABLE_MODULE + " holds " + images.size() + " cubins, expected one per architecture");
        for (FusedOp op : FusedOp.values()) {
            for (DType in : new DType[] {DType.BF16, DType.F16}) {
                for (GemmLayout layout : GemmLayout.values()) {
                    String name = op.portableKernelName(in, layout);
                    for (Set<String> image : images) {
                        assertTrue(image.contains(name), name + " is missing from a cubin of " + FusedOp.PORTABLE_MODULE);
                    }
                }
            }
        }
    }
}
