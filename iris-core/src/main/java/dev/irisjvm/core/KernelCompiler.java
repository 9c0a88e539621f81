package dev.irisjvm.core;

import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.internal.CudaIncludes;
import dev.irisjvm.core.internal.DeviceHeaders;
import dev.irisjvm.core.internal.KernelCache;
import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.Nvrtc;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Compiles CUDA C++ source at run time (NVRTC) into a cubin for one GPU architecture, against the
 * device headers that ship in iris-native's jar ({@code #include <iris/iris.cuh>} just works), and
 * keeps the result in a disk cache so that every later compile of the same source, options,
 * headers, architecture, compiler and driver is a file read. Checked mode compiles with
 * {@code -DIRIS_CHECKED=1}, in which every remote address is bounds-checked. Immutable: the
 * {@code with...} methods return a new compiler.
 *
 * <p>Default options: {@code -arch=<architecture> -std=c++17 -default-device} (functions without
 * an execution space are device functions), the shipped headers' and the CUDA headers' include
 * paths, then yours. NVRTC and the CUDA headers are found as the README's "Your own kernels" says;
 * the cache lives in {@code IRIS_CACHE_DIR} (else {@code ~/.cache/iris-jvm}). To ship precompiled
 * kernels instead, compile them with nvcc against {@link #headersDirectory()} using
 * {@link #nvccOptions()}, and load the cubin or fatbin with {@link DeviceModule#load}.
 *
 * <pre>{@code
 * KernelCompiler compiler = KernelCompiler.forIris(iris);           // this GPU, iris's checked mode
 * try (DeviceModule m = compiler.compile("scale.cu", """
 *         #include <iris/iris.cuh>
 *         extern "C" __global__ void scale(float* x, float a, uint64_t n) {
 *             for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= a;
 *         }""").load()) {
 *     m.launch("scale", LaunchShape.of(132, 256), iris.stream(), x, 2.0f, x.numel());
 * }
 * }</pre>
 */
public final class KernelCompiler {
    private static final Pattern ARCHITECTURE = Pattern.compile("sm_[0-9]{2,3}[af]?");
    /** Bumped when what a key covers changes, so that old entries are not read under new rules. */
    private static final String KEY_FORMAT = "iris-rtc-1";

    private final String architecture;
    private final boolean checked;
    private final List<String> options;
    private final Path cacheRoot;

    private KernelCompiler(String architecture, boolean checked, List<String> options, Path cacheRoot) {
        this.architecture = architecture;
        this.checked = checked;
        this.options = List.copyOf(options);
        this.cacheRoot = cacheRoot;
    }

    /** For an explicit architecture such as {@code sm_90a} or {@code sm_80}; no GPU is needed to compile. */
    public static KernelCompiler forArchitecture(String architecture) {
        if (architecture == null || !ARCHITECTURE.matcher(architecture).matches()) {
            throw new IllegalArgumentException("architecture must look like sm_90a or sm_80, got '" + architecture + "'");
        }
        return new KernelCompiler(architecture, false, List.of(), KernelCache.defaultRoot());
    }

    /** For the calling thread's current GPU ({@code sm_90a} on an H100 or H200). */
    public static KernelCompiler forCurrentDevice() {
        return forArchitecture(architectureOf(Gpu.properties(Gpu.currentDevice())));
    }

    /** For the GPU {@code iris} drives, checked when iris runs in checked mode ({@code IRIS_CHECK}). */
    public static KernelCompiler forIris(Iris iris) {
        return forArchitecture(architectureOf(Gpu.properties(iris.device()))).checked(iris.config().checked());
    }

    /**
     * {@code sm_<major><minor>}, with the {@code a} suffix from compute capability 9.0 on: the code
     * runs only on the GPU it was compiled for anyway, and the suffix enables that GPU's own
     * instructions (wgmma, setmaxnreg).
     */
    static String architectureOf(DeviceProperties p) {
        return "sm_" + p.major() + p.minor() + (p.major() >= 9 ? "a" : "");
    }

    /** Compiles the checked variant ({@code -DIRIS_CHECKED=1}) when {@code on}. */
    public KernelCompiler checked(boolean on) {
        return new KernelCompiler(architecture, on, options, cacheRoot);
    }

    /** Adds NVRTC options after the defaults, e.g. {@code -DTILE=128} or {@code -lineinfo}. */
    public KernelCompiler withOptions(String... extra) {
        List<String> all = new ArrayList<>(options);
        for (String o : extra) {
            all.add(Objects.requireNonNull(o, "option"));
        }
        return new KernelCompiler(architecture, checked, all, cacheRoot);
    }

    /** Keeps the cache (and the unpacked headers) under {@code root} instead of the default. */
    public KernelCompiler withCacheDirectory(Path root) {
        return new KernelCompiler(architecture, checked, options, Objects.requireNonNull(root, "root"));
    }

    public String architecture() {
        return architecture;
    }

    /**
     * The folder that holds the shipped device headers ({@code iris/iris.cuh}, {@code iris/gemm.cuh},
     * ...), unpacked from iris-native's jar into this compiler's cache if they are not there yet: the
     * include path of every compile, and the one to give nvcc for kernels compiled ahead of time. Its
     * name is the headers' content digest, so it never changes under a running program.
     */
    public Path headersDirectory() {
        return DeviceHeaders.unpack(cacheRoot).directory();
    }

    /**
     * The nvcc options that compile a kernel ahead of time as {@link #compile} does at run time:
     * {@code -arch=<architecture> -std=c++17 -I<headers>}, {@code -DIRIS_CHECKED=1} when checked,
     * then yours. Add {@code -cubin} or {@code -fatbin} and {@code -o}, and load the result with
     * {@link DeviceModule#load}. nvcc has no {@code -default-device}: mark device functions
     * {@code __device__}; it finds the CUDA headers itself.
     *
     * <pre>{@code
     * List<String> cmd = new ArrayList<>(List.of("nvcc", "-cubin", "-o", "mine.cubin"));
     * cmd.addAll(KernelCompiler.forArchitecture("sm_90a").nvccOptions());
     * cmd.add("mine.cu");
     * }</pre>
     */
    public List<String> nvccOptions() {
        List<String> all = new ArrayList<>(List.of("-arch=" + architecture, "-std=c++17", "-I" + headersDirectory()));
        if (checked) {
            all.add("-DIRIS_CHECKED=1");
        }
        all.addAll(options);
        return all;
    }

    public boolean isChecked() {
        return checked;
    }

    /**
     * Compiles {@code source}, named {@code name} in messages, or reads it from the cache. A source
     * that does not compile raises {@link KernelCompileException} with the compiler's log; a compiler
     * that cannot be found raises {@link IrisNativeException} listing where it was looked for.
     */
    public CompiledModule compile(String name, String source) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        KernelCache cache = new KernelCache(cacheRoot);
        List<String> all = nvrtcOptions();
        String key = KernelCache.key(keyParts(name, source, all, Nvrtc.version(), driverDescription()));
        Optional<byte[]> cached = cache.read(key);
        if (cached.isPresent()) {
            return new CompiledModule(name, architecture, cached.get(), "", key, true);
        }
        Nvrtc.Result result = Nvrtc.compile(name, source, all);
        if (!result.compiled()) {
            throw new KernelCompileException(NativeCalls.rankLabel() + ": " + name + " does not compile for " + architecture
                    + (checked ? " (checked)" : "") + ":\n" + result.log(), name, architecture, result.log());
        }
        cache.write(key, result.code());
        return new CompiledModule(name, architecture, result.code(), result.log(), key, false);
    }

    /** Compiles a source shipped as a class-path resource next to {@code anchor}, named after its file. */
    public CompiledModule compileResource(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IrisException(NativeCalls.rankLabel() + ": kernel source '" + resource + "' not found next to "
                        + anchor.getName());
            }
            return compile(resource.substring(resource.lastIndexOf('/') + 1),
                    new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IrisException(NativeCalls.rankLabel() + ": cannot read kernel source '" + resource + "'", e);
        }
    }

    /**
     * The options {@link #compile} gives NVRTC, which the cache key covers too: the defaults, the
     * include paths of the shipped headers (unpacked first if they are not yet) and of the CUDA
     * headers, checked mode's define, then yours. Loads NVRTC to find the CUDA headers beside it.
     *
     * <pre>{@code
     * KernelCompiler.forArchitecture("sm_90a").checked(true).nvrtcOptions();
     * // [-arch=sm_90a, -std=c++17, -default-device, -I<cache>/include/<digest>, -I/usr/local/cuda/include, -DIRIS_CHECKED=1]
     * }</pre>
     */
    public List<String> nvrtcOptions() {
        return fullOptions(DeviceHeaders.unpack(cacheRoot).directory(), CudaIncludes.find(Nvrtc.library(), System.getenv()));
    }

    /** The defaults, the include paths, checked mode's define, then the caller's options. */
    List<String> fullOptions(Path deviceHeaders, List<Path> cudaIncludes) {
        List<String> all = new ArrayList<>(List.of("-arch=" + architecture, "-std=c++17", "-default-device"));
        all.add("-I" + deviceHeaders);
        for (Path p : cudaIncludes) {
            all.add("-I" + p);
        }
        if (checked) {
            all.add("-DIRIS_CHECKED=1");
        }
        all.addAll(options);
        return all;
    }

    /**
     * What the cache key covers: the shipped headers through their content-named include path, the
     * CUDA headers through theirs and the compiler's version, the driver where a GPU is present
     * (a newer driver may load the same cubin differently, so its entries are kept apart).
     */
    static List<String> keyParts(String name, String source, List<String> options, int nvrtcVersion, String driver) {
        List<String> parts = new ArrayList<>(List.of(KEY_FORMAT, name, source, "nvrtc " + nvrtcVersion, driver));
        parts.addAll(options);
        return parts;
    }

    private static String driverDescription() {
        Gpu.GpuProbe probe = Gpu.probe();
        return probe.deviceCount() > 0 ? Gpu.runtimeDescription() : "no GPU";
    }
}
