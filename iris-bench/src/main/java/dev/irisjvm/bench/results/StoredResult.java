package dev.irisjvm.bench.results;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A run's result as its raw JSON file beside the report: written indented, one field per record
 * component, and read back the same way; every run records when, where and by which command it ran.
 *
 * <pre>{@code
 * MoeSweepResult sweep = StoredResult.read(Path.of("moe-sweep.json"), MoeSweepResult.class);
 * sweep.write(Path.of("moe-sweep.json"));
 * }</pre>
 */
public interface StoredResult {
    /** ISO date-time of the run (UTC). */
    String date();

    String hardware();

    String software();

    /** The exact command that produced it. */
    String command();

    default void write(Path file) throws IOException {
        Mappers.STRICT.writeValue(file.toFile(), this);
    }

    /**
     * {@code file} as a {@code type}; an unknown field fails, except in the results that hold what
     * other programs wrote (PyTorch's SDPA run) or that earlier versions wrote with other fields.
     */
    static <T> T read(Path file, Class<T> type) throws IOException {
        boolean lenient = type == AttentionBenchResult.class || type == JitBenchResult.class;
        return (lenient ? Mappers.LENIENT : Mappers.STRICT).readValue(file.toFile(), type);
    }

    /** {@code file} as a {@code type}, unknown fields skipped: for files written by other programs or by earlier versions. */
    static <T> T readLenient(Path file, Class<T> type) throws IOException {
        return Mappers.LENIENT.readValue(file.toFile(), type);
    }
}

/** The mappers of {@link StoredResult}, out of its public face. */
final class Mappers {
    /** Pretty-printed, as the committed files are. */
    static final ObjectMapper STRICT = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final ObjectMapper LENIENT = STRICT.copy().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private Mappers() {}
}
