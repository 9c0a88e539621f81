package dev.irisjvm.kernels;

import dev.irisjvm.core.gpu.KernelModule;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The fatbins of iris-kernels, loaded on first use into the current device and kept until
 * {@link #close()}. Each {@code .cu} file of {@code src/main/cuda} is one module, named after the
 * file; tests ship their own modules the same way.
 *
 * <pre>{@code
 * try (KernelLibrary kernels = KernelLibrary.forClasspath()) {
 *     Kernel k = kernels.module("device_api_test").kernel("iris_test_store");
 * }
 * }</pre>
 */
public final class KernelLibrary implements AutoCloseable {
    private final Class<?> anchor;
    private final Map<String, KernelModule> modules = new ConcurrentHashMap<>();

    private KernelLibrary(Class<?> anchor) {
        this.anchor = anchor;
    }

    /** Modules found as class-path resources under {@code dev/irisjvm/kernels/}. */
    public static KernelLibrary forClasspath() {
        return new KernelLibrary(KernelLibrary.class);
    }

    /** The module built from {@code <name>.cu}, loaded once. */
    public KernelModule module(String name) {
        return modules.computeIfAbsent(name, n -> KernelModule.fromResource(anchor, n + ".fatbin"));
    }

    @Override
    public void close() {
        modules.values().forEach(KernelModule::close);
        modules.clear();
    }
}
