package dev.irisjvm.core.testing;

import dev.irisjvm.core.DeviceContext;
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

    /**
     * Skips the calling test (reported as skipped, with the reason printed) unless n GPUs are
     * visible. Multi-rank tests need one: ranks share GPUs where there are fewer than ranks.
     */
    public static void assumeGpus(int n) {
        Gpu.GpuProbe p = probe();
        String reason = "needs " + n + (n == 1 ? " GPU" : " GPUs") + ", found " + p.deviceCount() + " (" + p.reason() + ")";
        if (!p.hasAtLeast(n)) {
            System.out.println("GPU test skipped: " + reason);
        }
        Assumptions.assumeTrue(p.hasAtLeast(n), reason);
    }

    /**
     * The world size GPU tests run with: IRIS_TEST_WORLD, else every visible GPU up to 8 and at
     * least 2 (on one GPU, two ranks share it).
     */
    public static int worldSize() {
        return worldSize(System.getenv("IRIS_TEST_WORLD"), probe().deviceCount());
    }

    static int worldSize(String fromEnvironment, int gpus) {
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            try {
                int w = Integer.parseInt(fromEnvironment.trim());
                if (w >= 1 && w <= MAX_TEST_WORLD) {
                    return w;
                }
            } catch (NumberFormatException notAnInt) {
                // reported below
            }
            throw new IllegalArgumentException("IRIS_TEST_WORLD must be a number of ranks in [1, " + MAX_TEST_WORLD
                    + "], got '" + fromEnvironment + "'");
        }
        return Math.min(MAX_TEST_WORLD, Math.max(2, gpus));
    }

    /** The most ranks one device context holds. */
    private static final int MAX_TEST_WORLD = DeviceContext.MAX_RANKS;
}
