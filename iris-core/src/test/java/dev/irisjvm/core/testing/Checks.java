package dev.irisjvm.core.testing;

import java.util.Arrays;

/** Comparisons against a double-precision CPU reference, with messages that point at the first miss. */
public final class Checks {
    private Checks() {}

    public static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    /** Every element equal (NaN never passes). */
    public static void exact(double[] expected, double[] actual, String what) {
        check(expected.length == actual.length, what + ": length " + actual.length + ", expected " + expected.length);
        for (int i = 0; i < expected.length; i++) {
            if (!(expected[i] == actual[i])) {
                throw new AssertionError(what + ": element " + i + " is " + actual[i] + ", expected " + expected[i]);
            }
        }
    }

    /** ||actual - expected|| / ||expected|| <= bound (NaN never passes). */
    public static void relative(double[] expected, double[] actual, double bound, String what) {
        check(expected.length == actual.length, what + ": length " + actual.length + ", expected " + expected.length);
        double num = 0, den = 0;
        for (int i = 0; i < expected.length; i++) {
            if (Double.isNaN(actual[i])) {
                throw new AssertionError(what + ": element " + i + " is NaN (unwritten?), expected " + expected[i]);
            }
            double d = actual[i] - expected[i];
            num += d * d;
            den += expected[i] * expected[i];
        }
        double rel = Math.sqrt(num) / Math.max(Math.sqrt(den), Double.MIN_NORMAL);
        check(rel <= bound, what + ": relative error " + rel + " exceeds " + bound);
    }

    public static double[] slice(double[] a, int from, int to) {
        return Arrays.copyOfRange(a, from, to);
    }
}
