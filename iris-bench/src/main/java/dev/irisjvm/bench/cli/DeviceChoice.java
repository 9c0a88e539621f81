package dev.irisjvm.bench.cli;

import java.util.Map;
import picocli.CommandLine.Option;

/** {@code --device D}: the one GPU a single-GPU benchmark runs on, passed to it as IRIS_DEVICE. */
final class DeviceChoice {
    @Option(names = "--device", paramLabel = "D", description = "the GPU to run on (sets IRIS_DEVICE; default: IRIS_DEVICE, else 0)")
    Integer device;

    /** Throws IllegalArgumentException for a negative GPU number. */
    void validate() {
        if (device != null && device < 0) {
            throw new IllegalArgumentException("--device must be a GPU number, got " + device);
        }
    }

    /** IRIS_DEVICE for the benchmark's JVM, or nothing when --device was not given. */
    Map<String, String> environment() {
        return device == null ? Map.of() : Map.of("IRIS_DEVICE", device.toString());
    }
}
