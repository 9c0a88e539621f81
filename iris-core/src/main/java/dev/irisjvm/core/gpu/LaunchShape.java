package dev.irisjvm.core.gpu;

/**
 * Grid and block dimensions of a launch, plus dynamic shared memory in bytes. Checked when made: a
 * shape no GPU could launch is refused here, not by the driver.
 *
 * <pre>{@code
 * int sms = iris.deviceProperties().multiprocessorCount();
 * kernels.launch("all_reduce_sum", LaunchShape.of(sms, 256), iris.stream(), iris.deviceContext(), in, out, n);
 * LaunchShape tiles = new LaunchShape(m / 128, n / 256, 1, 384, 1, 1, 0).withSharedBytes(200 * 1024);
 * }</pre>
 */
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
