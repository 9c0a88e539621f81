package dev.irisjvm.core.gpu;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_device_properties;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;

/**
 * Process-wide device queries and selection.
 *
 * <pre>{@code
 * GpuProbe probe = Gpu.probe();
 * if (probe.deviceCount() >= 2) { ... }
 * DeviceProperties p = Gpu.properties(0);   // "NVIDIA H200", 132 SMs, ...
 * }</pre>
 */
public final class Gpu {
    private Gpu() {}

    /** What this machine offers, without throwing: how many GPUs, or why none could be used. */
    public record GpuProbe(int deviceCount, String reason) {
        public boolean hasAtLeast(int n) {
            return deviceCount >= n;
        }
    }

    /**
     * Counts GPUs; where there is no driver or no native library, count 0 and say why. The reason
     * names the native build in use, e.g. "0 GPU(s) visible [CUDA build (iris-native linux-x86_64):
     * NVIDIA driver found (/dev/nvidiactl)]".
     */
    public static GpuProbe probe() {
        if (!NativeLibrary.isAvailable()) {
            return new GpuProbe(0, "native runtime not loadable: " + NativeLibrary.unavailabilityCause()
                    + " [" + NativeLibrary.description() + "]");
        }
        try (IntPointer count = new IntPointer(1)) {
            int status = IrisRuntime.iris_device_count(count);
            if (status != IrisRuntime.IRIS_SUCCESS) {
                return new GpuProbe(0, IrisRuntime.iris_last_error().getString() + " [" + NativeLibrary.description() + "]");
            }
            return new GpuProbe(count.get(), count.get() + " GPU(s) visible [" + NativeLibrary.description() + "]");
        }
    }

    public static int deviceCount() {
        NativeLibrary.ensureAvailable();
        try (IntPointer count = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_device_count(count), "iris_device_count");
            return count.get();
        }
    }

    public static void setDevice(int device) {
        NativeLibrary.ensureAvailable();
        NativeCalls.check(IrisRuntime.iris_device_set(device), "iris_device_set(" + device + ")");
    }

    public static int currentDevice() {
        try (IntPointer d = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_device_get(d), "iris_device_get");
            return d.get();
        }
    }

    public static DeviceProperties properties(int device) {
        NativeLibrary.ensureAvailable();
        try (iris_device_properties p = new iris_device_properties()) {
            NativeCalls.check(IrisRuntime.iris_device_properties_get(device, p), "iris_device_properties_get(" + device + ")");
            return new DeviceProperties(device, p.name().getString(), p.major(), p.minor(), p.multiprocessor_count(),
                    p.warp_size(), p.max_threads_per_block(), p.pci_domain_id(), p.pci_bus_id(), p.pci_device_id(),
                    p.total_global_memory(), p.l2_cache_bytes(), p.shared_memory_per_block_optin());
        }
    }

    public static boolean canAccessPeer(int device, int peer) {
        try (IntPointer can = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_device_can_access_peer(device, peer, can),
                    "iris_device_can_access_peer(" + device + ", " + peer + ")");
            return can.get() != 0;
        }
    }

    /**
     * Whether atomics from {@code device} on {@code peer}'s memory are native (NVLink): the heap's
     * flags, 16-byte packets and remote atomics rely on it. Over PCIe they are not.
     */
    public static boolean peerAtomicsNative(int device, int peer) {
        try (IntPointer in = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_device_peer_native_atomics(device, peer, in),
                    "iris_device_peer_native_atomics(" + device + ", " + peer + ")");
            return in.get() != 0;
        }
    }

    public static void synchronize() {
        NativeCalls.check(IrisRuntime.iris_device_synchronize(), "iris_device_synchronize");
    }

    /** Free and total bytes of the current device, as {@code cudaMemGetInfo} / {@code hipMemGetInfo} report them. */
    public static long[] memoryInfo() {
        try (LongPointer free = new LongPointer(1); LongPointer total = new LongPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_mem_get_info(free, total), "iris_mem_get_info");
            return new long[] {free.get(), total.get()};
        }
    }

    /** The GPU platform of the loaded runtime: {@link Platform#CUDA} or {@link Platform#HIP}. */
    public static Platform platform() {
        return NativeLibrary.platform();
    }

    /** "CUDA 13.0 (driver 13.0)" or "HIP 6.2.41133 (driver 6.2.41133)". */
    public static String runtimeDescription() {
        Platform platform = platform();
        try (IntPointer rt = new IntPointer(1); IntPointer drv = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_runtime_version(rt, drv), "iris_runtime_version");
            return platform.displayName() + " " + platform.formatVersion(rt.get()) + " (driver "
                    + platform.formatVersion(drv.get()) + ")";
        }
    }
}
