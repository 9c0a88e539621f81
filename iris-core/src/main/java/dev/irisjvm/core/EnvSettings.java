package dev.irisjvm.core;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Parsers for IrisConfig's variables. Each takes the variable's name so that an error names the
 * variable, the value it found and what would have been accepted; an unset or blank variable
 * means the default, anything else must be valid.
 */
final class EnvSettings {
    private static final Set<String> ON = Set.of("1", "true", "yes", "on");
    private static final Set<String> OFF = Set.of("0", "false", "no", "off");

    private EnvSettings() {
    }

    /** 1/true/yes/on or 0/false/no/off in any case; anything else is an error rather than off. */
    static boolean flag(Map<String, String> env, String name, boolean defaultValue) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        String t = v.trim().toLowerCase(Locale.ROOT);
        if (ON.contains(t)) {
            return true;
        }
        if (OFF.contains(t)) {
            return false;
        }
        throw new IllegalArgumentException(name + " must be one of 1, true, yes, on (on) or 0, false, no, off (off),"
                + " in any case, got '" + v + "'");
    }

    /**
     * An index in {@code [0, max]}, or {@code unset} when the variable is; {@code who} ("rank 3")
     * starts the error, since the value decides which GPU that rank drives.
     */
    static int index(Map<String, String> env, String name, int max, int unset, String who) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return unset;
        }
        try {
            int i = Integer.parseInt(v.trim());
            if (i >= 0 && i <= max) {
                return i;
            }
        } catch (NumberFormatException notAnInt) {
            // reported below
        }
        throw new IllegalArgumentException(who + ": " + name + " must be a GPU index in [0, " + max + "], got '" + v + "'");
    }

    /** Milliseconds in {@code [min, IrisConfig.MAX_TIMEOUT]}. */
    static Duration millis(Map<String, String> env, String name, long defaultMillis, Duration min) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return Duration.ofMillis(defaultMillis);
        }
        long max = IrisConfig.MAX_TIMEOUT.toMillis();
        String range = "an integer number of milliseconds in [" + min.toMillis() + ", " + max + "] (up to one day)";
        long ms;
        try {
            ms = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be " + range + ", got '" + v + "'");
        }
        if (ms < min.toMillis() || ms > max) {
            throw new IllegalArgumentException(name + " must be " + range + ", got '" + v + "'");
        }
        return Duration.ofMillis(ms);
    }

    /** Any 64-bit integer. */
    static long anyLong(Map<String, String> env, String name, long defaultValue) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer in [" + Long.MIN_VALUE + ", "
                    + Long.MAX_VALUE + "], got '" + v + "'");
        }
    }

    /** A byte count, a multiple of {@link IrisConfig#HEAP_SIZE_GRANULE} in [granule, {@link IrisConfig#MAX_HEAP_SIZE}]. */
    static long heapSize(Map<String, String> env, String name, long defaultValue) {
        String v = env.get(name);
        long bytes = parseSize(name, v, defaultValue);
        if (bytes < IrisConfig.HEAP_SIZE_GRANULE || bytes > IrisConfig.MAX_HEAP_SIZE
                || bytes % IrisConfig.HEAP_SIZE_GRANULE != 0) {
            throw new IllegalArgumentException(name + " must be a multiple of 2 MiB (" + IrisConfig.HEAP_SIZE_GRANULE
                    + " bytes) from 2m to 1t (" + IrisConfig.MAX_HEAP_SIZE + " bytes), got '" + v + "' (" + bytes
                    + " bytes)");
        }
        return bytes;
    }

    /** Parses "1073741824", "64k", "512m", "1g", "1t" (binary units, case-insensitive); no range check. */
    static long parseSize(String name, String text, long defaultValue) {
        if (text == null || text.isBlank()) {
            return defaultValue;
        }
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        char last = t.charAt(t.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g' || last == 't') {
            unit = switch (last) {
                case 'k' -> 1L << 10;
                case 'm' -> 1L << 20;
                case 'g' -> 1L << 30;
                default -> 1L << 40;
            };
            t = t.substring(0, t.length() - 1);
        }
        try {
            return Math.multiplyExact(Long.parseLong(t), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(name + " must be a byte count with an optional k/m/g/t suffix, got '"
                    + text + "'");
        }
    }
}
