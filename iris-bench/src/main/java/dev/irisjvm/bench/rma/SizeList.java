package dev.irisjvm.bench.rma;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Payload sizes of a sweep, and byte counts as people write them.
 *
 * <pre>{@code
 * SizeList.geometric(4096, 1L << 30, 4);   // 4 KiB, 16 KiB, ..., 256 MiB, 1 GiB
 * SizeList.geometric(8, 1 << 20, 4);       // 8 B, 32 B, ..., 512 KiB, and 1 MiB as the last point
 * SizeList.parse("64k");                   // 65536
 * SizeList.format(1L << 30);               // "1 GiB"
 * }</pre>
 */
public final class SizeList {
    private SizeList() {}

    /** min, min * factor, ... up to max; max itself is always the last point. */
    public static List<Long> geometric(long min, long max, long factor) {
        if (min < 1) {
            throw new IllegalArgumentException("min bytes must be >= 1, got " + min);
        }
        if (max < min) {
            throw new IllegalArgumentException("max bytes " + max + " is below min bytes " + min);
        }
        if (factor < 2) {
            throw new IllegalArgumentException("factor must be >= 2, got " + factor);
        }
        List<Long> sizes = new ArrayList<>();
        long s = min;
        while (s <= max) {
            sizes.add(s);
            if (s > max / factor) {
                break;
            }
            s *= factor;
        }
        if (sizes.get(sizes.size() - 1) != max) {
            sizes.add(max);
        }
        return sizes;
    }

    /** "4096", "4k", "64K", "1m", "1g", "1GiB", "512MB" (binary units, case-insensitive). */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a size is required, got '" + text + "'");
        }
        String t = text.trim().toLowerCase(Locale.ROOT).replace(" ", "");
        if (t.endsWith("ib")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
        switch (last) {
            case 'k' -> unit = 1L << 10;
            case 'm' -> unit = 1L << 20;
            case 'g' -> unit = 1L << 30;
            case 't' -> unit = 1L << 40;
            default -> unit = 1;
        }
        if (unit != 1) {
            t = t.substring(0, t.length() - 1);
        }
        try {
            long v = Long.parseLong(t);
            if (v < 0) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(v, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("not a byte count: '" + text + "' (use e.g. 4096, 64k, 1m, 1g)");
        }
    }

    /** "8 B", "4 KiB", "1.5 MiB", "1 GiB". */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        if (v == Math.rint(v)) {
            return (long) v + " " + units[u];
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
