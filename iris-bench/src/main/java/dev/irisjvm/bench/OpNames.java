package dev.irisjvm.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The op names of a sweep's command line: an enum constant in lower case ({@code all_load}),
 * case-insensitive, '-' for '_', and comma-separated lists where "all" is every constant.
 *
 * <pre>{@code
 * List<RmaOp> ops = OpNames.parseList(RmaOp.class, "load,store,all");
 * MoeModel m = OpNames.byId(MoeModel.values(), MoeModel::id, " Mixtral", "unknown model");   // MIXTRAL
 * }</pre>
 */
public final class OpNames {
    private OpNames() {}

    /** {@code ALL_LOAD} -> "all_load". */
    public static String id(Enum<?> op) {
        return op.name().toLowerCase(Locale.ROOT);
    }

    public static <E extends Enum<E>> E parse(Class<E> type, String name) {
        String n = name.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E op : type.getEnumConstants()) {
            if (op.name().equals(n)) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown op '" + name.trim() + "'; known: " + ids(type));
    }

    /** A comma-separated list, in the order given, without repeats; "all" is every op. */
    public static <E extends Enum<E>> List<E> parseList(Class<E> type, String text) {
        return parseList(text, List.of(type.getEnumConstants()), name -> parse(type, name),
                "--ops needs at least one op; known: " + ids(type));
    }

    /**
     * A comma-separated list of names, in the order given, without repeats; "all" stands for
     * {@code all}. A list that names nothing fails with {@code emptyMessage}.
     */
    public static <E> List<E> parseList(String text, List<E> all, Function<String, E> parse, String emptyMessage) {
        List<E> out = new ArrayList<>();
        if (text != null) {
            for (String part : OptionChecks.items(text)) {
                for (E e : part.equalsIgnoreCase("all") ? all : List.of(parse.apply(part))) {
                    if (!out.contains(e)) {
                        out.add(e);
                    }
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(emptyMessage);
        }
        return out;
    }

    /**
     * The one of {@code values} whose {@code id} is {@code name}, trimmed, in any case; else an
     * IllegalArgumentException saying {@code unknown}.
     */
    public static <E> E byId(E[] values, Function<E, String> id, String name, String unknown) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (E e : values) {
            if (id.apply(e).equals(n)) {
                return e;
            }
        }
        throw new IllegalArgumentException(unknown);
    }

    /** "load,store,..." */
    public static <E extends Enum<E>> String ids(Class<E> type) {
        return Stream.of(type.getEnumConstants()).map(OpNames::id).collect(Collectors.joining(","));
    }
}
