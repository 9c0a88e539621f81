package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.internal.KernelCache;
import dev.irisjvm.core.internal.Nvrtc;
import dev.irisjvm.core.testing.CubinSymbols;
import dev.irisjvm.core.testing.TestNvrtc;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runtime compilation without a GPU: NVRTC from the cuda-redist test dependency compiles against
 * the headers iris-native ships, and the cubins are read back as ELF.
 */
class KernelCompilerTest {
    /** A kernel that uses the device API: a put to the next rank, a signal, an atomic. */
    static final String SOURCE = """
            #include <iris/iris.cuh>
            extern "C" __global__ void ring_put(const IRIS_GRID_CONSTANT iris::Ctx ctx, float* buffer, uint64_t n,
                                                uint64_t* flag) {
                const int peer = (ctx.rank + 1) % ctx.world;
                iris::put(ctx, buffer + n, buffer, n, peer);
                __syncthreads();
                if (threadIdx.x == 0) iris::signal(ctx, flag, 1ull, peer);
            }
            """;

    @TempDir
    Path cache;

    @BeforeAll
    static void nvrtc() {
        TestNvrtc.use();
    }

    private KernelCompiler compiler(String architecture) {
        return KernelCompiler.forArchitecture(architecture).withCacheDirectory(cache);
    }

    @Test
    void aKernelOnTheDeviceApiCompilesForHopperAndAmpere() {
        for (String arch : List.of("sm_90a", "sm_80")) {
            CompiledModule m = compiler(arch).compile("ring_put.cu", SOURCE);
            assertEquals(arch, m.architecture());
            assertFalse(m.fromCache());
            assertTrue(CubinSymbols.globalFunctions(m.image()).contains("ring_put"),
                    arch + ": " + CubinSymbols.globalFunctions(m.image()));
        }
        CompiledModule checked = compiler("sm_90a").checked(true).compile("ring_put.cu", SOURCE);
        assertTrue(CubinSymbols.globalFunctions(checked.image()).contains("ring_put"));
        assertFalse(checked.fromCache(), "the checked variant is another entry");
    }

    @Test
    void aSyntaxErrorRaisesTheLogWithItsLine() {
        String broken = SOURCE.replace("__syncthreads();", "__syncthreads();\n    undeclared_thing += 1;");
        KernelCompileException e = assertThrows(KernelCompileException.class,
                () -> compiler("sm_90a").compile("broken.cu", broken));
        assertTrue(e.log().contains("broken.cu(7)"), e.log());
        assertTrue(e.getMessage().contains("broken.cu does not compile for sm_90a") && e.getMessage().contains("error"),
                e.getMessage());
        assertEquals("broken.cu", e.sourceName());
        try (Stream<Path> entries = Files.list(cache.resolve("kernels"))) {
            assertEquals(0, entries.count(), "a failed compile leaves no entry");
        } catch (IOException notCreated) {
            // no kernels folder at all: no entry either
        }
    }

    @Test
    void theSecondCompileIsACacheHitWithTheSameCode() {
        CompiledModule first = compiler("sm_90a").compile("ring_put.cu", SOURCE);
        long start = System.nanoTime();
        CompiledModule second = compiler("sm_90a").compile("ring_put.cu", SOURCE);
        long cachedMillis = (System.nanoTime() - start) / 1_000_000;
        assertFalse(first.fromCache());
        assertTrue(second.fromCache(), "second compile of the same key");
        assertEquals(first.cacheKey(), second.cacheKey());
        assertArrayEquals(first.image(), second.image());
        assertTrue(cachedMillis < 1000, "a cache hit took " + cachedMillis + " ms");
    }

    @Test
    void optionsCheckedModeArchitectureAndSourceChangeTheKey() {
        String key = compiler("sm_90a").compile("ring_put.cu", SOURCE).cacheKey();
        assertNotEquals(key, compiler("sm_80").compile("ring_put.cu", SOURCE).cacheKey());
        assertNotEquals(key, compiler("sm_90a").withOptions("-DEXTRA=1").compile("ring_put.cu", SOURCE).cacheKey());
        assertNotEquals(key, compiler("sm_90a").checked(true).compile("ring_put.cu", SOURCE).cacheKey());
        assertNotEquals(key, compiler("sm_90a").compile("ring_put.cu", SOURCE + "\n").cacheKey());
        // The shipped headers enter through their content-named include path; the compiler and driver by version.
        KernelCompiler c = compiler("sm_90a");
        List<String> a = c.fullOptions(Path.of("/cache/include/0123456789abcdef"), List.of(Path.of("/cuda/include")));
        List<String> b = c.fullOptions(Path.of("/cache/include/fedcba9876543210"), List.of(Path.of("/cuda/include")));
        String base = KernelCache.key(KernelCompiler.keyParts("k.cu", SOURCE, a, 13010, "no GPU"));
        assertNotEquals(base, KernelCache.key(KernelCompiler.keyParts("k.cu", SOURCE, b, 13010, "no GPU")));
        assertNotEquals(base, KernelCache.key(KernelCompiler.keyParts("k.cu", SOURCE, a, 13000, "no GPU")));
        assertNotEquals(base, KernelCache.key(KernelCompiler.keyParts("k.cu", SOURCE, a, 13010,
                "CUDA 13.0 (driver 13.0)")));
        assertEquals(base, KernelCache.key(KernelCompiler.keyParts("k.cu", SOURCE, a, 13010, "no GPU")));
    }

    @Test
    void threadsCompilingOneKeyLeaveOneValidEntry() throws Exception {
        int threads = 4;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<CompiledModule>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                results.add(pool.submit(() -> {
                    start.await();
                    return compiler("sm_90a").compile("ring_put.cu", SOURCE);
                }));
            }
            start.countDown();
            byte[] image = results.get(0).get().image();
            for (Future<CompiledModule> r : results) {
                assertArrayEquals(image, r.get().image());
            }
            assertOneEntry(image);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void processesCompilingOneKeyLeaveOneValidEntry() throws Exception {
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            processes.add(child(cache.toString()).start());
        }
        for (Process p : processes) {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertEquals(0, p.waitFor(), out);
            assertTrue(out.endsWith("compiled") || out.endsWith("cached"), out);
        }
        CompiledModule here = compiler("sm_90a").compile("probe.cu", SOURCE);
        assertTrue(here.fromCache(), "the processes' entry serves this one");
        assertOneEntry(here.image());
    }

    /** The GEMM's entry header as a user includes it: the plain store epilogue, f16 in, K x N B, f32 out. */
    @Test
    void theGemmBuildingBlocksCompileAtRunTimeWithoutAWarning() {
        String gemm = """
                #include <iris/gemm.cuh>
                extern "C" __global__ void __launch_bounds__(IRIS_GEMM_THREADS, 1)
                    plain_gemm(const IRIS_GRID_CONSTANT iris_gemm_args args) {
                #if IRIS_HAS_WGMMA
                    iris::gemm::run<iris::gemm::Config<iris::f16, iris::gemm::BLayout::kn, float>>(args);
                #endif
                }
                """;
        CompiledModule m = compiler("sm_90a").compile("plain_gemm.cu", gemm);
        assertTrue(CubinSymbols.globalFunctions(m.image()).contains("plain_gemm"), CubinSymbols.globalFunctions(m.image()).toString());
        assertEquals("", m.log(), "the compiler warned");
    }

    @Test
    void theHeadersFolderAndTheNvccOptionsAreTheRuntimeCompilesOwn() {
        KernelCompiler plain = compiler("sm_90a").withOptions("-DTILE=128");
        Path headers = plain.headersDirectory();
        for (String header : List.of("iris/iris.cuh", "iris/gemm.cuh", "iris/gemm/persistent.cuh", "iris/gemm/impl/wgmma.cuh",
                "iris/abi/gemm.h")) {
            assertTrue(Files.isRegularFile(headers.resolve(header)), header + " is not in " + headers);
        }
        assertFalse(Files.exists(headers.resolve("iris/gemm/impl/wgmma_gen.py")), "the generator stays in the source tree");
        assertTrue(headers.startsWith(cache), "unpacked into the compiler's cache: " + headers);
        assertEquals(List.of("-arch=sm_90a", "-std=c++17", "-I" + headers, "-DTILE=128"), plain.nvccOptions());
        assertEquals(List.of("-arch=sm_90a", "-std=c++17", "-I" + headers, "-DIRIS_CHECKED=1", "-DTILE=128"),
                plain.checked(true).nvccOptions());
        List<String> runtime = plain.fullOptions(headers, List.of(Path.of("/cuda/include")));
        assertTrue(runtime.containsAll(plain.nvccOptions()), "every nvcc option is one the runtime compile uses: " + runtime);
    }

    @Test
    void theNvrtcOptionsAreTheOnesTheCacheKeyCovers() {
        KernelCompiler checked = compiler("sm_90a").checked(true).withOptions("-DTILE=128");
        List<String> options = checked.nvrtcOptions();
        assertEquals(List.of("-arch=sm_90a", "-std=c++17", "-default-device", "-I" + checked.headersDirectory()), options.subList(0, 4));
        assertEquals(List.of("-DIRIS_CHECKED=1", "-DTILE=128"), options.subList(options.size() - 2, options.size()));
        assertTrue(options.stream().skip(4).limit(options.size() - 6L).allMatch(o -> o.startsWith("-I")),
                "between them only the CUDA headers' include paths: " + options);
        assertFalse(compiler("sm_90a").nvrtcOptions().contains("-DIRIS_CHECKED=1"), "plain compiles are not checked");
    }

    @Test
    void aMissingCompilerNamesWhatWasTried() throws Exception {
        ProcessBuilder missing = child(cache.toString());
        int at = missing.command().indexOf("-D" + Nvrtc.LIBRARY_PROPERTY + "=" + System.getProperty(Nvrtc.LIBRARY_PROPERTY));
        missing.command().set(at, "-D" + Nvrtc.LIBRARY_PROPERTY + "=/nonexistent/libnvrtc.so.13");
        Process q = missing.start();
        String out = new String(q.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, q.waitFor(), out);
        assertTrue(out.contains("no NVRTC library could be loaded; tried:") && out.contains("/nonexistent/libnvrtc.so.13"),
                out);
    }

    private static ProcessBuilder child(String cacheDir) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                "-D" + Nvrtc.LIBRARY_PROPERTY + "=" + System.getProperty(Nvrtc.LIBRARY_PROPERTY),
                CompileOnce.class.getName(), cacheDir))).redirectErrorStream(true);
    }

    private void assertOneEntry(byte[] image) throws IOException {
        try (Stream<Path> entries = Files.list(cache.resolve("kernels"))) {
            List<Path> all = entries.toList();
            assertEquals(1, all.size(), all.toString());
            assertTrue(all.get(0).getFileName().toString().endsWith(".cubin"), all.toString());
            assertArrayEquals(image, Files.readAllBytes(all.get(0)));
        }
    }
}
