package dev.irisjvm.bench.report;

import java.util.Comparator;
import java.util.List;

/**
 * One line of a sweep: an operation done by one implementation, e.g. {@code load [iris]} or
 * {@code copy_engine_pull [copy_engine]}. Variants, whether told apart by op name
 * ({@code local_copy} / {@code local_copy_sm}) or by implementation, are separate series, never
 * averaged together.
 *
 * <pre>{@code
 * Series s = new Series("load", "iris");
 * s.label();           // "load [iris]"
 * s.metric();          // Metric.BANDWIDTH
 * }</pre>
 */
public record Series(String op, String impl) implements Comparable<Series> {

    /** The order operations appear in, in tables: Iris's own first, then the baselines. */
    static final List<String> OP_ORDER = List.of("load", "store", "all_load", "all_store", "atomic_add",
            "atomic_add_f32", "atomic_xchg", "atomic_cas", "message_passing", "ping_pong", "copy_engine",
            "copy_engine_pull", "copy_engine_push", "local_copy", "local_copy_sm", "send_recv", "all_reduce");

    private static final Comparator<Series> ORDER = Comparator
            .comparingInt((Series s) -> {
                int i = OP_ORDER.indexOf(s.op);
                return i < 0 ? OP_ORDER.size() : i;
            })
            .thenComparing(Series::op)
            .thenComparing(Series::impl);

    public String label() {
        return op + " [" + impl + "]";
    }

    public Metric metric() {
        return Metric.of(op);
    }

    @Override
    public int compareTo(Series other) {
        return ORDER.compare(this, other);
    }
}
