package dev.irisjvm.examples;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import java.util.Random;

/**
 * What the numbered examples share: the world they need, their random inputs (which any rank can
 * rebuild for any peer, to compute its reference), the comparison with that reference, and the
 * line each rank prints when its check passed.
 */
final class Examples {
    private Examples() {}

    /** Every example talks to a peer: two ranks at least (on one GPU, they share it). */
    static void requireTwoRanks(Iris iris) {
        if (iris.worldSize() < 2) {
            throw new IllegalStateException("run with at least two ranks: bin/iris-run -n 2 -- ...");
        }
    }

    /** This GPU's run-time compiler; throws unless the GPU is a Hopper (sm_90a: wgmma and TMA), as the GEMM examples need. */
    static KernelCompiler hopperCompiler(Iris iris) {
        KernelCompiler compiler = KernelCompiler.forIris(iris);
        if (!compiler.architecture().equals("sm_90a")) {
            throw new IllegalStateException("rank " + iris.rank() + ": this example needs an H100 or H200 (sm_90a); this GPU is "
                    + compiler.architecture());
        }
        return compiler;
    }

    /** Collective: this run's seed, rank 0's clock; every input derives from it and the rank that owns it. */
    static long runSeed(Iris iris) {
        return iris.broadcast(System.nanoTime(), 0);
    }

    /** Rank {@code rank}'s {@code n} inputs: standard normal floats, never zero, alike on every rank that asks. */
    static float[] randomFloats(long runSeed, int rank, int n) {
        Random random = random(runSeed, rank);
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            float v;
            do {
                v = (float) random.nextGaussian();
            } while (v == 0f);
            values[i] = v;
        }
        return values;
    }

    /** Rank {@code rank}'s {@code n} integers in [1, 2^40]. */
    static long[] randomLongs(long runSeed, int rank, int n) {
        Random random = random(runSeed, rank);
        long[] values = new long[n];
        for (int i = 0; i < n; i++) {
            values[i] = 1 + (random.nextLong() >>> 24);
        }
        return values;
    }

    private static Random random(long runSeed, int rank) {
        return new Random(runSeed ^ 0x9E3779B97F4A7C15L * (rank + 1));
    }

    /** The floats as doubles, exactly: the start of a double-precision reference. */
    static double[] doubles(float[] values) {
        double[] out = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = values[i];
        }
        return out;
    }

    /** Every element exactly as expected (NaN, the poison, never is). */
    static void expectEqual(Iris iris, String what, float[] got, double[] expected) {
        expectWithin(iris, what, got, expected, new double[expected.length]);
    }

    /** Every element within {@code bound[i]} of {@code expected[i]} (NaN never is). */
    static void expectWithin(Iris iris, String what, float[] got, double[] expected, double[] bound) {
        requireLength(iris, what, got.length, expected.length);
        for (int i = 0; i < expected.length; i++) {
            if (!(Math.abs(got[i] - expected[i]) <= bound[i])) {
                throw mismatch(iris, what, i, Float.toString(got[i]),
                        expected[i] + (bound[i] > 0 ? " within " + bound[i] : ""));
            }
        }
    }

    /** Every element exactly as expected. */
    static void expectEqual(Iris iris, String what, long[] got, long[] expected) {
        requireLength(iris, what, got.length, expected.length);
        for (int i = 0; i < expected.length; i++) {
            if (got[i] != expected[i]) {
                throw mismatch(iris, what, i, Long.toString(got[i]), Long.toString(expected[i]));
            }
        }
    }

    private static void requireLength(Iris iris, String what, int got, int expected) {
        if (got != expected) {
            throw new IllegalStateException("rank " + iris.rank() + ": " + what + " has " + got + " elements, expected "
                    + expected);
        }
    }

    private static IllegalStateException mismatch(Iris iris, String what, int index, String got, String expected) {
        return new IllegalStateException("rank " + iris.rank() + ": " + what + "[" + index + "] is " + got + ", expected "
                + expected);
    }

    /** The line a rank prints when its check passed: {@code rank 1 <what>: OK}. */
    static void ok(Iris iris, String what) {
        System.out.println("rank " + iris.rank() + " " + what + ": OK");
    }
}
