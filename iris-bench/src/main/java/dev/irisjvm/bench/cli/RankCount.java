package dev.irisjvm.bench.cli;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Option;

/** {@code -n N}: ranks, one per GPU; by default as many as nvidia-smi lists, at most one node's 8. */
final class RankCount {
    static final int NODE_GPUS = 8;

    @Option(names = "-n", paramLabel = "N", description = "ranks, one per GPU (default: every GPU nvidia-smi lists, at most 8)")
    Integer ranks;

    /** The ranks asked for, or the GPUs this host has; throws IllegalArgumentException outside [min, 8]. */
    int resolve(int min) {
        int n = ranks != null ? ranks : Math.min(NODE_GPUS, gpus());
        if (n < min || n > NODE_GPUS) {
            throw new IllegalArgumentException((ranks != null ? "-n " + n : "nvidia-smi lists " + n + " GPU(s)")
                    + ": needs " + min + " to " + NODE_GPUS + " ranks, one per GPU");
        }
        return n;
    }

    /** GPUs that {@code nvidia-smi -L} lists; throws when there is no nvidia-smi. */
    static int gpus() {
        try {
            Process p = new ProcessBuilder("nvidia-smi", "-L").redirectErrorStream(true).start();
            long count = new String(p.getInputStream().readAllBytes()).lines().filter(l -> l.startsWith("GPU")).count();
            p.waitFor(30, TimeUnit.SECONDS);
            return (int) count;
        } catch (IOException e) {
            throw new IllegalArgumentException("nvidia-smi not found: pass -n N");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
