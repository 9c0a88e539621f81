package dev.irisjvm.core;

import dev.irisjvm.core.env.RankEnvironment;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * How one rank joins a job and sizes its heap. Read from the environment by default; every field
 * can be replaced with a {@code with...} call.
 *
 * <pre>{@code
 * IrisConfig config = IrisConfig.fromEnvironment()
 *         .withHeapSize(4L << 30)
 *         .withDeviceTimeout(Duration.ofSeconds(10));
 * try (Iris iris = Iris.init(config)) { ... }
 * }</pre>
 *
 * <p>Variables: the rank, world and master address as {@link RankEnvironment} reads them;
 * {@code IRIS_HEAP_SIZE} (bytes, or with a k/m/g suffix; default 1g); {@code IRIS_DEVICE} (GPU
 * index among the visible ones; default {@link #AUTO_DEVICE}: the local rank modulo the visible
 * GPUs, so that several ranks share a GPU where there are fewer GPUs than ranks);
 * {@code IRIS_RENDEZVOUS_TIMEOUT_MS} (default 120000);
 * {@code IRIS_DEVICE_TIMEOUT_MS} (bound on every device-side wait, default 30000);
 * {@code IRIS_WATCHDOG_TIMEOUT_MS} (a rank that sends no heartbeat for this long counts as lost,
 * default 30000; a rank whose process ends is noticed at once);
 * {@code IRIS_CHECK=1} (checked mode: ranks verify that they allocate identically, and kernels load
 * in their bounds-checked variants, which check every translated remote address);
 * {@code IRIS_SEED} (base seed of the random factories, default 0).
 *
 * @param rankEnvironment    rank, world, local rank, master address and port, job token
 * @param device             the GPU this rank drives, or {@link #AUTO_DEVICE}
 * @param heapSize           bytes of each rank's symmetric heap
 * @param rendezvousTimeout  bound on joining and on each host-side collective step
 * @param deviceTimeout      bound on each device-side wait (barrier, wait_until)
 * @param watchdogTimeout    how long a rank may stay silent before the others take it for lost
 * @param checked            verify collective allocation across ranks, and load the bounds-checked
 *                           variants of the kernels
 * @param seed               base seed of the random factories
 */
public record IrisConfig(
        RankEnvironment rankEnvironment,
        int device,
        long heapSize,
        Duration rendezvousTimeout,
        Duration deviceTimeout,
        Duration watchdogTimeout,
        boolean checked,
        long seed) {

    public static final long DEFAULT_HEAP_SIZE = 1L << 30;
    /** {@link #device()} chosen at init: the local rank modulo the number of visible GPUs. */
    public static final int AUTO_DEVICE = -1;
    /** Beyond any GPU count a host has; a larger IRIS_DEVICE is a typo, not a device. */
    static final int MAX_DEVICE = 1023;
    /** The smallest heap: the reserved control block plus room for a tensor. */
    public static final long MIN_HEAP_SIZE = 1L << 20;

    public IrisConfig {
        if (rankEnvironment == null) {
            throw new IllegalArgumentException("rankEnvironment must not be null");
        }
        String who = "rank " + rankEnvironment.rank();
        if (device < AUTO_DEVICE || device > MAX_DEVICE) {
            throw new IllegalArgumentException(who + ": device must be a GPU index in [0, " + MAX_DEVICE + "] or AUTO_DEVICE ("
                    + AUTO_DEVICE + "), got " + device);
        }
        if (heapSize < MIN_HEAP_SIZE) {
            throw new IllegalArgumentException(who + ": heapSize must be at least " + MIN_HEAP_SIZE + " bytes, got " + heapSize);
        }
        requirePositive(rendezvousTimeout, "rendezvousTimeout", who);
        requirePositive(deviceTimeout, "deviceTimeout", who);
        requirePositive(watchdogTimeout, "watchdogTimeout", who);
    }

    private static void requirePositive(Duration d, String name, String who) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(who + ": " + name + " must be a positive duration, got " + d);
        }
    }

    /** The configuration this process's environment describes. */
    public static IrisConfig fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    public static IrisConfig fromEnvironment(Map<String, String> env) {
        RankEnvironment rank = RankEnvironment.fromEnvironment(env);
        return new IrisConfig(
                rank,
                parseDevice(env.get("IRIS_DEVICE"), rank.rank()),
                parseSize(env.get("IRIS_HEAP_SIZE"), DEFAULT_HEAP_SIZE),
                Duration.ofMillis(parseLong(env, "IRIS_RENDEZVOUS_TIMEOUT_MS", 120_000)),
                Duration.ofMillis(parseLong(env, "IRIS_DEVICE_TIMEOUT_MS", 30_000)),
                Duration.ofMillis(parseLong(env, "IRIS_WATCHDOG_TIMEOUT_MS", 30_000)),
                isTrue(env.get("IRIS_CHECK")),
                parseLong(env, "IRIS_SEED", 0));
    }

    public IrisConfig withHeapSize(long bytes) {
        return new IrisConfig(rankEnvironment, device, bytes, rendezvousTimeout, deviceTimeout, watchdogTimeout, checked, seed);
    }

    public IrisConfig withDevice(int gpu) {
        return new IrisConfig(rankEnvironment, gpu, heapSize, rendezvousTimeout, deviceTimeout, watchdogTimeout, checked, seed);
    }

    public IrisConfig withRendezvousTimeout(Duration timeout) {
        return new IrisConfig(rankEnvironment, device, heapSize, timeout, deviceTimeout, watchdogTimeout, checked, seed);
    }

    public IrisConfig withDeviceTimeout(Duration timeout) {
        return new IrisConfig(rankEnvironment, device, heapSize, rendezvousTimeout, timeout, watchdogTimeout, checked, seed);
    }

    /** A rank silent for this long counts as lost (a rank whose process ends is noticed at once). */
    public IrisConfig withWatchdogTimeout(Duration timeout) {
        return new IrisConfig(rankEnvironment, device, heapSize, rendezvousTimeout, deviceTimeout, timeout, checked, seed);
    }

    public IrisConfig withChecked(boolean on) {
        return new IrisConfig(rankEnvironment, device, heapSize, rendezvousTimeout, deviceTimeout, watchdogTimeout, on, seed);
    }

    public IrisConfig withSeed(long baseSeed) {
        return new IrisConfig(rankEnvironment, device, heapSize, rendezvousTimeout, deviceTimeout, watchdogTimeout, checked, baseSeed);
    }

    public int rank() {
        return rankEnvironment.rank();
    }

    public int worldSize() {
        return rankEnvironment.worldSize();
    }

    /** Parses "1073741824", "64k", "512m", "1g" (binary units, case-insensitive). */
    static long parseSize(String text, long defaultValue) {
        if (text == null || text.isBlank()) {
            return defaultValue;
        }
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        char last = t.charAt(t.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g' || last == 't') {
            unit = switch (last) {
                case 'k' -> 1L << 10;
                case 'm' -> 1L << 20;
                case 'g' -> 1L << 30;
                default -> 1L << 40;
            };
            t = t.substring(0, t.length() - 1);
        }
        try {
            return Math.multiplyExact(Long.parseLong(t), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("IRIS_HEAP_SIZE must be a byte count with an optional k/m/g/t suffix, got '"
                    + text + "'");
        }
    }

    /** Resolves {@link #AUTO_DEVICE} for a host that shows {@code visibleGpus} GPUs. */
    public int deviceAmong(int visibleGpus) {
        if (visibleGpus < 1) {
            throw new IrisException("rank " + rank() + ": no GPU is visible to this process");
        }
        if (device == AUTO_DEVICE) {
            return rankEnvironment.localRank() % visibleGpus;
        }
        if (device >= visibleGpus) {
            throw new IrisException("rank " + rank() + ": device " + device + " requested (IRIS_DEVICE) but only "
                    + visibleGpus + " GPU(s) are visible");
        }
        return device;
    }

    private static int parseDevice(String v, int rank) {
        if (v == null || v.isBlank()) {
            return AUTO_DEVICE;
        }
        try {
            int d = Integer.parseInt(v.trim());
            if (d >= 0 && d <= MAX_DEVICE) {
                return d;
            }
        } catch (NumberFormatException notAnInt) {
            // reported below
        }
        throw new IllegalArgumentException("rank " + rank + ": IRIS_DEVICE must be a GPU index in [0, " + MAX_DEVICE
                + "], got '" + v + "'");
    }

    private static long parseLong(Map<String, String> env, String name, long defaultValue) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, got '" + v + "'");
        }
    }

    private static boolean isTrue(String v) {
        return v != null && (v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes"));
    }
}
