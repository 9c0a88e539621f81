package dev.irisjvm.core.env;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * An environment map read the way every launcher family is read: values trimmed, blank counting as
 * unset, and every parse error naming the variable, its value and the form expected.
 *
 * <pre>{@code
 * EnvVars vars = new EnvVars(Map.of("SLURM_PROCID", "3"));
 * vars.intValue("SLURM_PROCID");      // 3
 * vars.describe(List.of("SLURM_PROCID", "SLURM_NTASKS"));   // "SLURM_PROCID=3"
 * }</pre>
 */
final class EnvVars {

    private final Map<String, String> env;

    EnvVars(Map<String, String> env) {
        this.env = Objects.requireNonNull(env, "env");
    }

    /** The value, trimmed, or null when absent or blank (or when {@code name} is null). */
    String get(String name) {
        if (name == null) {
            return null;
        }
        String value = env.get(name);
        return value == null || value.isBlank() ? null : value.trim();
    }

    boolean has(String name) {
        return get(name) != null;
    }

    /** The first of {@code names} that is set, or null. */
    String firstSet(List<String> names) {
        return names.stream().filter(this::has).findFirst().orElse(null);
    }

    /** {@code name}'s value as an integer; the variable must be set. */
    int intValue(String name) {
        return parseInt(name, get(name));
    }

    /** {@code "A=1, B=2"} for those of {@code names} that are set. */
    String describe(List<String> names) {
        return names.stream().filter(this::has).map(n -> n + "=" + get(n)).collect(Collectors.joining(", "));
    }

    static int parseInt(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, got '" + value + "'");
        }
    }
}
