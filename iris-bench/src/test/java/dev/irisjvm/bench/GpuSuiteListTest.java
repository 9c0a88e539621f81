package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The GPU suite that {@code bin/gpu-bundle}'s run-gpu-tests runs (and whose JSON summaries the GPU
 * test log cites as "the whole suite") is exactly the project's {@code @Tag("gpu")} test classes:
 * a new class that is not listed would never run on the GPU host.
 */
class GpuSuiteListTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern GPU_TAG = Pattern.compile("(?m)^@Tag\\(\"gpu\"\\)$");

    @Test
    void theBundlesSuiteListsEveryGpuTestClass() throws IOException {
        assertEquals(taggedGpuClasses(), listedInBundle(), "bin/gpu-bundle's selection=(...) against the @Tag(\"gpu\") test classes");
    }

    private static Set<String> taggedGpuClasses() throws IOException {
        Set<String> classes = new TreeSet<>();
        try (Stream<Path> files = Files.walk(ROOT, 12)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/test/java/")
                    && !p.toString().contains("/target/"))::iterator) {
                String text = Files.readString(f);
                if (GPU_TAG.matcher(text).find()) {
                    String path = f.toString();
                    String name = path.substring(path.indexOf("/src/test/java/") + "/src/test/java/".length(), path.length() - 5);
                    classes.add(name.replace('/', '.'));
                }
            }
        }
        assertTrue(classes.size() >= 10, "found " + classes);
        return classes;
    }

    private static Set<String> listedInBundle() throws IOException {
        String script = Files.readString(ROOT.resolve("bin/gpu-bundle"));
        int start = script.indexOf("selection=(");
        assertTrue(start >= 0, "bin/gpu-bundle has no selection=(...)");
        String block = script.substring(start, script.indexOf(')', start));
        Set<String> listed = new TreeSet<>();
        Matcher m = Pattern.compile("--select-class\\s+([\\w.]+)").matcher(block);
        while (m.find()) {
            listed.add(m.group(1));
        }
        return listed;
    }
}
