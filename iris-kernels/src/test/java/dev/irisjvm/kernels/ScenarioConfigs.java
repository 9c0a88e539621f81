package dev.irisjvm.kernels;

import dev.irisjvm.core.IrisConfig;
import java.time.Duration;

/** The Iris config a GPU scenario class's main starts from. */
public final class ScenarioConfigs {
    private ScenarioConfigs() {}

    /** The environment's config with the scenario class's heap size and device timeout. */
    public static IrisConfig of(long heapBytes, Duration deviceTimeout) {
        return IrisConfig.fromEnvironment().withHeapSize(heapBytes).withDeviceTimeout(deviceTimeout);
    }
}
