package dev.irisjvm.bench;

import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * What the sweeps' option classes check and parse the same way: a failed check is an
 * IllegalArgumentException whose message names the option; number lists are comma-separated; a
 * heap is a size or {@code auto}; a type is bf16, f16 or f32 with their usual aliases.
 *
 * <pre>{@code
 * atLeast("--reps", reps, 1);                                              // "--reps must be >= 1, got 0"
 * List<String> parts = OptionChecks.items(" local, ,ring");                 // [local, ring]
 * List<Integer> seqs = OptionChecks.ints("--local-seqs", "4096, 16384");   // [4096, 16384]
 * }</pre>
 */
public final class OptionChecks {
    private OptionChecks() {}

    /** Throws IllegalArgumentException with {@code message} unless {@code ok}. */
    public static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Throws IllegalArgumentException "{@code option} must be >= {@code min}, got {@code value}" unless it is. */
    public static void atLeast(String option, long value, long min) {
        require(value >= min, option + " must be >= " + min + ", got " + value);
    }

    /** {@code list}, unless it is empty: then IllegalArgumentException "{@code option} names nothing". */
    public static <T> List<T> nonEmpty(String option, List<T> list) {
        require(!list.isEmpty(), option + " names nothing");
        return list;
    }

    /** The items of a comma-separated list, trimmed, blanks skipped, in order. */
    public static List<String> items(String text) {
        List<String> out = new ArrayList<>();
        for (String s : text.split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    /** The numbers of a comma-separated list, blanks skipped; the message of a bad one names {@code option}. */
    public static List<Integer> ints(String option, String text) {
        List<Integer> out = new ArrayList<>();
        for (String s : items(text)) {
            try {
                out.add(Integer.parseInt(s));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": '" + s + "' is not a number");
            }
        }
        return out;
    }

    /** A {@code --heap} value: a size in bytes ({@link SizeList#parse}), or -1 for {@code auto}. */
    public static long heap(String value) {
        return value.trim().equalsIgnoreCase("auto") ? -1 : SizeList.parse(value);
    }

    /** Heap bytes per rank: the {@code --heap} size given, or for {@code auto} the bytes {@code auto} needs, in whole MiB. */
    public static long heapBytes(String value, LongSupplier auto) {
        long given = heap(value);
        return given >= 0 ? given : wholeMiB(auto.getAsLong());
    }

    private static long wholeMiB(long bytes) {
        return (bytes + (1L << 20) - 1) >> 20 << 20;
    }

    /** bf16 (bfloat16), f16 (fp16, half, float16), f32 (fp32, float, float32), any case; null for anything else. */
    public static DType dtype(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "bf16", "bfloat16" -> DType.BF16;
            case "f16", "fp16", "half", "float16" -> DType.F16;
            case "f32", "fp32", "float", "float32" -> DType.F32;
            default -> null;
        };
    }

    /** bf16, f16, f32: the name the command lines and the reports use. */
    public static String dtypeName(DType t) {
        return t.name().toLowerCase(Locale.ROOT);
    }
}
