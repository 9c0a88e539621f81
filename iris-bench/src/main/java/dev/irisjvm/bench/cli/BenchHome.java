package dev.irisjvm.bench.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the tool runs from: the project (or a GPU bundle made by bin/gpu-bundle), whose
 * {@code bin/} holds the launcher, and the Java and class path that every rank is started with.
 * bin/iris-bench passes the folder ({@code -Diris.bench.home}) and the class path as written
 * ({@code -Diris.bench.cp}, e.g. {@code iris-bench/target/lib/*}).
 */
record BenchHome(Path root, String java, String classPath) {
    /** The home this JVM was started in. */
    static BenchHome current() {
        Path root = Path.of(System.getProperty("iris.bench.home", ".")).toAbsolutePath().normalize();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("iris.bench.cp", System.getProperty("java.class.path"));
        return new BenchHome(root, java, cp);
    }

    /** The reports' folder: docs/benchmarks of the project. */
    Path defaultReports() {
        return root.resolve("docs/benchmarks");
    }

    /** bin/iris-run, which starts one process per rank. */
    String launcher() {
        return root.resolve("bin/iris-run").toString();
    }

    /**
     * {@code bin/iris-run OPTIONS -n N --} before a rank's command; OPTIONS e.g. {@code --nnodes 2
     * --simulate-nodes} for N ranks on each of 2 simulated nodes, or none for N ranks on this host.
     */
    List<String> launch(List<String> options, int ranks) {
        List<String> words = new ArrayList<>(List.of(launcher()));
        words.addAll(options);
        words.addAll(List.of("-n", Integer.toString(ranks), "--"));
        return List.copyOf(words);
    }

    /** {@code java -cp CP MAIN} */
    List<String> javaMain(String main) {
        return new ArrayList<>(List.of(java, "-cp", classPath, main));
    }

    /** A file of the project's sources, or of the bundle's bin/ where the bundle carries it; null if neither has it. */
    Path script(String sourcePath) {
        Path inSources = root.resolve(sourcePath);
        Path inBundle = root.resolve("bin").resolve(inSources.getFileName());
        return Files.isRegularFile(inSources) ? inSources : Files.isRegularFile(inBundle) ? inBundle : null;
    }

    /** A command as a reader would paste it: paths inside this home relative to it. */
    String shown(List<String> words) {
        String prefix = root + "/";
        return dev.irisjvm.bench.ShellWords.join(words.stream().map(w -> w.replace(prefix, "")).toList());
    }
}
