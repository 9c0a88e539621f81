package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The kernel SmHog launches is in every cubin of its test module, plain and checked (no GPU needed). */
class SmHogKernelBuiltTest {
    @Test
    void holdSmsIsBuiltForEveryArchitecture() {
        for (String module : new String[] {SmHog.MODULE, SmHog.MODULE + ".checked"}) {
            List<Set<String>> images = FatbinKernels.of(module);
            assertFalse(images.isEmpty(), module + " holds no cubin");
            for (Set<String> image : images) {
                assertTrue(image.contains(SmHog.KERNEL), SmHog.KERNEL + " is missing from a cubin of " + module);
            }
        }
    }
}
