package dev.irisjvm.core.gpu;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_function_s;
import dev.irisjvm.runtime.iris_module_s;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bytedeco.javacpp.BytePointer;

/**
 * Compiled device code (fatbin, cubin or PTX) loaded into the current device at run time; kernels
 * are looked up by their {@code extern "C"} names.
 *
 * <pre>{@code
 * try (KernelModule m = KernelModule.fromResource(MyKernels.class, "my_kernels.fatbin")) {
 *     Kernel k = m.kernel("my_kernel");
 *     k.launch(LaunchShape.of(132, 256), stream, ctx, bufferAddress, n);
 * }
 * }</pre>
 */
public final class KernelModule extends NativeResource {
    private final iris_module_s handle;
    private final String name;
    private final Map<String, Kernel> kernels = new ConcurrentHashMap<>();

    private KernelModule(iris_module_s handle, String name) {
        this.handle = handle;
        this.name = name;
    }

    /** Loads an image into the current device. */
    public static KernelModule load(byte[] image, String name) {
        NativeLibrary.ensureAvailable();
        if (image == null || image.length == 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": image of module '" + name + "' is empty");
        }
        iris_module_s h = new iris_module_s();
        try (BytePointer bytes = new BytePointer(image)) {
            NativeCalls.check(IrisRuntime.iris_module_load_data(h, bytes, image.length),
                    "iris_module_load_data(" + name + ")");
        }
        return new KernelModule(h, name);
    }

    /** Loads a module shipped as a class-path resource next to {@code anchor}. */
    public static KernelModule fromResource(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IrisException(NativeCalls.rankLabel() + ": kernel module resource '" + resource
                        + "' not found next to " + anchor.getName() + " (is the native build part of the class path?)");
            }
            return load(in.readAllBytes(), resource);
        } catch (IOException e) {
            throw new IrisException(NativeCalls.rankLabel() + ": cannot read kernel module '" + resource + "'", e);
        }
    }

    /** The kernel of that {@code extern "C"} name; looked up once, then cached. */
    public Kernel kernel(String kernelName) {
        ensureOpen();
        return kernels.computeIfAbsent(kernelName, n -> {
            iris_function_s f = new iris_function_s();
            int status = IrisRuntime.iris_module_get_function(f, handle, n);
            if (status == IrisRuntime.IRIS_ERROR_NOT_FOUND) {
                throw new IrisException(NativeCalls.rankLabel() + ": module '" + name + "' has no kernel named '" + n
                        + "' (" + IrisRuntime.iris_last_error().getString() + ")");
            }
            NativeCalls.check(status, "iris_module_get_function(" + n + ")");
            return new Kernel(this, f, n);
        });
    }

    public String name() {
        return name;
    }

    @Override
    protected String describe() {
        return "kernel module '" + name + "'";
    }

    @Override
    protected void release() {
        NativeCalls.check(IrisRuntime.iris_module_unload(handle), "iris_module_unload(" + name + ")");
    }
}
