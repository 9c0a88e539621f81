package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The CUDA headers a runtime-compiled kernel needs besides ours: {@code cuda_fp16.h} /
 * {@code cuda_bf16.h} and libcu++ ({@code cuda/atomic}, {@code cuda/std/...}), which NVRTC does not
 * carry. They come with the CUDA toolkit (libcu++ under {@code include/cccl} since CUDA 13) or with
 * the nvidia wheels ({@code site-packages/nvidia/cu13/include}). {@code IRIS_CUDA_INCLUDE} (or the
 * system property {@code iris.cuda.include}), a path list, names them explicitly; otherwise the
 * folders next to the loaded NVRTC come first, then {@code $CUDA_HOME}, {@code $CUDA_PATH},
 * {@code /usr/local/cuda}, {@code /usr/local/cuda-13.*} and the wheels.
 *
 * <pre>{@code
 * for (Path dir : CudaIncludes.find(Nvrtc.library(), System.getenv())) options.add("-I" + dir);
 * }</pre>
 */
public final class CudaIncludes {
    public static final String VARIABLE = "IRIS_CUDA_INCLUDE";
    public static final String PROPERTY = "iris.cuda.include";

    private CudaIncludes() {}

    /** The include folders to pass, libcu++'s first; an exception listing what was looked at when none has both. */
    public static List<Path> find(String nvrtcLibrary, Map<String, String> env) {
        String explicit = System.getProperty(PROPERTY, env.getOrDefault(VARIABLE, ""));
        if (!explicit.isBlank()) {
            List<Path> dirs = new ArrayList<>();
            for (String d : explicit.split(File.pathSeparator)) {
                if (!d.isBlank()) {
                    dirs.add(Path.of(d));
                }
            }
            return dirs;
        }
        List<Path> looked = new ArrayList<>();
        for (Path include : candidates(nvrtcLibrary, env)) {
            looked.add(include);
            Path cccl = include.resolve("cccl");
            boolean half = Files.isRegularFile(include.resolve("cuda_fp16.h"));
            if (half && Files.isRegularFile(cccl.resolve("cuda/atomic"))) {
                return List.of(cccl, include);
            }
            if (half && Files.isRegularFile(include.resolve("cuda/atomic"))) {
                return List.of(include);
            }
        }
        throw new IrisException(NativeCalls.rankLabel() + ": no CUDA headers for runtime compilation (cuda_fp16.h and "
                + "libcu++'s cuda/atomic, in include/ or include/cccl/) in any of " + looked + "; install the CUDA "
                + "toolkit, or the wheels nvidia-cuda-runtime and nvidia-cuda-cccl, or set " + VARIABLE);
    }

    /** Include folders to look in, in order, without duplicates. */
    static List<Path> candidates(String nvrtcLibrary, Map<String, String> env) {
        Set<Path> out = new LinkedHashSet<>();
        if (nvrtcLibrary != null && !nvrtcLibrary.isBlank()) {
            Path lib = Path.of(nvrtcLibrary).toAbsolutePath().getParent();
            if (lib != null && lib.getParent() != null) {
                out.add(lib.getParent().resolve("include"));   // toolkit lib64/, targets/<arch>/lib/, wheels' lib/
            }
        }
        for (String variable : new String[] {"CUDA_HOME", "CUDA_PATH"}) {
            String root = env.get(variable);
            if (root != null && !root.isBlank()) {
                out.add(Path.of(root, "include"));
            }
        }
        out.add(Path.of("/usr/local/cuda/include"));
        for (Path toolkit : list(Path.of("/usr/local"), "cuda-13")) {
            out.add(toolkit.resolve("include"));
        }
        List<Path> prefixes = new ArrayList<>();
        for (String variable : new String[] {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
            String prefix = env.get(variable);
            if (prefix != null && !prefix.isBlank()) {
                prefixes.add(Path.of(prefix));
            }
        }
        prefixes.add(Path.of(System.getProperty("user.home"), ".local"));
        prefixes.add(Path.of("/usr/local"));
        prefixes.add(Path.of("/usr"));
        for (Path prefix : prefixes) {
            for (Path python : list(prefix.resolve("lib"), "python3")) {
                for (String site : new String[] {"site-packages", "dist-packages"}) {
                    out.add(python.resolve(site).resolve("nvidia/cu13/include"));
                }
            }
        }
        return new ArrayList<>(out);
    }

    /** Entries of {@code dir} whose name starts with {@code prefix}, newest version first. */
    private static List<Path> list(Path dir, String prefix) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(p -> p.getFileName().toString().startsWith(prefix))
                    .sorted(Comparator.comparing((Path p) -> p.getFileName().toString()).reversed()).toList();
        } catch (IOException e) {
            return List.of();
        }
    }
}
