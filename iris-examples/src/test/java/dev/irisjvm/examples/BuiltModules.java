package dev.irisjvm.examples;

import java.io.File;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * This build's modules and the libraries they need, found on the test class path (the jars, or
 * the classes folders of a build that stopped before packaging): the module path a user's
 * application would have.
 */
final class BuiltModules {
    /** Our modules, each of which must carry a descriptor. */
    static final List<String> OURS = List.of("dev.irisjvm.runtime", "dev.irisjvm.core", "dev.irisjvm.kernels",
            "dev.irisjvm.launch", "dev.irisjvm.examples");

    private BuiltModules() {}

    /** Class path entries that hold a module: jars, and classes folders with a module-info.class. */
    static List<Path> modulePath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(Path::of)
                .filter(p -> !isTestLibrary(p.getFileName().toString()))
                .filter(p -> p.toString().endsWith(".jar") ? Files.isRegularFile(p) : Files.exists(p.resolve("module-info.class")))
                .collect(Collectors.toList());
    }

    /** Our modules by name, from {@link #modulePath()}. */
    static Map<String, ModuleReference> ours() {
        Map<String, ModuleReference> found = new TreeMap<>();
        for (ModuleReference m : ModuleFinder.of(modulePath().toArray(Path[]::new)).findAll()) {
            if (m.descriptor().name().startsWith("dev.irisjvm.")) {
                found.put(m.descriptor().name(), m);
            }
        }
        return found;
    }

    /**
     * JUnit and its helpers, test jars (iris-core's, for its test utilities) and the NVRTC the compile
     * tests use: on the test class path, not on an application's module path.
     */
    private static boolean isTestLibrary(String fileName) {
        return fileName.startsWith("junit-") || fileName.startsWith("opentest4j-") || fileName.startsWith("apiguardian-")
                || fileName.endsWith("-tests.jar") || fileName.startsWith("cuda-redist-");
    }
}
