package dev.irisjvm.bench;

import static dev.irisjvm.bench.OptionChecks.atLeast;

import picocli.CommandLine.Option;

/**
 * The options of the Iris job a sweep joins (a picocli mixin): the symmetric heap per rank and the
 * device wait timeout. Each sweep gives its own defaults; they are the field values, which picocli
 * shows as such.
 *
 * <pre>{@code
 * @Mixin JobOptions job = new JobOptions(6, 30_000);   // 6 GiB of heap per rank, device waits of at most 30 s
 * job.validate();                                     // names the option that is out of range
 * }</pre>
 */
public final class JobOptions {
    @Option(names = "--heap-gib", description = "Symmetric heap per rank in GiB (default: ${DEFAULT-VALUE}).")
    int heapGib;

    @Option(names = "--device-timeout-ms", description = "Device wait timeout (default: ${DEFAULT-VALUE}).")
    long deviceTimeoutMs;

    /** The defaults: {@code heapGib} GiB of heap per rank, device waits of at most {@code deviceTimeoutMs}. */
    public JobOptions(int heapGib, long deviceTimeoutMs) {
        this.heapGib = heapGib;
        this.deviceTimeoutMs = deviceTimeoutMs;
    }

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        atLeast("--heap-gib", heapGib, 1);
        atLeast("--device-timeout-ms", deviceTimeoutMs, 1);
    }

    public long heapBytes() {
        return (long) heapGib << 30;
    }

    public long deviceTimeoutMs() {
        return deviceTimeoutMs;
    }
}
