package dev.irisjvm.kernels.attention;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Every kernel Attention, RingAttention and FlashDecode load is in every cubin of the built fatbins (no GPU needed). */
class AttentionKernelsBuiltTest {
    private static final DType[] TYPES = {DType.BF16, DType.F16};
    private static final int[] HEAD_DIMS = {64, 128};

    @Test
    void attentionAndRingSteps() {
        List<Set<String>> images = images(Attention.MODULE);
        for (DType t : TYPES) {
            for (int d : HEAD_DIMS) {
                for (boolean causal : new boolean[] {false, true}) {
                    for (String prefix : new String[] {"iris_attention_fwd_", "iris_ring_attention_step_", "iris_ring_attention_last_steps_"}) {
                        assertIn(images, AttentionProblem.kernelName(prefix, t, d, causal), Attention.MODULE);
                    }
                }
            }
        }
    }

    /** The portable module is built for sm_80, sm_86, sm_89, sm_90a, sm_100 and sm_120; each has every kernel. */
    @Test
    void portableAttentionAndRingStepsOnEveryArchitecture() {
        List<Set<String>> images = images(Attention.PORTABLE_MODULE);
        assertTrue(images.size() >= 6, Attention.PORTABLE_MODULE + " holds " + images.size() + " cubins, not one per architecture");
        for (DType t : TYPES) {
            for (int d : HEAD_DIMS) {
                for (boolean causal : new boolean[] {false, true}) {
                    for (String prefix : new String[] {AttentionProblem.FORWARD, AttentionProblem.RING_STEP}) {
                        assertIn(images, AttentionProblem.kernelName(prefix, GemmMainloop.PORTABLE, t, d, causal),
                                Attention.PORTABLE_MODULE);
                    }
                }
            }
        }
    }

    /** flash_decode is portable too: a cubin per architecture, each with every kernel. */
    @Test
    void flashDecode() {
        List<Set<String>> images = images(FlashDecode.MODULE);
        assertTrue(images.size() >= 6, FlashDecode.MODULE + " holds " + images.size() + " cubins, not one per architecture");
        for (DType t : TYPES) {
            for (int d : HEAD_DIMS) {
                for (String prefix : new String[] {"iris_flash_decode_", "iris_flash_decode_partial_", "iris_flash_decode_combine_"}) {
                    assertIn(images, FlashDecodeProblem.kernelName(prefix, t, d), FlashDecode.MODULE);
                }
            }
        }
        for (int d : HEAD_DIMS) {
            assertIn(images, FlashDecodeProblem.mergeKernelName(d), FlashDecode.MODULE);
        }
    }

    private static List<Set<String>> images(String module) {
        List<Set<String>> images = FatbinKernels.of(module);
        assertFalse(images.isEmpty(), module + " holds no cubin");
        return images;
    }

    private static void assertIn(List<Set<String>> images, String name, String module) {
        for (Set<String> image : images) {
            assertTrue(image.contains(name), name + " is missing from a cubin of " + module);
        }
    }
}
