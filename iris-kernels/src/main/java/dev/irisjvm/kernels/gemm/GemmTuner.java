package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The on-first-use choice of a schedule ({@link Gemm.Options#tune()}): the first call of a shape
 * times each schedule the shape can take, on the call's own operands, and keeps the fastest for
 * every later call of that shape on this instance. Without it, {@link StreamKPlan#choose} decides
 * from {@link ScheduleCost}'s estimate alone.
 *
 * <p>A call is timed only where running it more than once changes nothing and holds up nothing:
 * beta = 0 (C is only written) and a stream that is not being captured into a graph. Other calls
 * take the shape's kept choice if there is one, else the rule.
 */
final class GemmTuner {
    /** Calls per candidate: one to warm up, then the timed ones, whose median counts. */
    static final int TIMED_CALLS = 5;
    /** Schedules a first call times besides whole tiles: the estimate's best few. */
    static final int SHORTLIST = 3;

    /** What a choice is kept for: the problem's shape, layouts and types (not its addresses). */
    record Shape(int m, int n, int k, GemmLayouts layouts, DType in, DType out) {
        static Shape of(GemmProblem p) {
            return new Shape(p.m(), p.n(), p.k(), p.layouts(), p.inputType(), p.outputType());
        }
    }

    private final Map<Shape, StreamKPlan> kept = new HashMap<>();

    /**
     * The plan for {@code p}: its kept choice; else, where {@code timeable}, the fastest of {@code
     * candidates} and {@code rule} by {@code medianUs} (which runs the call with a plan and returns its median time),
     * kept from then on; else {@code rule}. A kept shape asks neither supplier: a tuned call costs
     * one map lookup more than an untuned one.
     */
    StreamKPlan plan(GemmProblem p, BooleanSupplier timeable, StreamKPlan rule, Supplier<List<StreamKPlan>> candidates,
                     ToDoubleFunction<StreamKPlan> medianUs) {
        Shape shape = Shape.of(p);
        StreamKPlan chosen = kept.get(shape);
        if (chosen != null) {
            return chosen;
        }
        if (!timeable.getAsBoolean()) {
            return rule;
        }
        List<StreamKPlan> plans = new ArrayList<>(candidates.get());
        if (!plans.contains(rule)) {
            plans.add(rule);  // a rule beyond the estimate's tiles (the swapped ones) is timed too
        }
        if (plans.size() < 2) {
            return rule;
        }
        double best = Double.POSITIVE_INFINITY;
        for (StreamKPlan c : plans) {
            double us = medianUs.applyAsDouble(c);
            if (us < best) {
                best = us;
                chosen = c;
            }
        }
        kept.put(shape, chosen);
        return chosen;
    }

    /** Shapes with a kept choice. */
    int shapes() {
        return kept.size();
    }

    /**
     * The schedules the first call of a shape times: the {@value #SHORTLIST} that {@link
     * ScheduleCost} estimates fastest among those it can take ({@link StreamKPlan#candidates}), and
     * whole tiles always (the schedule without a workspace, whatever the estimate); where {@code
     * pairs} ({@link StreamKPlan#pairsPay}), whole tiles of 128 rows in pairs, as the rule runs them
     * ({@link StreamKPlan#paired}: unpaired, a shape whose B rows are off 128 bytes lost a third).
     */
    static List<StreamKPlan> candidates(int m, int n, int kBlocks, int multiprocessors, boolean pairs) {
        List<StreamKPlan> all = StreamKPlan.candidates(m, n, kBlocks, multiprocessors, pairs);
        List<StreamKPlan> c = new ArrayList<>();
        for (StreamKPlan plan : all.subList(0, Math.min(SHORTLIST, all.size()))) {
            c.add(pairs ? StreamKPlan.paired(plan, m, n, multiprocessors) : plan);
        }
        StreamKPlan whole = StreamKPlan.whole(m, n, multiprocessors);
        whole = pairs ? StreamKPlan.paired(whole, m, n, multiprocessors) : whole;
        if (!c.contains(whole)) {
            c.add(whole);
        }
        return c;
    }

    /** The choice kept for an {@code m} x {@code n} x {@code k} shape (any layouts and types), or null. */
    StreamKPlan kept(int m, int n, int k) {
        return kept.entrySet().stream().filter(e -> e.getKey().m() == m && e.getKey().n() == n && e.getKey().k() == k)
                .map(Map.Entry::getValue).findFirst().orElse(null);
    }
}
