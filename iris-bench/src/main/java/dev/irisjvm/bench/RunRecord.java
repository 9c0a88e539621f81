package dev.irisjvm.bench;

import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What every sweep records about its run beside the measurements: the devices, the software, and
 * the command that reproduces it with every option spelled out.
 *
 * <pre>{@code
 * String hw = RunRecord.hardware(iris);                       // "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)"
 * String cmd = RunRecord.command(2, RmaSweep.class, spec);    // "bin/iris-run -n 2 -- java -cp ... RmaSweep --min-bytes 4096 ..."
 * }</pre>
 */
public final class RunRecord {
    /** The class path the recorded commands name (iris-bench's build output). */
    static final String CLASS_PATH = "'iris-bench/target/lib/*'";

    private RunRecord() {}

    /** The time now, to the second, in ISO 8601 ("2026-12-02T17:05:00Z"): the stamp of a run's result. */
    public static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** "NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)". */
    public static String device(DeviceProperties p) {
        return p.name() + " (" + p.multiprocessorCount() + " SMs, " + SizeList.format(p.totalGlobalMemory()) + ", CC "
                + p.computeCapability() + ")";
    }

    /** "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)", from every rank's device. */
    public static String hardware(Iris iris) {
        byte[][] all = iris.allGather(device(iris.deviceProperties()).getBytes(StandardCharsets.UTF_8));
        List<String> names = new ArrayList<>();
        for (byte[] b : all) {
            names.add(new String(b, StandardCharsets.UTF_8));
        }
        return describeDevices(names);
    }

    /** "2 x A" when every rank has the same device, else "A + B". */
    public static String describeDevices(List<String> perRank) {
        boolean same = perRank.stream().allMatch(perRank.get(0)::equals);
        return same ? perRank.size() + " x " + perRank.get(0) : String.join(" + ", perRank);
    }

    /** "CUDA 13.0 (driver 13.0), {@code baselines}, Java 17.0.15". */
    public static String software(String baselines) {
        return Gpu.runtimeDescription() + ", " + baselines + ", Java " + System.getProperty("java.version");
    }

    /**
     * The command that reproduces a run: {@code bin/iris-run -n world --} (when {@code world > 0}),
     * java, the main class, then {@link #options} of its command line.
     */
    public static String command(int world, Class<?> main, CommandSpec spec) {
        List<String> words = new ArrayList<>(options(spec));
        return (world > 0 ? "bin/iris-run -n " + world + " -- " : "") + "java -cp " + CLASS_PATH + " " + main.getName()
                + (words.isEmpty() ? "" : " " + ShellWords.join(words));
    }

    /**
     * Every option of a parsed command line with its value, in a form that parses back to the same
     * values: as it was given, else its default, else the value the program set (a seed chosen at
     * run time). Flags appear when set; help options and options without a value do not.
     */
    public static List<String> options(CommandSpec spec) {
        List<String> words = new ArrayList<>();
        for (OptionSpec o : spec.options()) {
            if (o.usageHelp() || o.versionHelp()) {
                continue;
            }
            Object value = o.getValue();
            if (o.typeInfo().isBoolean()) {
                if (Boolean.TRUE.equals(value)) {
                    words.add(o.longestName());
                }
                continue;
            }
            List<String> given = o.originalStringValues();
            String text = !given.isEmpty() ? given.get(given.size() - 1) : o.defaultValue() != null ? o.defaultValue()
                    : value == null ? null : value.toString();
            if (text != null) {
                words.add(o.longestName());
                words.add(text.trim());
            }
        }
        return words;
    }

    /** Writes a run's JSON through {@code writer}, making its folder first. */
    public static void write(Path out, JsonWriter writer) throws IOException {
        Path parent = out.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        writer.write(out);
    }

    /** A result's own write method. */
    public interface JsonWriter {
        void write(Path file) throws IOException;
    }
}
