package dev.irisjvm.bench.rma;

import static dev.irisjvm.bench.OptionChecks.atLeast;

import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options the two size sweeps, {@link RmaSweep} and {@link dev.irisjvm.bench.ccl.CclSweep},
 * share word for word: the ratio between sizes, the bound on device waits, and the stream gate.
 * Each sweep's options hold one as a picocli mixin.
 *
 * <pre>{@code
 * SizeSweepOptions sweep = new SizeSweepOptions();   // a field marked picocli.CommandLine.Mixin
 * sweep.validate();
 * sweep.sizes(4096, 1L << 30);   // 4 KiB, 16 KiB, ..., 1 GiB with the default --factor 4
 * }</pre>
 */
public final class SizeSweepOptions {
    @Option(names = "--factor", defaultValue = "4", description = "Ratio between successive sizes (default: ${DEFAULT-VALUE}).")
    int factor;

    @Option(names = "--device-timeout-ms", defaultValue = "10000",
            description = "Bound on every device-side wait; a peer silent this long fails the point (default: ${DEFAULT-VALUE}).")
    long deviceTimeoutMs;

    @Option(names = "--no-gate", description = "Do not hold the stream while the reps are queued (then each rep's time includes launch gaps).")
    boolean noGate;

    /** Throws IllegalArgumentException naming the first option that is out of range. */
    public void validate() {
        atLeast("--factor", factor, 2);
        atLeast("--device-timeout-ms", deviceTimeoutMs, 100);
    }

    /** From {@code minBytes} up to {@code maxBytes}, each --factor times the one before. */
    public List<Long> sizes(long minBytes, long maxBytes) {
        return SizeList.geometric(minBytes, maxBytes, factor);
    }

    public long deviceTimeoutMs() {
        return deviceTimeoutMs;
    }

    /** Whether the stream is held while the reps are queued (no --no-gate). */
    public boolean gate() {
        return !noGate;
    }
}
