package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.gpu.Gpu;
import org.junit.jupiter.api.Test;

/**
 * The native runtime loads from the jar on any machine; without a GPU it reports why, naming the
 * call. Run with the HIP jar on the class path (IRIS_PLATFORM=hip), the same tests cover the HIP
 * build's loading and its hipGetDeviceCount failure.
 */
class NativeLibraryTest {
    @Test
    void loadsAndProbesWithoutThrowing() {
        assertTrue(NativeLibrary.isAvailable(), () -> "native runtime did not load: " + NativeLibrary.unavailabilityCause());
        Gpu.GpuProbe probe = Gpu.probe();
        System.out.println("GPU probe: " + probe);
        if (probe.deviceCount() == 0) {
            // cudaGetDeviceCount or hipGetDeviceCount, by the build that loaded
            assertTrue(probe.reason().contains(NativeLibrary.platform().apiPrefix() + "GetDeviceCount"), probe.reason());
        }
        assertTrue(probe.reason().contains("[" + NativeLibrary.description() + "]"), "the probe names the build: " + probe.reason());
    }

    /** The JNI library covers the generated structs too, not only the global functions. */
    @Test
    void generatedStructsHaveTheirNativeMethods() {
        try (dev.irisjvm.runtime.iris_device_properties p = new dev.irisjvm.runtime.iris_device_properties()) {
            p.major(9).minor(0);
            assertTrue(p.major() == 9 && p.minor() == 0 && !p.isNull(), "struct round trip");
        }
    }

    @Test
    void failuresNameTheRankTheFunctionAndTheGpuCall() {
        Gpu.GpuProbe probe = Gpu.probe();
        if (probe.deviceCount() > 0) {
            return;  // the failure path below needs a machine without a usable GPU
        }
        NativeCalls.setRank(3);
        try {
            Gpu.deviceCount();
            throw new AssertionError("deviceCount succeeded without a GPU");
        } catch (dev.irisjvm.core.IrisNativeException e) {
            assertTrue(e.getMessage().startsWith("rank 3: iris_device_count: " + NativeLibrary.platform().apiPrefix()
                    + "GetDeviceCount"), e.getMessage());
            assertTrue(e.gpuError() != 0, "gpu error code");
        } finally {
            NativeCalls.setRank(-1);
        }
    }
}
