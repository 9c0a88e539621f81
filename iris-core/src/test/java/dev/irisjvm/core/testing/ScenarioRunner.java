package dev.irisjvm.core.testing;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rank side of a GPU test job: runs named scenarios in the same order on every rank and prints
 * one {@code SCENARIO <name> PASS|FAIL|SKIP <detail>} line per scenario. The process exits non-zero
 * if any scenario failed, so the launcher reports it. A scenario that cannot run at this world size
 * calls {@link #skip} on every rank, with the rule it needs.
 */
public final class ScenarioRunner {
    /** Thrown by {@link #skip}: the scenario does not apply here; not a failure. */
    public static final class Skipped extends RuntimeException {
        Skipped(String reason) {
            super(reason, null, false, false);
        }
    }

    /** Ends the calling scenario as skipped, e.g. {@code skip("needs an even world, got 3")}. */
    public static Skipped skip(String reason) {
        throw new Skipped(reason);
    }

    /** A check that throws on failure. */
    @FunctionalInterface
    public interface Scenario {
        void run() throws Exception;
    }

    private final Map<String, Scenario> scenarios = new LinkedHashMap<>();

    public ScenarioRunner add(String name, Scenario scenario) {
        scenarios.put(name, scenario);
        return this;
    }

    /**
     * Wraps a scenario so that {@code meet} (e.g. {@code iris::hostBarrier}) runs after it whatever
     * happened, keeping the ranks in step when one rank's scenario fails; the first failure wins.
     */
    public static Scenario thenMeet(Scenario body, Runnable meet) {
        return () -> {
            Throwable failure = null;
            try {
                body.run();
            } catch (Throwable t) {
                failure = t;
            }
            try {
                meet.run();
            } catch (RuntimeException e) {
                if (failure == null) failure = e;
                else failure.addSuppressed(e);
            }
            if (failure instanceof Exception e) throw e;
            if (failure instanceof Error e) throw e;
        };
    }

    /**
     * Runs a scenario table in its order, each scenario followed by {@code meet} ({@link #thenMeet});
     * returns the number that failed. The table's names must be {@code expected}, the list the
     * JUnit side checks every rank's report against.
     */
    public static int runTable(Map<String, Scenario> table, List<String> expected, Runnable meet) {
        if (!new ArrayList<>(table.keySet()).equals(expected)) {
            throw new IllegalStateException("scenario table and SCENARIOS disagree: " + table.keySet() + " vs " + expected);
        }
        ScenarioRunner runner = new ScenarioRunner();
        table.forEach((name, body) -> runner.add(name, thenMeet(body, meet)));
        return runner.runAll();
    }

    /** Runs all scenarios; returns the number that failed. */
    public int runAll() {
        int failed = 0;
        for (Map.Entry<String, Scenario> e : scenarios.entrySet()) {
            long start = System.nanoTime();
            try {
                e.getValue().run();
                System.out.printf("SCENARIO %s PASS %.0f ms%n", e.getKey(), (System.nanoTime() - start) / 1e6);
            } catch (Skipped skipped) {
                System.out.println("SCENARIO " + e.getKey() + " SKIP " + skipped.getMessage().replace('\n', ' '));
            } catch (Throwable t) {
                failed++;
                StringWriter trace = new StringWriter();
                t.printStackTrace(new PrintWriter(trace));
                System.out.println(trace.toString().strip());
                System.out.println("SCENARIO " + e.getKey() + " FAIL " + String.valueOf(t).replace('\n', ' '));
            }
            System.out.flush();
        }
        return failed;
    }
}
