package dev.irisjvm.bench.report;

import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Human-readable byte counts and numbers for tables and chart axes.
 *
 * <pre>{@code
 * Sizes.bytes(4096);        // "4 KiB"
 * Sizes.bytes(1L << 30);    // "1 GiB"
 * Sizes.bytes(1536);        // "1.5 KiB"
 * Sizes.number(478.08);     // "478"
 * Sizes.number(1.3456);     // "1.35"
 * Sizes.ratio3(0.9496);     // "0.950×"
 * Sizes.twoDecimals(0.9);   // "0.90"
 * Sizes.justUnder(0.95, "0.0004");   // "0.9496"
 * }</pre>
 */
public final class Sizes {
    /** One KiB, MiB, GiB. */
    public static final long KIB = 1L << 10;
    public static final long MIB = 1L << 20;
    public static final long GIB = 1L << 30;

    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB"};

    private Sizes() {}

    /** Binary units, whole numbers where the size is a multiple of the unit. */
    public static String bytes(long bytes) {
        if (bytes < KIB) {
            return bytes + " B";
        }
        int unit = 0;
        double value = bytes;
        while (value >= 1024 && unit < UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        if (value == Math.rint(value)) {
            return String.format(Locale.ROOT, "%d %s", (long) value, UNITS[unit]);
        }
        return String.format(Locale.ROOT, "%.1f %s", value, UNITS[unit]);
    }

    /**
     * About three significant digits, never scientific notation: measurements are good to a
     * few percent, so more digits would only suggest precision that is not there.
     */
    public static String number(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return "—";
        }
        double a = Math.abs(value);
        String pattern = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : a >= 0.01 ? "%.3f" : "%.2g";
        return String.format(Locale.ROOT, pattern, value);
    }

    /** "1377 · 1376 · 1380", e.g. each round's median in the order the rounds ran; "—" for none. */
    public static String numbers(List<Double> values) {
        return values == null || values.isEmpty() ? "—" : values.stream().map(Sizes::number).collect(Collectors.joining(" · "));
    }

    /** "812 (790–860)": a median with the range it came from. */
    public static String span(double median, double min, double max) {
        return number(median) + " (" + number(min) + "–" + number(max) + ")";
    }

    /** A ratio such as {@code 0.97×}. */
    public static String ratio(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return "—";
        }
        return String.format(Locale.ROOT, "%.2f×", value);
    }

    /** Three decimals, where a target judges the ratio: two would round a near miss up to the target. */
    public static String ratio3(double value) {
        return Double.isNaN(value) || Double.isInfinite(value) ? "—" : String.format(Locale.ROOT, "%.3f×", value);
    }

    /** Two decimals, as a report's rounding note names a target from targets.json: {@code 0.9} → "0.90". */
    public static String twoDecimals(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    /**
     * {@code target − gap} in exact decimal ({@code justUnder(0.95, "0.0004")} is "0.9496", not
     * 0.9496000000000001): the near miss a rounding note shows, a ratio that would read as the
     * target at two decimals yet fails it. Computed from the target so that the note follows
     * targets.json.
     */
    public static String justUnder(double target, String gap) {
        return BigDecimal.valueOf(target).subtract(new BigDecimal(gap)).toPlainString();
    }
}
