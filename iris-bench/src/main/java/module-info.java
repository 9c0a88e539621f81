/**
 * The benchmarks and their reports ({@code bin/iris-bench}): sweeps of the kernels against cuBLAS,
 * cuBLASLt and NCCL, JMH runs inside every rank, and the Markdown and charts drawn from their JSON.
 * A tool, not a library: it exports nothing.
 *
 * <p>It runs on the class path ({@code bin/iris-bench} puts {@code iris-bench/target/lib/*} there):
 * the ranks of a sweep are started by {@code bin/iris-run} with the same class path, and JMH forks
 * its measuring JVMs with a class path too ({@code org.openjdk.jmh.Main}); neither takes a module
 * path. This descriptor says what the tool uses of the library, through the exports the other
 * modules make to it alone, and lets the commands that start no process (the reports, the status
 * section, the help) run on the module path as well:
 *
 * <pre>{@code
 * java -p iris-bench/target/lib -m dev.irisjvm.bench/dev.irisjvm.bench.cli.IrisBench report gemm --out docs/benchmarks
 * }</pre>
 *
 * The charts need java.desktop, which a module-path run must have; the GPU bundle's runtime lacks
 * it and runs the tool on the class path, where the trace timeline is left out.
 */
module dev.irisjvm.bench {
    requires dev.irisjvm.kernels;
    requires dev.irisjvm.runtime;  // the RMA kernels' argument struct (iris/abi/rma_bench.h)
    requires dev.irisjvm.examples;
    requires org.bytedeco.javacpp;
    requires com.fasterxml.jackson.databind;
    requires info.picocli;
    // Automatic modules named after their jars (jmh-core 1.37 and xchart 4.0.3 give no name of their own).
    requires jmh.core;
    requires xchart;
    requires java.desktop;  // the charts: java.awt, javax.imageio

    // Commands and their options, which picocli fills in and instantiates by reflection.
    opens dev.irisjvm.bench to info.picocli;
    opens dev.irisjvm.bench.attention to info.picocli;
    opens dev.irisjvm.bench.ccl to info.picocli;
    opens dev.irisjvm.bench.cli to info.picocli;
    opens dev.irisjvm.bench.fused to info.picocli;
    opens dev.irisjvm.bench.gemm to info.picocli;
    opens dev.irisjvm.bench.jit to info.picocli;
    opens dev.irisjvm.bench.moe to info.picocli;
    opens dev.irisjvm.bench.nodes to info.picocli;
    opens dev.irisjvm.bench.step to info.picocli;
    // Options too, and records that Jackson reads and writes (results, targets, the rank logs).
    opens dev.irisjvm.bench.report to info.picocli, com.fasterxml.jackson.databind;
    opens dev.irisjvm.bench.rma to info.picocli, com.fasterxml.jackson.databind, dev.irisjvm.core;  // core: rma_bench.fatbin
    opens dev.irisjvm.bench.results to com.fasterxml.jackson.databind;
    // The benchmarks and the classes JMH's annotation processor generates for them.
    opens dev.irisjvm.bench.jmh to jmh.core;
    opens dev.irisjvm.bench.jmh.jmh_generated to jmh.core;
}
