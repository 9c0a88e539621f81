package dev.irisjvm.core.gpu;

/** Grid and block dimensions of a launch, plus dynamic shared memory in bytes. */
public record LaunchShape(int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ, int sharedBytes) {
    public LaunchShape {
        if (gridX < 1 || gridY < 1 || gridZ < 1) {
            throw new IllegalArgumentException("grid dimensions must be >= 1, got (" + gridX + ", " + gridY + ", " + gridZ + ")");
        }
        if (blockX < 1 || blockY < 1 || blockZ < 1 || (long) blockX * blockY * blockZ > 1024) {
            throw new IllegalArgumentException("block dimensions must be >= 1 with at most 1024 threads, got ("
                    + blockX + ", " + blockY + ", " + blockZ + ")");
        }
        if (sharedBytes < 0) {
            throw new IllegalArgumentException("sharedBytes must be >= 0, got " + sharedBytes);
        }
    }

    /** A 1-D grid of 1-D blocks without dynamic shared memory. */
    public static LaunchShape of(int blocks, int threadsPerBlock) {
        return new LaunchShape(blocks, 1, 1, threadsPerBlock, 1, 1, 0);
    }

    public LaunchShape withSharedBytes(int bytes) {
        return new LaunchShape(gridX, gridY, gridZ, blockX, blockY, blockZ, bytes);
    }
}
