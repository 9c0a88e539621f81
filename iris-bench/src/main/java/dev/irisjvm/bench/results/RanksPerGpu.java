package dev.irisjvm.bench.results;

/** A run that records how many of its ranks took turns on one GPU, which decides whether its times may be compared. */
public interface RanksPerGpu {
    int worldSize();

    /** Most ranks on one GPU: above 1 the ranks took turns on a GPU, and the report compares nothing. */
    int maxRanksPerGpu();

    /** Whether ranks shared a GPU, so that the times measure turns and nothing may be compared. */
    default boolean sharedGpu() {
        return maxRanksPerGpu() > 1;
    }
}
