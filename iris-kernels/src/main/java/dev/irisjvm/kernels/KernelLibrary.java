package dev.irisjvm.kernels;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.internal.KernelModule;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The fatbins of iris-kernels, loaded on first use into the current device and kept until
 * {@link #close()}. Each {@code .cu} file of {@code src/main/cuda} is one module, named after the
 * file; tests ship their own modules the same way.
 *
 * <p>Modules also ship as {@code NAME.checked.fatbin}, built with {@code -DIRIS_CHECKED=1}: each
 * translated remote address is bounds-checked against the heap and the ranks, and a kernel that
 * reaches outside records where (raised by the next {@code Iris.synchronize}). A library in
 * checked mode loads those (a module built without one, see {@code NAME.checked.skipped}, loads
 * plain with a warning); checked mode follows the Iris instance's
 * {@link dev.irisjvm.core.IrisConfig#checked()} ({@link #forIris}), or {@code IRIS_CHECK=1}
 * ({@link #forClasspath()}).
 *
 * <pre>{@code
 * try (KernelLibrary kernels = KernelLibrary.forIris(iris)) {
 *     Kernel k = kernels.module("device_api_test").kernel("iris_test_store");
 * }
 * }</pre>
 */
public final class KernelLibrary implements AutoCloseable {
    private final Class<?> anchor;
    private final boolean checked;
    private final Map<String, KernelModule> modules = new ConcurrentHashMap<>();

    private KernelLibrary(Class<?> anchor, boolean checked) {
        this.anchor = anchor;
        this.checked = checked;
    }

    /**
     * Modules found as class-path resources under {@code dev/irisjvm/kernels/}, in their checked
     * variants when the environment says {@code IRIS_CHECK=1} (as {@code IrisConfig.fromEnvironment} reads it).
     */
    public static KernelLibrary forClasspath() {
        return forClasspath(checkedByEnvironment(System.getenv("IRIS_CHECK")));
    }

    /** Modules under {@code dev/irisjvm/kernels/}, the checked variants if {@code checked}. */
    public static KernelLibrary forClasspath(boolean checked) {
        return new KernelLibrary(KernelLibrary.class, checked);
    }

    /** Modules in the variant that {@code iris}'s configuration asks for (checked mode or not). */
    public static KernelLibrary forIris(Iris iris) {
        return forClasspath(iris.config().checked());
    }

    /** Whether modules load in their bounds-checked variants. */
    public boolean checked() {
        return checked;
    }

    static boolean checkedByEnvironment(String value) {
        return value != null && (value.equals("1") || value.equalsIgnoreCase("true") || value.equalsIgnoreCase("yes"));
    }

    /** The module built from {@code <name>.cu}, loaded once. */
    public KernelModule module(String name) {
        return modules.computeIfAbsent(name, n -> KernelModule.fromResource(anchor, n + ".fatbin", checked));
    }

    @Override
    public void close() {
        modules.values().forEach(KernelModule::close);
        modules.clear();
    }
}
