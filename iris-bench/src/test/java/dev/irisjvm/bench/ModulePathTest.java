package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * iris-bench's descriptor on the module path, which the other tests (on the class path) never
 * read: its graph resolves with the exports the library makes to this module alone, and a report,
 * which reads the examples' sources, the built-in targets through Jackson and its options through
 * picocli, renders there as it does on the class path.
 */
class ModulePathTest {
    private static final String BENCH = "dev.irisjvm.bench";

    @Test
    void theGraphResolvesWithTheExportsMadeToTheBenchmarks() {
        Map<String, ModuleDescriptor> graph = Configuration.resolve(ModuleFinder.of(modulePath().toArray(Path[]::new)),
                        List.of(ModuleLayer.boot().configuration()), ModuleFinder.of(), Set.of(BENCH))
                .modules().stream().collect(Collectors.toMap(ResolvedModule::name, m -> m.reference().descriptor()));

        assertEquals(Set.of(), graph.get(BENCH).exports(), "a tool, not a library");
        assertEquals(Set.of("dev.irisjvm.kernels", "dev.irisjvm.kernels.baselines", "dev.irisjvm.kernels.nccl"),
                exportedTo(graph.get("dev.irisjvm.kernels")));
        assertEquals(Set.of("dev.irisjvm.core.internal"), exportedTo(graph.get("dev.irisjvm.core")));
        assertEquals(Set.of("dev.irisjvm.examples"), exportedTo(graph.get("dev.irisjvm.examples")));
        assertTrue(graph.get("dev.irisjvm.examples").opens().stream()
                .anyMatch(o -> o.source().equals("dev.irisjvm.examples") && o.targets().contains(BENCH)), "the example sources");
    }

    @Test
    @Timeout(120)
    void aReportRendersOnTheModulePath(@TempDir Path out) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.awt.headless=true", "--module-path",
                modulePath().stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
                "--module", BENCH + "/dev.irisjvm.bench.cli.IrisBench"));
        command.addAll(List.of("report", "gemm", "--sweep", Path.of("../docs/benchmarks/gemm-sweep.json").toString(),
                "--out", out.toString()));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(100, TimeUnit.SECONDS), output);

        for (String broken : List.of("IllegalAccess", "InaccessibleObjectException", "NoClassDefFoundError", "FindException",
                "ResolutionException")) {
            assertFalse(output.contains(broken), broken + " in:\n" + output);
        }
        assertEquals(0, child.exitValue(), output);
        assertTrue(Files.readString(out.resolve("gemm.md")).contains("cuBLAS"), output);
        assertTrue(Files.size(out.resolve("gemm-tflops.png")) > 0, output);
    }

    /** The packages {@code module} exports to iris-bench by name. */
    private static Set<String> exportedTo(ModuleDescriptor module) {
        return module.exports().stream().filter(e -> e.targets().contains(BENCH)).map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
    }

    /**
     * This test's class path less JUnit, the test classes and the test jars (iris-core's, which shares
     * its packages): iris-bench's classes folder (with its module-info.class) and the jars it runs
     * with, as {@code iris-bench/target/lib} holds them.
     */
    private static List<Path> modulePath() {
        List<Path> path = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry);
            boolean module = entry.endsWith(".jar") ? Files.isRegularFile(p) : Files.exists(p.resolve("module-info.class"));
            if (module && !isTestOnly(p.getFileName().toString())) {
                path.add(p);
            }
        }
        return path;
    }

    private static boolean isTestOnly(String jar) {
        return jar.startsWith("junit-") || jar.startsWith("opentest4j-") || jar.startsWith("apiguardian-") || jar.endsWith("-tests.jar");
    }
}
