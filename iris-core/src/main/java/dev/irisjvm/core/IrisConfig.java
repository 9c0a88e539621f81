package dev.irisjvm.core;

import dev.irisjvm.core.env.RankEnvironment;
import java.time.Duration;
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
 * <p>Variables: the rank, world, master address and job secret as {@link RankEnvironment} reads
 * them; {@code IRIS_HEAP_SIZE} (bytes, or with a k/m/g/t suffix; a multiple of 2 MiB up to 1 TiB;
 * default 1g); {@code IRIS_DEVICE} (GPU index among the visible ones; default
 * {@link #AUTO_DEVICE}: the local rank modulo the visible GPUs, so that several ranks share a GPU
 * where there are fewer GPUs than ranks);
 * {@code IRIS_RENDEZVOUS_TIMEOUT_MS} (100 .. 86400000, default 120000);
 * {@code IRIS_DEVICE_TIMEOUT_MS} (bound on every device-side wait, 1 .. 86400000, default 30000);
 * {@code IRIS_WATCHDOG_TIMEOUT_MS} (a rank that sends no heartbeat for this long counts as lost,
 * 1000 .. 86400000, default 30000; a rank whose process ends is noticed at once);
 * {@code IRIS_CHECK} (1/true/yes/on or 0/false/no/off, any case; on: checked mode, in which ranks
 * verify that they allocate identically and kernels load in their bounds-checked variants, which
 * check every translated remote address);
 * {@code IRIS_SEED} (base seed of the random factories, any 64-bit integer, default 0).
 * A value outside its range or form is an error naming the variable, the value and what is
 * allowed, never silently replaced by the default.
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
    /** The largest heap: beyond any GPU's memory, so a larger value is a typo, not a request. */
    public static final long MAX_HEAP_SIZE = 1L << 40;
    /**
     * What IRIS_HEAP_SIZE must be a multiple of. The heap's allocator itself needs only 256-byte
     * units (HeapAllocator.DEFAULT_ALIGNMENT), but the driver maps device memory in 2 MiB pages,
     * so the rest of a size that is not a multiple is paid for and unusable; and a hand-typed
     * value that is not one (1000000 for 1m) is usually a mistake worth hearing about.
     */
    public static final long HEAP_SIZE_GRANULE = 2L << 20;
    /** The longest timeout of any kind: no wait in a job should last longer than a day. */
    public static final Duration MAX_TIMEOUT = Duration.ofDays(1);
    /** A join takes several round trips and connection retries that start 20 ms apart. */
    public static final Duration MIN_RENDEZVOUS_TIMEOUT = Duration.ofMillis(100);
    /** Device waits are timed in milliseconds; less would end them before they start. */
    public static final Duration MIN_DEVICE_TIMEOUT = Duration.ofMillis(1);
    /**
     * RankWatchdog sends a heartbeat every min(1 s, timeout / 4) and declares a rank lost after
     * a timeout without one. Below 1 s the heartbeats come less than 250 ms apart and a GC pause
     * or a busy host's scheduling delay of that size would count as a hung rank and end the job.
     */
    public static final Duration MIN_WATCHDOG_TIMEOUT = Duration.ofSeconds(1);

    public IrisConfig {
        if (rankEnvironment == null) {
            throw new IllegalArgumentException("rankEnvironment must not be null");
        }
        String who = "rank " + rankEnvironment.rank();
        if (device < AUTO_DEVICE || device > MAX_DEVICE) {
            throw new IllegalArgumentException(who + ": device must be a GPU index in [0, " + MAX_DEVICE + "] or AUTO_DEVICE ("
                    + AUTO_DEVICE + "), got " + device);
        }
        if (heapSize < MIN_HEAP_SIZE || heapSize > MAX_HEAP_SIZE) {
            throw new IllegalArgumentException(who + ": heapSize must be in [" + MIN_HEAP_SIZE + ", " + MAX_HEAP_SIZE
                    + "] bytes, got " + heapSize);
        }
        requireWithin(rendezvousTimeout, MIN_RENDEZVOUS_TIMEOUT, "rendezvousTimeout", who);
        requireWithin(deviceTimeout, MIN_DEVICE_TIMEOUT, "deviceTimeout", who);
        requireWithin(watchdogTimeout, MIN_WATCHDOG_TIMEOUT, "watchdogTimeout", who);
    }

    // Bounded above as well, so that conversions to nanoseconds further on cannot overflow.
    private static void requireWithin(Duration d, Duration min, String name, String who) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(who + ": " + name + " must be a positive duration, got " + d);
        }
        if (d.compareTo(min) < 0 || d.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(who + ": " + name + " must be between " + min.toMillis() + " ms and "
                    + MAX_TIMEOUT.toMillis() + " ms, got " + d.toMillis() + " ms");
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
                EnvSettings.index(env, "IRIS_DEVICE", MAX_DEVICE, AUTO_DEVICE, "rank " + rank.rank()),
                EnvSettings.heapSize(env, "IRIS_HEAP_SIZE", DEFAULT_HEAP_SIZE),
                EnvSettings.millis(env, "IRIS_RENDEZVOUS_TIMEOUT_MS", 120_000, MIN_RENDEZVOUS_TIMEOUT),
                EnvSettings.millis(env, "IRIS_DEVICE_TIMEOUT_MS", 30_000, MIN_DEVICE_TIMEOUT),
                EnvSettings.millis(env, "IRIS_WATCHDOG_TIMEOUT_MS", 30_000, MIN_WATCHDOG_TIMEOUT),
                EnvSettings.flag(env, "IRIS_CHECK", false),
                EnvSettings.anyLong(env, "IRIS_SEED", 0));
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

    /** Parses "1073741824", "64k", "512m", "1g", "1t" (binary units, case-insensitive); no range check. */
    static long parseSize(String text, long defaultValue) {
        return EnvSettings.parseSize("IRIS_HEAP_SIZE", text, defaultValue);
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
}
