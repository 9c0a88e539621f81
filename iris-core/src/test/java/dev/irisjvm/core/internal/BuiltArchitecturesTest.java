package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Platform;
import org.junit.jupiter.api.Test;

class BuiltArchitecturesTest {
    private static DeviceProperties gpu(String name, int major, int minor) {
        return new DeviceProperties(1, name, major, minor, 108, 32, 1024, 0, 0x1b, 0, 80L << 30, 40L << 20, 166912);
    }

    @Test
    void everyNvidiaGpuSinceAmpereRunsThePortableKernels() {
        for (int[] cc : new int[][] {{8, 0}, {8, 6}, {8, 7}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {12, 0}, {13, 0}}) {
            BuiltArchitectures.requireSupported(0, Platform.CUDA, gpu("NVIDIA X", cc[0], cc[1]));
        }
        BuiltArchitectures.requireSupported(0, Platform.HIP, gpu("AMD Instinct MI300X", 9, 4));
    }

    @Test
    void olderGpusAreToldWhy() {
        for (int[] cc : new int[][] {{7, 0}, {7, 5}, {6, 1}}) {
            IrisPlatformException e = assertThrows(IrisPlatformException.class,
                    () -> BuiltArchitectures.requireSupported(3, Platform.CUDA, gpu("NVIDIA Y", cc[0], cc[1])));
            assertEquals("rank 3: GPU 1 (NVIDIA Y, 0000:1b:00) has compute capability " + cc[0] + "." + cc[1]
                    + "; this build's kernels need 8.0 or later (Ampere and newer; GEMM, the fused operations and attention"
                    + " need 9.0: H100, H200)", e.getMessage());
            assertEquals("compute capability 8.0 or later", e.requirement());
        }
    }
}
