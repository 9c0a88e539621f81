package dev.irisjvm.core.gpu;

/**
 * What a GPU is: the figures kernels size their launches from.
 *
 * <pre>{@code
 * DeviceProperties gpu = iris.deviceProperties();
 * int wave = gpu.multiprocessorCount();              // 132 on an H200: one persistent block per SM
 * boolean hopper = gpu.major() == 9;                 // wgmma kernels; "9.0" as gpu.computeCapability()
 * }</pre>
 */
public record DeviceProperties(
        int device,
        String name,
        int major,
        int minor,
        int multiprocessorCount,
        int warpSize,
        int maxThreadsPerBlock,
        int pciDomainId,
        int pciBusId,
        int pciDeviceId,
        long totalGlobalMemory,
        long l2CacheBytes,
        long sharedMemoryPerBlockOptin) {

    /** Compute capability as "9.0". */
    public String computeCapability() {
        return major + "." + minor;
    }

    /** PCI address as "0000:1b:00", unique per GPU on a host. */
    public String pciAddress() {
        return String.format("%04x:%02x:%02x", pciDomainId, pciBusId, pciDeviceId);
    }
}
