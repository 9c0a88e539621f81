package dev.irisjvm.bench.jit;

import dev.irisjvm.examples.Example11TrainingStep;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One kernel source of the numbered examples (iris-examples, {@code dev/irisjvm/examples/*.cu}), as
 * the examples compile it at run time: its name, its text, the example that compiles it and the
 * {@code extern "C"} kernels it defines.
 *
 * <pre>{@code
 * ExampleSource s = ExampleSource.onClassPath("08_gemm_all_scatter.cu");
 * s.example();   // "Example08GemmAllScatter"
 * s.kernels();   // ["gemm_all_scatter"]
 * }</pre>
 *
 * @param name the file name, e.g. {@code 01_load.cu}
 * @param text the source
 */
public record ExampleSource(String name, String text) {
    /** Every example's kernel source, in example order (00 and 09 compile none). */
    public static final List<String> NAMES = List.of("01_load.cu", "02_store.cu", "03_get_put_copy.cu", "04_atomics.cu",
            "05_message_passing.cu", "06_all_reduce.cu", "07_checked_mode.cu", "08_gemm_all_scatter.cu", "10_overlap_styles.cu",
            "11_training_step.cu");
    /** Where the examples keep them: their package's folder in iris-examples' jar. */
    public static final String FOLDER = "dev/irisjvm/examples/";
    private static final Pattern FILE_NAME = Pattern.compile("([0-9]{2})_([a-z0-9_]+)\\.cu");
    /** An {@code extern "C"} kernel's name: after its return type and launch bounds, before its parameters. */
    private static final Pattern KERNEL = Pattern.compile(
            "extern\\s+\"C\"\\s+__global__\\s+void\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?(\\w+)\\s*\\(");

    public ExampleSource {
        if (!FILE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("an example kernel source is named NN_words.cu, got '" + name + "'");
        }
    }

    /**
     * The source {@code name} as the examples' jar (or classes folder) holds it. Read through the
     * examples' module, which on the class path is the unnamed one (its class loader finds the file)
     * and on the module path is {@code dev.irisjvm.examples}, which opens the package to this one.
     */
    public static ExampleSource onClassPath(String name) {
        try (InputStream in = Example11TrainingStep.class.getModule().getResourceAsStream(FOLDER + name)) {
            if (in == null) {
                throw new IllegalStateException(FOLDER + name + " is not in iris-examples' jar (a dependency of iris-bench)");
            }
            return new ExampleSource(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + FOLDER + name, e);
        }
    }

    /** Every source of {@link #NAMES} from iris-examples' jar. */
    public static List<ExampleSource> allOnClassPath() {
        return NAMES.stream().map(ExampleSource::onClassPath).toList();
    }

    /** The example class (in dev.irisjvm.examples) that compiles it: {@code 03_get_put_copy.cu} → Example03GetPutCopy. */
    public String example() {
        Matcher m = FILE_NAME.matcher(name);
        m.matches();
        StringBuilder sb = new StringBuilder("Example").append(m.group(1));
        for (String word : m.group(2).split("_")) {
            sb.append(word.substring(0, 1).toUpperCase(Locale.ROOT)).append(word.substring(1));
        }
        return sb.toString();
    }

    /** The {@code extern "C" __global__} kernels it defines, in source order (comments ignored). */
    public List<String> kernels() {
        return kernelsIn(String.join("\n", DeviceCode.of(text).lines()));
    }

    static List<String> kernelsIn(String code) {
        Set<String> names = new LinkedHashSet<>();
        Matcher m = KERNEL.matcher(code);
        while (m.find()) {
            names.add(m.group(1));
        }
        return new ArrayList<>(names);
    }

    /** Lines of the file, comments and blank lines included. */
    public int lines() {
        return DeviceCode.of(text).lines().size();
    }

    /** Lines with code on them ({@link DeviceCode}'s rule). */
    public int codeLines() {
        return DeviceCode.of(text).codeLines();
    }
}
