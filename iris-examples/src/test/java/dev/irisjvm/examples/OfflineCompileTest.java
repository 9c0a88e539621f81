package dev.irisjvm.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.testing.CubinSymbols;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kernels compiled ahead of time, as the README's "Your own kernels" says: the shipped headers come
 * out of the jar with {@link KernelCompiler#headersDirectory()}, nvcc compiles an example against
 * them with {@link KernelCompiler#nvccOptions()} into a cubin (plain and checked), and the cubin
 * holds the kernel, ready for {@code DeviceModule.load(bytes, name)}. Needs nvcc ({@code CUDA_HOME},
 * {@code /usr/local/cuda} or the PATH); skipped where there is none.
 */
class OfflineCompileTest {
    @TempDir
    Path work;

    @Test
    @Timeout(300)
    void theGemmExampleCompilesWithNvccAgainstTheShippedHeaders() throws IOException, InterruptedException {
        Path nvcc = nvcc().orElse(null);
        assumeTrue(nvcc != null, "no nvcc (CUDA_HOME, /usr/local/cuda, PATH): nothing to compile ahead of time with");
        Path source = work.resolve("08_gemm_all_scatter.cu");
        try (InputStream in = OfflineCompileTest.class.getResourceAsStream("08_gemm_all_scatter.cu")) {
            Files.write(source, in.readAllBytes());
        }
        for (boolean checked : new boolean[] {false, true}) {
            KernelCompiler compiler = KernelCompiler.forArchitecture("sm_90a").checked(checked)
                    .withCacheDirectory(work.resolve("cache"));
            assertTrue(Files.isRegularFile(compiler.headersDirectory().resolve("iris/gemm.cuh")),
                    "the GEMM's entry header ships: " + compiler.headersDirectory());
            Path cubin = work.resolve(checked ? "08.checked.cubin" : "08.cubin");
            List<String> command = new ArrayList<>(List.of(nvcc.toString(), "-cubin", "-o", cubin.toString()));
            command.addAll(compiler.nvccOptions());
            command.add(source.toString());
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(240, TimeUnit.SECONDS), "nvcc did not finish");
            assertEquals(0, p.exitValue(), String.join(" ", command) + "\n" + output);
            assertEquals("", output.strip(), "nvcc warned: " + String.join(" ", command));
            assertTrue(CubinSymbols.globalFunctions(Files.readAllBytes(cubin)).contains("gemm_all_scatter"),
                    CubinSymbols.globalFunctions(Files.readAllBytes(cubin)).toString());
        }
    }

    /** nvcc of CUDA_HOME, of /usr/local/cuda, or the first on the PATH. */
    private static Optional<Path> nvcc() {
        List<Path> candidates = new ArrayList<>();
        String home = System.getenv("CUDA_HOME");
        if (home != null && !home.isEmpty()) {
            candidates.add(Path.of(home, "bin", "nvcc"));
        }
        candidates.add(Path.of("/usr/local/cuda/bin/nvcc"));
        String path = System.getenv("PATH");
        if (path != null) {
            Stream.of(path.split(File.pathSeparator)).filter(d -> !d.isEmpty())
                    .forEach(d -> candidates.add(Path.of(d, "nvcc")));
        }
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }
}
