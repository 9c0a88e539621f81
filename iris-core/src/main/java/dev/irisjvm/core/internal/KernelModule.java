package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.NativeResource;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_function_s;
import dev.irisjvm.runtime.iris_module_s;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.bytedeco.javacpp.BytePointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiled device code (CUDA: fatbin, cubin or PTX; HIP: a code object or code-object bundle,
 * {@code .hsaco}) loaded into the current device at run time; kernels are looked up by their
 * {@code extern "C"} names.
 *
 * <pre>{@code
 * try (KernelModule m = KernelModule.fromResource(MyKernels.class, "my_kernels.fatbin")) {
 *     Kernel k = m.kernel("my_kernel");
 *     k.launch(LaunchShape.of(132, 256), stream, ctx, bufferAddress, n);
 * }
 * }</pre>
 */
public final class KernelModule extends NativeResource {
    private static final Logger LOG = LoggerFactory.getLogger(KernelModule.class);
    /** Modules whose missing checked variant was reported already (once per process). */
    private static final Set<String> WARNED_UNCHECKED = ConcurrentHashMap.newKeySet();

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

    /**
     * Loads a module shipped as a class-path resource next to {@code anchor}, in the form the loaded
     * platform runs: {@code name.fatbin} is read as {@code name.hsaco} on HIP (and a name without a
     * suffix gets the platform's). A module that does not exist for this platform raises
     * {@link IrisPlatformException}: "not available on this platform (HIP): name needs ..." with
     * the requirement the build recorded ({@code name.unavailable-hip}), or saying which platform
     * it was built for.
     */
    public static KernelModule fromResource(Class<?> anchor, String resource) {
        NativeLibrary.ensureAvailable();
        Platform platform = NativeLibrary.platform();
        return load(readImage(anchor, resource, platform), platform.codeObjectResource(resource));
    }

    /**
     * Like {@link #fromResource(Class, String)}, in the checked variant when {@code checked}: for
     * {@code name.fatbin} that is {@code name.checked.fatbin} ({@code .hsaco} on HIP), built with
     * {@code -DIRIS_CHECKED=1}, in which every translated remote address is bounds-checked. A module
     * the build made no checked variant of ships {@code name.checked.skipped} with the reason; it
     * loads plain then, with a warning (once per module) that its addresses go unchecked.
     */
    public static KernelModule fromResource(Class<?> anchor, String resource, boolean checked) {
        if (!checked) {
            return fromResource(anchor, resource);
        }
        NativeLibrary.ensureAvailable();
        return fromResource(anchor, checkedVariant(anchor, resource, NativeLibrary.platform()));
    }

    /**
     * The resource checked mode loads for {@code resource} on {@code platform}: its checked variant
     * ({@code x.fatbin} -> {@code x.checked.fatbin}), or the plain one, with a warning, where the build
     * skipped the variant ({@code x.checked.skipped}). A variant that is simply missing is returned
     * as is, so that loading it says so.
     */
    static String checkedVariant(Class<?> anchor, String resource, Platform platform) {
        String plain = platform.codeObjectResource(resource);
        int dot = plain.lastIndexOf('.');
        String base = dot > plain.lastIndexOf('/') ? plain.substring(0, dot) : plain;
        String checkedResource = base + ".checked" + plain.substring(base.length());
        if (anchor.getResource(checkedResource) == null) {
            String skipped = readText(anchor, base + ".checked.skipped");
            if (skipped != null) {
                if (WARNED_UNCHECKED.add(anchor.getName() + "/" + base)) {
                    LOG.warn("{}: checked mode: module {} has no checked variant ({}); loading it unchecked, so its "
                            + "remote addresses are not bounds-checked", NativeCalls.rankLabel(),
                            base.substring(base.lastIndexOf('/') + 1), skipped);
                }
                return resource;
            }
        }
        return checkedResource;
    }

    private static String readText(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return null;
        }
    }

    /** The bytes of {@code resource} for {@code platform}, or the exception that says why there are none. */
    static byte[] readImage(Class<?> anchor, String resource, Platform platform) {
        String resolved = platform.codeObjectResource(resource);
        try (InputStream in = anchor.getResourceAsStream(resolved)) {
            if (in == null) {
                throw missing(anchor, resource, resolved, platform);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IrisException(NativeCalls.rankLabel() + ": cannot read kernel module '" + resolved + "'", e);
        }
    }

    private static IrisException missing(Class<?> anchor, String resource, String resolved, Platform platform) {
        String base = resolved.endsWith(platform.codeObjectSuffix())
                ? resolved.substring(0, resolved.length() - platform.codeObjectSuffix().length()) : resolved;
        String module = base.substring(base.lastIndexOf('/') + 1);
        try (InputStream marker = anchor.getResourceAsStream(base + platform.unavailableSuffix())) {
            if (marker != null) {
                return platform.unavailable(module, new String(marker.readAllBytes(), StandardCharsets.UTF_8).trim());
            }
        } catch (IOException e) {
            // fall through to the general messages
        }
        for (Platform other : Platform.values()) {
            if (other != platform && anchor.getResource(base + other.codeObjectSuffix()) != null) {
                return platform.unavailable(module, "its " + platform + " code object " + module + platform.codeObjectSuffix()
                        + ", which is not on the class path (only " + module + other.codeObjectSuffix() + ", built for "
                        + other + ", is; the " + platform + " jar of its artifact has it)");
            }
        }
        String what = resolved.equals(resource) ? "'" + resource + "'"
                : "'" + resolved + "' (for '" + resource + "' on " + platform + ")";
        return new IrisException(NativeCalls.rankLabel() + ": kernel module resource " + what + " not found next to "
                + anchor.getName() + " (is the native build part of the class path?)");
    }

    /** Throws if the module is closed: its kernels cannot run then. */
    void requireOpen() {
        ensureOpen();
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
