package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.runtime.global.IrisRuntime;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bytedeco.javacpp.Loader;

/**
 * Picks the native runtime by what the machine has, loads it once and remembers why it could not
 * be loaded, in the style of Netty's {@code Epoll.isAvailable()} / {@code unavailabilityCause()}.
 * Loading changes no global state beyond the loaded library (and, for the HIP build, JavaCPP's
 * platform extension, see below): no device is touched until someone asks.
 *
 * <p>Which build: iris-native ships its native libraries per platform, in the jar with classifier
 * {@code linux-x86_64} (CUDA, libraries under {@code dev/irisjvm/runtime/linux-x86_64/}) or
 * {@code linux-x86_64-hip} (HIP/ROCm, under {@code .../linux-x86_64-hip/}); either or both may be
 * on the class path. The choice, in order: {@code IRIS_PLATFORM=cuda|hip} (or the system property
 * {@code iris.platform}); the only build on the class path; with both, CUDA where an NVIDIA driver
 * is present ({@code /dev/nvidiactl}), HIP where ROCm's is ({@code /dev/kfd}) and NVIDIA's is not,
 * else CUDA. For HIP the JavaCPP platform extension {@code -hip} is set
 * ({@code org.bytedeco.javacpp.platform.extension}), which is how JavaCPP finds a variant build.
 * {@link #description()} says what was found and chosen, e.g. "HIP build (iris-native
 * linux-x86_64-hip): ROCm found (/dev/kfd), no NVIDIA driver".
 */
public final class NativeLibrary {
    /** The native build chosen for this process and why. */
    public record Selection(Platform platform, String reason) {}

    static final String EXTENSION_PROPERTY = "org.bytedeco.javacpp.platform.extension";

    private static final Selection SELECTION;
    private static final Throwable UNAVAILABILITY_CAUSE;
    private static final Platform LOADED;

    static {
        Selection selection;
        Throwable cause = null;
        Platform loaded = null;
        try {
            selection = selectForThisMachine();
        } catch (Throwable t) {
            selection = new Selection(Platform.CUDA, "platform detection failed (" + t + "); CUDA is the default");
        }
        try {
            if (selection.platform() == Platform.HIP) {
                useJavacppExtension(Platform.HIP.javacppExtension());
            }
            Loader.load(IrisRuntime.class);
            loaded = Platform.fromName(IrisRuntime.iris_platform_name().getString());
        } catch (Throwable t) {
            cause = t;
        }
        SELECTION = selection;
        UNAVAILABILITY_CAUSE = cause;
        LOADED = loaded;
    }

    private NativeLibrary() {}

    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** Why the native runtime could not be loaded, or null when it was. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** Throws an exception with the cause when the native runtime is not loadable. */
    public static void ensureAvailable() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new IrisException(NativeCalls.rankLabel() + ": the Iris native runtime (libiris, "
                    + "libjniIrisRuntime) could not be loaded: " + UNAVAILABILITY_CAUSE + " [" + description() + "]",
                    UNAVAILABILITY_CAUSE);
        }
    }

    /** The platform of the loaded runtime (what {@code iris_platform_name()} reports). */
    public static Platform platform() {
        ensureAvailable();
        return LOADED;
    }

    /** Which build was chosen and why (available even when loading failed). */
    public static Selection selection() {
        return SELECTION;
    }

    /**
     * One line for logs and error messages: which build was chosen, why, and what was loaded,
     * e.g. "CUDA build (iris-native linux-x86_64): NVIDIA driver found (/dev/nvidiactl)".
     */
    public static String description() {
        String text = SELECTION.platform() + " build (iris-native "
                + SELECTION.platform().nativeClassifier(Loader.getPlatform()) + "): " + SELECTION.reason();
        if (LOADED != null && LOADED != SELECTION.platform()) {
            text += "; but the library that loaded is the " + LOADED + " build";
        }
        return text;
    }

    // ---- choosing -------------------------------------------------------------------------------

    private static Selection selectForThisMachine() {
        String forced = System.getProperty("iris.platform");
        String forcedBy = "-Diris.platform=" + forced;
        if (forced == null || forced.isBlank()) {
            forced = System.getenv(Platform.PLATFORM_VARIABLE);
            forcedBy = Platform.PLATFORM_VARIABLE + "=" + forced;
        }
        String javacppPlatform = Loader.getPlatform();
        return select(forced == null || forced.isBlank() ? null : forcedBy, forced,
                Files.exists(Path.of("/dev/nvidiactl")) || Files.exists(Path.of("/proc/driver/nvidia/version")),
                Files.exists(Path.of("/dev/kfd")),
                hasBuild(javacppPlatform, Platform.CUDA), hasBuild(javacppPlatform, Platform.HIP), javacppPlatform);
    }

    private static boolean hasBuild(String javacppPlatform, Platform platform) {
        String resource = "dev/irisjvm/runtime/" + platform.nativeClassifier(javacppPlatform) + "/"
                + System.mapLibraryName("jniIrisRuntime");
        ClassLoader loader = NativeLibrary.class.getClassLoader();
        return loader != null && loader.getResource(resource) != null;
    }

    /**
     * The choice, from what was observed (no I/O here, so every branch is unit-tested).
     *
     * @param forcedBy how the user forced a platform ("IRIS_PLATFORM=hip"), or null
     * @param forced   the platform name given, when forcedBy is not null
     */
    static Selection select(String forcedBy, String forced, boolean nvidiaDriver, boolean rocmDriver,
                            boolean cudaBuild, boolean hipBuild, String javacppPlatform) {
        String machine = nvidiaDriver && rocmDriver ? "NVIDIA driver (/dev/nvidiactl) and ROCm (/dev/kfd) found"
                : nvidiaDriver ? "NVIDIA driver found (/dev/nvidiactl)"
                : rocmDriver ? "ROCm found (/dev/kfd), no NVIDIA driver"
                : "no GPU driver found (neither /dev/nvidiactl nor /dev/kfd)";
        if (forcedBy != null) {
            Platform p = Platform.fromName(forced);
            boolean present = p == Platform.CUDA ? cudaBuild : hipBuild;
            return new Selection(p, forcedBy + (present ? "" : "; but iris-native's " + p.nativeClassifier(javacppPlatform)
                    + " jar is not on the class path") + "; " + machine);
        }
        List<Platform> builds = new ArrayList<>();
        if (cudaBuild) builds.add(Platform.CUDA);
        if (hipBuild) builds.add(Platform.HIP);
        if (builds.isEmpty()) {
            return new Selection(Platform.CUDA, "no native build on the class path (iris-native's "
                    + Platform.CUDA.nativeClassifier(javacppPlatform) + " or " + Platform.HIP.nativeClassifier(javacppPlatform)
                    + " jar); " + machine);
        }
        if (builds.size() == 1) {
            Platform only = builds.get(0);
            Platform wanted = nvidiaDriver ? Platform.CUDA : rocmDriver ? Platform.HIP : only;
            String hint = wanted == only ? "" : "; this machine needs the " + wanted + " build: put iris-native's "
                    + wanted.nativeClassifier(javacppPlatform) + " jar on the class path";
            return new Selection(only, "the only build on the class path; " + machine + hint);
        }
        if (nvidiaDriver) return new Selection(Platform.CUDA, machine + "; both builds on the class path");
        if (rocmDriver) return new Selection(Platform.HIP, machine + "; both builds on the class path");
        return new Selection(Platform.CUDA, machine + "; both builds on the class path, CUDA is the default");
    }

    /** Makes JavaCPP look for libraries under "<platform><extension>/" first (its variant-build mechanism). */
    private static void useJavacppExtension(String extension) {
        String prior = System.getProperty(EXTENSION_PROPERTY);
        if (prior == null || prior.isBlank()) {
            System.setProperty(EXTENSION_PROPERTY, extension);
        } else if (!Arrays.asList(prior.split(File.pathSeparator)).contains(extension)) {
            // Prepended: presets that match an extension by suffix keep theirs, and as no other
            // extension folder holds Iris's libraries, JavaCPP finds them under "-hip".
            System.setProperty(EXTENSION_PROPERTY, extension + File.pathSeparator + prior);
        }
        Loader.loadProperties(true);
    }
}
