package dev.irisjvm.core.testing;

import dev.irisjvm.core.gpu.Gpu;
import org.junit.jupiter.api.Assumptions;

/** Decides once per JVM whether GPU tests can run here, and says why not when they cannot. */
public final class GpuTestSupport {
    private static Gpu.GpuProbe probe;

    private GpuTestSupport() {}

    public static synchronized Gpu.GpuProbe probe() {
        if (probe == null) {
            probe = Gpu.probe();
        }
        return probe;
    }

    /** Skips the calling test (reported as skipped, with the reason printed) unless n GPUs are visible. */
    public static void assumeGpus(int n) {
        Gpu.GpuProbe p = probe();
        String reason = "needs " + n + " GPUs, found " + p.deviceCount() + " (" + p.reason() + ")";
        if (!p.hasAtLeast(n)) {
            System.out.println("GPU test skipped: " + reason);
        }
        Assumptions.assumeTrue(p.hasAtLeast(n), reason);
    }

    /** The world size GPU tests run with: IRIS_TEST_WORLD, else every visible GPU up to 8. */
    public static int worldSize() {
        String w = System.getenv("IRIS_TEST_WORLD");
        if (w != null && !w.isBlank()) {
            return Integer.parseInt(w.trim());
        }
        return Math.min(8, Math.max(2, probe().deviceCount()));
    }
}
