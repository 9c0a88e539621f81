package dev.irisjvm.core.gpu;

import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import java.util.Locale;
import java.util.Map;

/**
 * The GPU platform a native build of Iris targets: NVIDIA's CUDA or AMD's HIP (ROCm). One process
 * loads one of them ({@link NativeLibrary} picks it by what the machine has); {@link #current()}
 * says which.
 *
 * <p>What each platform ships, so that one class path can carry both: the native libraries of
 * iris-native's {@code linux-x86_64} jar (CUDA) or {@code linux-x86_64-hip} jar (HIP), and every
 * kernel module as {@code NAME.fatbin} (CUDA) or {@code NAME.hsaco} (a HIP code-object bundle for
 * gfx90a and gfx940). A module that cannot exist on a platform (NVIDIA-only code: wgmma/TMA
 * mainloops) ships {@code NAME.unavailable-hip} with the requirement, and loading it raises
 * {@link IrisPlatformException}: "not available on this platform (HIP): NAME needs sm_90a
 * (wgmma/TMA)".
 *
 * <p>What is tested where: CUDA runs on NVIDIA H200s; the HIP build is compiled and linked in CI
 * and has never run on an AMD GPU.
 */
public enum Platform {
    CUDA("CUDA", "cuda", ".fatbin", ""),
    HIP("HIP", "hip", ".hsaco", "-hip");

    /** Environment variable (or system property {@code iris.platform}) that forces a platform. */
    public static final String PLATFORM_VARIABLE = "IRIS_PLATFORM";
    /** Environment variable that puts the symmetric heap in fine-grained memory (AMD; see iris_malloc_heap). */
    public static final String FINE_GRAINED_HEAP_VARIABLE = "IRIS_HEAP_FINE_GRAINED";

    private final String displayName;
    private final String id;
    private final String codeObjectSuffix;
    private final String classifierSuffix;

    Platform(String displayName, String id, String codeObjectSuffix, String classifierSuffix) {
        this.displayName = displayName;
        this.id = id;
        this.codeObjectSuffix = codeObjectSuffix;
        this.classifierSuffix = classifierSuffix;
    }

    /** The platform of the loaded native runtime; throws if it could not be loaded. */
    public static Platform current() {
        return NativeLibrary.platform();
    }

    /** "CUDA" or "HIP", as {@code iris_platform_name()} says it. */
    public String displayName() {
        return displayName;
    }

    /** Lower-case name: {@code cuda}, {@code hip}. */
    public String id() {
        return id;
    }

    /** Prefix of the runtime API's calls in error messages: {@code cuda}, {@code hip}. */
    public String apiPrefix() {
        return id;
    }

    /** {@code .fatbin} or {@code .hsaco}. */
    public String codeObjectSuffix() {
        return codeObjectSuffix;
    }

    /** Suffix of the marker that stands for a module this platform cannot run: {@code .unavailable-hip}. */
    public String unavailableSuffix() {
        return ".unavailable-" + id;
    }

    /** The Maven classifier of iris-native's native jar for this platform, e.g. {@code linux-x86_64-hip}. */
    public String nativeClassifier(String javacppPlatform) {
        return javacppPlatform + classifierSuffix;
    }

    /** The JavaCPP platform extension under which this platform's native libraries live ("" or "-hip"). */
    public String javacppExtension() {
        return classifierSuffix;
    }

    /** The platform named by {@code iris_platform_name()} or by a user ({@code cuda}, {@code HIP}, {@code rocm}). */
    public static Platform fromName(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        return switch (n) {
            case "cuda", "nvidia" -> CUDA;
            case "hip", "rocm", "amd" -> HIP;
            default -> throw new IllegalArgumentException("unknown GPU platform '" + name + "': expected cuda or hip");
        };
    }

    /**
     * A runtime or driver version as this platform encodes it: CUDA {@code 1000 * major + 10 *
     * minor} (13000 reads "13.0"), HIP {@code 10000000 * major + 100000 * minor + patch}
     * (50221153 reads "5.2.21153").
     */
    public String formatVersion(int version) {
        if (this == CUDA) {
            return (version / 1000) + "." + (version % 1000) / 10;
        }
        if (version < 10_000_000) {
            return Integer.toString(version);  // not in HIP_VERSION form: as reported
        }
        return (version / 10_000_000) + "." + (version / 100_000) % 100 + "." + version % 100_000;
    }

    /**
     * The resource of a kernel module for this platform: a name ending in another platform's
     * suffix gets this platform's ({@code x.fatbin} reads {@code x.hsaco} on HIP), a name without
     * one gets it appended, anything else (e.g. {@code .cubin}, {@code .ptx}) is kept as given.
     */
    public String codeObjectResource(String resource) {
        for (Platform p : values()) {
            if (resource.endsWith(p.codeObjectSuffix)) {
                return resource.substring(0, resource.length() - p.codeObjectSuffix.length()) + codeObjectSuffix;
            }
        }
        String file = resource.substring(resource.lastIndexOf('/') + 1);
        return file.contains(".") ? resource : resource + codeObjectSuffix;
    }

    /**
     * The exception for code that this platform cannot run:
     * {@code "<rank>: not available on this platform (HIP): <what> needs <requirement>"}.
     */
    public IrisPlatformException unavailable(String what, String requirement) {
        return new IrisPlatformException(NativeCalls.rankLabel() + ": not available on this platform (" + displayName
                + "): " + what + " needs " + requirement, this, what, requirement);
    }

    /**
     * Throws {@link IrisPlatformException} unless the loaded runtime is {@code needed}; for Java
     * wrappers of NVIDIA-only kernels, e.g. {@code Platform.require(Platform.CUDA, "gemm_wgmma",
     * "sm_90a (wgmma/TMA)")}, called before anything is loaded or launched.
     */
    public static void require(Platform needed, String what, String requirement) {
        requireOn(current(), needed, what, requirement);
    }

    /** {@link #require} against a given platform (testable without a GPU). */
    public static void requireOn(Platform actual, Platform needed, String what, String requirement) {
        if (actual != needed) {
            throw actual.unavailable(what, requirement);
        }
    }

    /**
     * The {@code iris_malloc_heap} flags for this environment: {@code IRIS_HEAP_FINE_GRAINED=1}
     * asks for fine-grained heap memory on AMD (no effect on CUDA), otherwise the default
     * (plain device memory with system-scope atomics; why, see iris_malloc_heap in memory.cpp).
     */
    public static int heapFlags(Map<String, String> env) {
        String v = env.get(FINE_GRAINED_HEAP_VARIABLE);
        boolean fine = v != null && (v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes"));
        return fine ? 1 : 0;  // IRIS_HEAP_FINE_GRAINED, IRIS_HEAP_DEFAULT (iris_runtime.h)
    }

    @Override
    public String toString() {
        return displayName;
    }
}
