package dev.irisjvm.bench.results;

import java.util.List;

/**
 * One run of the run-time compilation benchmark ({@code dev.irisjvm.bench.jit.JitBench}) as it is
 * stored next to its report (raw JSON): where, with which compiler and command, and every
 * repetition's time in milliseconds (the report takes median, minimum and maximum).
 *
 * @param date          ISO date-time of the run (UTC)
 * @param hardware      e.g. "NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)"
 * @param software      e.g. "CUDA 13.0 (driver 13.0), NVRTC 13.1, Java 17.0.15"
 * @param command       the exact command that produced it
 * @param architecture  what the sources were compiled for, e.g. sm_90a
 * @param nvrtc         NVRTC's version, e.g. "13.1"
 * @param nvrtcLibrary  the file NVRTC was loaded from
 * @param driver        the runtime and driver versions as the cache key records them, e.g. "CUDA 13.0 (driver 13.0)"
 * @param cacheParent   the folder the fresh caches were made in (its file system decides the cache's part)
 * @param coldReps      compiles per source and variant, each into a fresh cache
 * @param warmReps      loads per source and variant from a filled cache
 * @param firstCompile  the process's first compile (loading NVRTC and reading the headers for the first time), before any timed one
 * @param sources       every source and variant measured
 */
public record JitBenchResult(String date, String hardware, String software, String command, String architecture, String nvrtc,
                             String nvrtcLibrary, String driver, String cacheParent, int coldReps, int warmReps,
                             FirstCompile firstCompile, List<SourceTimes> sources) implements StoredResult {
    /**
     * The process's first compile, untimed among the others.
     *
     * @param source  the source it compiled (plain)
     * @param ms      its time, from the call into the compiler to the cubin in the cache
     */
    public record FirstCompile(String source, double ms) {}

    /**
     * One source in one variant.
     *
     * @param source        e.g. 08_gemm_all_scatter.cu
     * @param example       the example that compiles it, e.g. Example08GemmAllScatter
     * @param checked       the checked variant ({@code -DIRIS_CHECKED=1}, what IRIS_CHECK selects)
     * @param lines         lines of the file
     * @param codeLines     of which neither blank nor comment only
     * @param kernels       the {@code extern "C"} kernels it defines, each looked up after every load
     * @param imageBytes    the cubin's size
     * @param options       the NVRTC options, the fresh cache folder written {@code <cache>}
     * @param unpackMs      per cold repetition: unpacking the shipped headers into the fresh cache (once per cache folder)
     * @param compileMs     per cold repetition: {@code KernelCompiler.compile} into that cache, headers already unpacked (NVRTC and the cache write)
     * @param cacheHitMs    per warm repetition: {@code KernelCompiler.compile} answered from the cache (key, file read)
     * @param moduleLoadMs  per warm repetition: the cubin loaded into the GPU and every kernel looked up
     */
    public record SourceTimes(String source, String example, boolean checked, int lines, int codeLines, List<String> kernels,
                              long imageBytes, List<String> options, List<Double> unpackMs, List<Double> compileMs,
                              List<Double> cacheHitMs, List<Double> moduleLoadMs) {
        public SourceTimes {
            kernels = List.copyOf(kernels);
            options = List.copyOf(options);
            unpackMs = List.copyOf(unpackMs);
            compileMs = List.copyOf(compileMs);
            cacheHitMs = List.copyOf(cacheHitMs);
            moduleLoadMs = List.copyOf(moduleLoadMs);
        }

        /** "plain" or "checked". */
        public String variant() {
            return checked ? "checked" : "plain";
        }
    }
}
