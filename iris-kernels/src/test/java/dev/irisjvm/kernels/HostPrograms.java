package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The host programs of src/test/native (built by this module's CMakeLists.txt into the folder the
 * system property {@code iris.kernels.native-tests} names): device-side tables and arithmetic run on
 * the CPU, whose output unit tests hold the Java side against.
 *
 * <pre>{@code
 * List<String> tiles = HostPrograms.lines("gemm_schedule", List.of("--tiles"), "");
 * }</pre>
 */
public final class HostPrograms {
    private HostPrograms() {}

    /**
     * The answers of a program that answers one case a line ({@code ok ...} or {@code error ...}):
     * one per case, in order, each of them "ok" (a failure names the case, after {@code context}).
     */
    public static List<String> okAnswers(String program, List<String> cases, String context) throws IOException, InterruptedException {
        List<String> answers = lines(program, List.of(), String.join("\n", cases) + "\n");
        assertEquals(cases.size(), answers.size(), () -> program + ": one answer per case");
        for (int i = 0; i < cases.size(); i++) {
            String line = cases.get(i);
            String answer = answers.get(i);
            assertTrue(answer.startsWith("ok "), () -> context + line + ": " + answer);
        }
        return answers;
    }

    /** The lines {@code program} writes when run with {@code arguments} and {@code input} on its standard input; it must exit 0. */
    public static List<String> lines(String program, List<String> arguments, String input) throws IOException, InterruptedException {
        String dir = System.getProperty("iris.kernels.native-tests");
        assertTrue(dir != null, "iris.kernels.native-tests names the host programs' folder (iris-kernels/pom.xml)");
        Path path = Path.of(dir, program);
        assertTrue(Files.isExecutable(path), () -> path + " was not built (iris-kernels/CMakeLists.txt)");
        List<String> command = new ArrayList<>(List.of(path.toString()));
        command.addAll(arguments);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = process.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try (OutputStream in = process.getOutputStream()) {
            in.write(input.getBytes(StandardCharsets.UTF_8));
        }
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            fail(path + " did not finish within 5 minutes");
        }
        assertEquals(0, process.exitValue(), () -> path + " failed: " + output.join());
        return output.join().lines().toList();
    }
}
