package dev.irisjvm.core.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.core.IrisPlatformException;
import org.junit.jupiter.api.Test;

class BuiltArchitecturesTest {
    private static DeviceProperties gpu(String name, int major, int minor) {
        return new DeviceProperties(1, name, major, minor, 108, 32, 1024, 0, 0x1b, 0, 80L << 30, 40L << 20, 166912);
    }

    @Test
    void hopperRunsAndEverythingElseIsToldWhy() {
        BuiltArchitectures.requireSupported(0, Platform.CUDA, gpu("NVIDIA H200", 9, 0));
        BuiltArchitectures.requireSupported(0, Platform.HIP, gpu("AMD Instinct MI300X", 9, 4));
        for (int[] cc : new int[][] {{8, 0}, {8, 6}, {8, 9}, {10, 0}, {12, 0}}) {
            IrisPlatformException e = assertThrows(IrisPlatformException.class,
                    () -> BuiltArchitectures.requireSupported(3, Platform.CUDA, gpu("NVIDIA X", cc[0], cc[1])));
            assertEquals("rank 3: GPU 1 (NVIDIA X, 0000:1b:00) has compute capability " + cc[0] + "." + cc[1]
                    + "; this build's kernels are compiled for 9.0 (sm_90a: H100, H200) only, so no kernel of this library"
                    + " can load on it", e.getMessage());
            assertEquals("compute capability 9.0 (sm_90a)", e.requirement());
        }
    }
}
