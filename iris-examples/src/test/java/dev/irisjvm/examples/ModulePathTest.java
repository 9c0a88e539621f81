package dev.irisjvm.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The module descriptors work on the module path, not only on the class path the other tests use:
 * the graph of an application that requires the kernels resolves with the exports each module
 * promises, and such an application, started with {@code java --module-path}, loads the native
 * runtime from the platform jars and reaches Iris's API (without a GPU it fails cleanly, saying so).
 */
class ModulePathTest {
    /** JavaCPP's and our native libraries: automatic (ours) or open modules nobody requires, so added by name. */
    private static final List<String> PLATFORM_MODULES =
            List.of("org.bytedeco.javacpp.linux.x86_64", "dev.irisjvm.runtime.linux.x86_64");

    @Test
    void theExamplesGraphResolvesWithTheExportsEachModulePromises() {
        ModuleFinder finder = ModuleFinder.of(BuiltModules.modulePath().toArray(Path[]::new));
        Set<String> roots = new HashSet<>(PLATFORM_MODULES);
        roots.add("dev.irisjvm.examples");
        Configuration graph = Configuration.resolveAndBind(finder, List.of(ModuleLayer.boot().configuration()),
                ModuleFinder.of(), roots);
        Map<String, ModuleDescriptor> resolved = graph.modules().stream()
                .collect(Collectors.toMap(ResolvedModule::name, m -> m.reference().descriptor()));

        assertTrue(resolved.keySet().containsAll(List.of("dev.irisjvm.examples", "dev.irisjvm.kernels", "dev.irisjvm.core",
                "dev.irisjvm.runtime", "org.bytedeco.javacpp", "org.slf4j")), resolved.keySet().toString());
        assertEquals(Set.of("dev.irisjvm.core", "dev.irisjvm.core.env", "dev.irisjvm.core.gpu"), exports(resolved.get("dev.irisjvm.core"), null));
        assertEquals(Set.of("dev.irisjvm.core.internal"), exports(resolved.get("dev.irisjvm.core"), "dev.irisjvm.kernels"));
        assertEquals(Set.of("dev.irisjvm.kernels.attention", "dev.irisjvm.kernels.ccl", "dev.irisjvm.kernels.fused",
                "dev.irisjvm.kernels.gemm", "dev.irisjvm.kernels.moe"), exports(resolved.get("dev.irisjvm.kernels"), null));
        assertEquals(Set.of(), exports(resolved.get("dev.irisjvm.runtime"), null), "the binding is the library's own");
        assertEquals(Set.of("dev.irisjvm.runtime", "dev.irisjvm.runtime.global", "dev.irisjvm.runtime.abi",
                "dev.irisjvm.runtime.abi.global"), exports(resolved.get("dev.irisjvm.runtime"), "dev.irisjvm.core"));
        assertEquals(Set.of("dev.irisjvm.runtime.abi", "dev.irisjvm.runtime.abi.global"),
                exports(resolved.get("dev.irisjvm.runtime"), "dev.irisjvm.kernels"), "the kernel interface's structs");
        assertFalse(resolved.containsKey("dev.irisjvm.launch"), "an application does not need the launcher");
    }

    @Test
    @Timeout(120)
    void anApplicationOnTheModulePathReachesIrisAndFailsCleanlyWithoutAGpu() throws IOException, InterruptedException {
        String modulePath = BuiltModules.modulePath().stream().map(Path::toString)
                .collect(Collectors.joining(File.pathSeparator));
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modulePath, "--add-modules", String.join(",", PLATFORM_MODULES),
                "--module", "dev.irisjvm.examples/" + Example00HelloWorld.class.getName())
                .redirectErrorStream(true);
        builder.environment().keySet().removeIf(k -> k.startsWith("IRIS_"));  // one process, world of 1
        Process child = builder.start();
        child.getOutputStream().close();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), output);

        // It ran this library's code in named modules: no access, linkage or loading failure on the way.
        for (String broken : List.of("IllegalAccessError", "InaccessibleObjectException", "NoClassDefFoundError",
                "UnsatisfiedLinkError", "could not be loaded", "FindException", "ResolutionException")) {
            assertFalse(output.contains(broken), broken + " in:\n" + output);
        }
        assertNotEquals(0, child.exitValue(), output);
        // Without a GPU the native runtime loaded and asked the driver; with one, the example wants a second rank.
        assertTrue(output.contains("no GPU is visible to this process") && output.contains("GetDeviceCount")
                || output.contains("run with at least two ranks"), output);
    }

    private static Set<String> exports(ModuleDescriptor module, String to) {
        return module.exports().stream()
                .filter(e -> to == null ? !e.isQualified() : e.targets().contains(to))
                .map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
    }
}
