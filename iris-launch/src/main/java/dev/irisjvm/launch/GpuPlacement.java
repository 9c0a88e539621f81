package dev.irisjvm.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Which GPU each rank of a launch drives, when a host has fewer GPUs than ranks.
 *
 * <p>Rules, for N ranks:
 * <ul>
 *   <li>{@code --ranks-per-gpu K}: ranks 0..K-1 on GPU 0, the next K on GPU 1, ...; needs
 *       ceil(N / K) GPUs;</li>
 *   <li>otherwise round robin over G GPUs ({@code --gpus G}, else every GPU the host shows):
 *       rank r on GPU r mod G;</li>
 *   <li>when the GPUs cannot be counted (no NVIDIA driver visible to the launcher) and no option
 *       says, the launcher places nothing and each rank takes its local rank modulo the GPUs it
 *       sees ({@code Iris.init}).</li>
 * </ul>
 *
 * <pre>{@code
 * GpuPlacement p = GpuPlacement.plan(4, 1, 0);   // four ranks, one GPU
 * p.device(3);        // 0
 * p.sharesGpus();     // true
 * p.ranksPerGpu();    // 4
 * }</pre>
 *
 * @param devices GPU index (in the launcher's numbering, i.e. of its {@code CUDA_VISIBLE_DEVICES})
 *                of each rank; empty when the placement is left to the ranks
 */
public record GpuPlacement(int[] devices) {

    /** Fewer ranks than this per GPU: more would be slower than useful, and each needs a context. */
    public static final int MAX_RANKS_PER_GPU = 64;

    public GpuPlacement {
        devices = devices.clone();
    }

    /**
     * Plans the placement of {@code worldSize} ranks.
     *
     * @param gpus        GPUs to use (from {@code --gpus} or counted); 0 when unknown
     * @param ranksPerGpu ranks per GPU ({@code --ranks-per-gpu}); 0 when not given
     * @throws IllegalArgumentException naming the option when the rule cannot be met
     */
    public static GpuPlacement plan(int worldSize, int gpus, int ranksPerGpu) {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
        }
        if (gpus < 0) {
            throw new IllegalArgumentException("--gpus must be >= 1, got " + gpus);
        }
        if (ranksPerGpu < 0) {
            throw new IllegalArgumentException("--ranks-per-gpu must be >= 1, got " + ranksPerGpu);
        }
        int[] devices = new int[worldSize];
        if (ranksPerGpu > 0) {
            int needed = (worldSize + ranksPerGpu - 1) / ranksPerGpu;
            if (gpus > 0 && needed > gpus) {
                throw new IllegalArgumentException("--ranks-per-gpu " + ranksPerGpu + " puts " + worldSize + " ranks on "
                        + needed + " GPUs, but only " + gpus + " are available");
            }
            Arrays.setAll(devices, r -> r / ranksPerGpu);
        } else if (gpus > 0) {
            Arrays.setAll(devices, r -> r % gpus);
        } else {
            return new GpuPlacement(new int[0]);
        }
        GpuPlacement placement = new GpuPlacement(devices);
        if (placement.ranksPerGpu() > MAX_RANKS_PER_GPU) {
            throw new IllegalArgumentException(worldSize + " ranks would put " + placement.ranksPerGpu()
                    + " ranks on one GPU; at most " + MAX_RANKS_PER_GPU + " are supported");
        }
        return placement;
    }

    /** True when the launcher chose each rank's GPU. */
    public boolean isPlanned() {
        return devices.length > 0;
    }

    /** Rank {@code rank}'s GPU; only when {@link #isPlanned()}. */
    public int device(int rank) {
        return devices[rank];
    }

    /** The most ranks on one GPU (1 when none shares; 0 when not planned). */
    public int ranksPerGpu() {
        int[] counts = new int[Arrays.stream(devices).max().orElse(-1) + 1];
        for (int d : devices) {
            counts[d]++;
        }
        return Arrays.stream(counts).max().orElse(0);
    }

    /** Number of distinct GPUs the ranks use (0 when not planned). */
    public int gpusUsed() {
        return (int) Arrays.stream(devices).distinct().count();
    }

    /** True when two or more ranks drive the same GPU. */
    public boolean sharesGpus() {
        return ranksPerGpu() > 1;
    }

    /**
     * GPUs this host shows to its processes, without loading a GPU runtime: the entries of
     * {@code CUDA_VISIBLE_DEVICES} when set, else the GPUs the NVIDIA driver lists under
     * {@code procGpus} (normally {@code /proc/driver/nvidia/gpus}); 0 when neither tells.
     */
    public static int countVisibleGpus(Map<String, String> env, Path procGpus) {
        String visible = env.get("CUDA_VISIBLE_DEVICES");
        if (visible != null) {
            // The runtime stops at the first invalid entry, such as -1 ("no GPU").
            int count = 0;
            for (String entry : visible.split(",", -1)) {
                String e = entry.trim();
                if (e.isEmpty() || e.startsWith("-")) {
                    break;
                }
                count++;
            }
            return count;
        }
        if (!Files.isDirectory(procGpus)) {
            return 0;
        }
        try (Stream<Path> entries = Files.list(procGpus)) {
            return (int) entries.filter(Files::isDirectory).count();
        } catch (IOException e) {
            return 0;
        }
    }

    /** "4 ranks on 1 GPU (4 per GPU)", for the launcher's first line. */
    public String describe() {
        if (!isPlanned()) {
            return "GPUs chosen by each rank (local rank modulo the GPUs it sees)";
        }
        int used = gpusUsed();
        return devices.length + (devices.length == 1 ? " rank" : " ranks") + " on " + used + (used == 1 ? " GPU" : " GPUs")
                + (sharesGpus() ? " (up to " + ranksPerGpu() + " per GPU: ranks share GPUs, which is for correctness"
                        + " runs; timings need one GPU per rank)" : " (one per GPU)");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GpuPlacement p && Arrays.equals(devices, p.devices);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(devices);
    }

    @Override
    public String toString() {
        return "GpuPlacement" + Arrays.toString(devices);
    }
}
