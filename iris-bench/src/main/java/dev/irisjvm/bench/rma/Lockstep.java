package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import java.nio.charset.StandardCharsets;

/**
 * The protocol of one sweep point, which keeps every rank in step whatever happens on one of them:
 *
 * <ol>
 *   <li>every rank prepares its own buffers (e.g. poisons its copy of the destination) and the
 *       ranks meet on the host, learning whether any rank failed (then nobody runs);
 *   <li>only the ranks that take part run: the issuer, and for two-sided points also the peer;
 *   <li>the ranks exchange what went wrong (this is also a meeting: every rank has finished);
 *   <li>the issuer verifies the data (it may read a peer's copy, which nobody touches now);
 *   <li>the ranks meet again, so that nobody prepares the next point while the issuer still reads.
 * </ol>
 *
 * A failure in any step is caught and becomes the point's check text instead of stopping the sweep.
 *
 * <pre>{@code
 * Lockstep.Outcome o = lockstep.pair(0, 1, false,
 *         () -> ctx.poison(dst),
 *         () -> timer.run(3, 20, i -> {}, i -> kernels.load(...), true),
 *         null,
 *         () -> verifier.sameBytes(...));
 * if (o != null) { ... this rank is the issuer: record o.millis() and o.check() ... }
 * }</pre>
 */
public final class Lockstep {
    /** Work that may throw. */
    @FunctionalInterface
    public interface Step {
        void run() throws Exception;
    }

    /** The issuer's timed run: milliseconds per repetition. */
    @FunctionalInterface
    public interface Timed {
        float[] run() throws Exception;
    }

    /** A verification: {@link Verifier#OK} or what was wrong. */
    @FunctionalInterface
    public interface Check {
        String run() throws Exception;
    }

    /** What the issuer learned: the repetitions' times (null if the run failed) and the check text. */
    public record Outcome(float[] millis, String check) {
        public boolean ok() {
            return Verifier.OK.equals(check);
        }
    }

    private final Iris iris;

    public Lockstep(Iris iris) {
        this.iris = iris;
    }

    /**
     * One point between {@code issuer} and {@code peer} ({@code peer} may be -1 or the issuer for
     * one-sided points). Returns the outcome on the issuer, null on every other rank.
     *
     * @param peerRuns whether the peer runs its side ({@code peerRun}) during step 2
     */
    public Outcome pair(int issuer, int peer, boolean peerRuns, Step prepare, Timed issuerRun, Step peerRun, Check verify) {
        int rank = iris.rank();
        String failures = exchange(attempt(prepare, "prepare"));  // a meeting; a failure anywhere skips the run everywhere
        float[][] millis = new float[1][];
        if (failures == null) {
            String failure = null;
            if (rank == issuer) {
                failure = attempt(() -> millis[0] = issuerRun.run(), "run");
            } else if (peerRuns && rank == peer) {
                failure = attempt(peerRun, "run");
            }
            failures = exchange(failure);
        }
        Outcome outcome = null;
        if (rank == issuer) {
            String check = failures != null ? failures : check(verify);
            outcome = new Outcome(failures == null ? millis[0] : null, check);
        }
        iris.hostBarrier();
        return outcome;
    }

    /** One point that every rank runs and verifies for itself (a collective). */
    public Outcome everyone(Step prepare, Timed run, Check verify) {
        String failures = exchange(attempt(prepare, "prepare"));
        float[][] millis = new float[1][];
        if (failures == null) {
            failures = exchange(attempt(() -> millis[0] = run.run(), "run"));
        }
        String check = failures != null ? failures : check(verify);
        iris.hostBarrier();
        return new Outcome(failures == null ? millis[0] : null, check);
    }

    private String check(Check verify) {
        String[] result = {Verifier.OK};
        String failure = attempt(() -> result[0] = verify == null ? Verifier.OK : verify.run(), "verify");
        return failure != null ? failure : result[0];
    }

    /** Runs a step; returns null, or "rank r: <what> failed: <exception>" after clearing the device status. */
    private String attempt(Step step, String what) {
        if (step == null) {
            return null;
        }
        try {
            step.run();
            return null;
        } catch (Exception e) {
            return "rank " + iris.rank() + ": " + what + " failed: " + recover(e);
        }
    }

    /**
     * After {@code e}, synchronizes this rank so that later points start clean (it drains the
     * stream and clears what a kernel recorded); returns {@code e} as one line, with whatever the
     * synchronization threw after it.
     */
    public String recover(Exception e) {
        String why = oneLine(e);
        try {
            iris.synchronize();
        } catch (RuntimeException again) {
            why += " (then: " + oneLine(again) + ")";
        }
        return why;
    }

    /** Every rank's failure text (null for none), joined; null if no rank failed. */
    private String exchange(String mine) {
        byte[][] all = iris.allGather(mine == null ? new byte[0] : mine.getBytes(StandardCharsets.UTF_8));
        StringBuilder b = new StringBuilder();
        for (byte[] one : all) {
            if (one.length > 0) {
                b.append(b.length() == 0 ? "" : "; ").append(new String(one, StandardCharsets.UTF_8));
            }
        }
        return b.length() == 0 ? null : b.toString();
    }

    /** An exception as one line: its simple class name and message, newlines folded. */
    public static String oneLine(Throwable t) {
        String m = t.getMessage();
        return (t.getClass().getSimpleName() + (m == null ? "" : ": " + m)).replace('\n', ' ');
    }
}
