package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Attention in double precision on the host, and the bounds the kernels' outputs are held to.
 *
 * <p>For query row i of head h: {@code s_j = scale q_i . k_j} over the visible keys, {@code p_j =
 * exp(s_j - max s)}, {@code l = sum p_j}, {@code o = sum p_j v_j / l}, {@code lse = max s + ln l},
 * and per output element the magnitude {@code a_d = sum p_j |v_jd| / l}. The kernels round each
 * probability to the input type before the P V product (relative error u, the type's unit roundoff)
 * and O once at the end, so an output element is held to
 * {@code |o - ref| <= u |ref| + 2 u a_d + 2^-20 a_d} (for BF16: 2^-8 |ref| + 2^-7 a_d, plus the
 * F32 accumulation and exp2 approximation, far below), and the log-sum-exp to {@code |lse - ref|
 * <= 1e-3 max(|ref|, 1)}. NaN never passes: outputs are poisoned before each run.
 */
final class AttentionReference {
    /** lse: relative bound, and the magnitude below which it is absolute. */
    static final double LSE_RELATIVE = 1e-3;
    /** Misses listed per check before "... and N more". */
    static final int SHOWN = 5;

    private AttentionReference() {}

    /** Values rounded to {@code t} (BF16 or F16), as floats. */
    static float[] randomNormal(long seed, DType t, int n) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = round(t, (float) r.nextGaussian());
        }
        return x;
    }

    static float round(DType t, float v) {
        return t == DType.BF16 ? HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(v))
                : HalfFloats.f16ToFloat(HalfFloats.floatToF16(v));
    }

    /** One query row's exact result: o[d], lse, and a[d] = sum p |v_d| / l. */
    record Row(double[] o, double lse, double[] magnitude) {}

    /**
     * Row {@code i} of head {@code h} of sequence {@code b}, with Q [B, Hq, Sq, D] and K, V [B, Hkv,
     * Skv, D] on the host; {@code visible[j]} says which keys count (null: all).
     */
    static Row row(float[] q, float[] k, float[] v, int hq, int hkv, int sq, int skv, int d, int b, int h, int i,
                   double scale, boolean[] visible) {
        int kvh = h / (hq / hkv);
        long qOff = (((long) b * hq + h) * sq + i) * d;
        long kvOff = ((long) b * hkv + kvh) * skv * d;
        double[] s = new double[skv];
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j < skv; j++) {
            if (visible != null && !visible[j]) {
                s[j] = Double.NEGATIVE_INFINITY;
                continue;
            }
            double dot = 0;
            long kj = kvOff + (long) j * d;
            for (int e = 0; e < d; e++) {
                dot += (double) q[(int) (qOff + e)] * k[(int) (kj + e)];
            }
            s[j] = dot * scale;
            max = Math.max(max, s[j]);
        }
        double l = 0;
        double[] o = new double[d];
        double[] a = new double[d];
        for (int j = 0; j < skv; j++) {
            if (s[j] == Double.NEGATIVE_INFINITY) {
                continue;
            }
            double p = Math.exp(s[j] - max);
            l += p;
            long vj = kvOff + (long) j * d;
            for (int e = 0; e < d; e++) {
                double x = v[(int) (vj + e)];
                o[e] += p * x;
                a[e] += p * Math.abs(x);
            }
        }
        for (int e = 0; e < d; e++) {
            o[e] /= l;
            a[e] /= l;
        }
        return new Row(o, max + Math.log(l), a);
    }

    /** The bound on one output element. */
    static double bound(DType t, double ref, double magnitude) {
        double u = t.unitRoundoff();
        return u * Math.abs(ref) + 2 * u * magnitude + 0x1p-20 * magnitude;
    }

    /** Collects misses of a comparison and reports the first few. */
    static final class Misses {
        private final String what;
        private final List<String> shown = new ArrayList<>();
        private long count;
        private long checked;
        private double worst;   // largest |error| / bound

        Misses(String what) {
            this.what = what;
        }

        /** An output element against its reference. */
        void element(String where, double got, double ref, double bound) {
            checked++;
            double err = Math.abs(got - ref);
            if (!(err <= bound)) {   // NaN fails
                count++;
                if (shown.size() < SHOWN) {
                    shown.add(String.format(Locale.ROOT, "%s = %.6g, expected %.6g (error %.3g > bound %.3g)", where, got, ref, err, bound));
                }
            }
            if (bound > 0 && err / bound > worst) {
                worst = err / bound;
            }
        }

        /** A log-sum-exp against its reference. */
        void lse(String where, double got, double ref) {
            element(where + " lse", got, ref, LSE_RELATIVE * Math.max(Math.abs(ref), 1));
        }

        /** Two results that must be equal bit for bit (NaN never passes). */
        void same(String where, float got, float ref) {
            checked++;
            if (Float.floatToRawIntBits(got) != Float.floatToRawIntBits(ref) || Float.isNaN(got)) {
                count++;
                if (shown.size() < SHOWN) {
                    shown.add(String.format(Locale.ROOT, "%s = %s, expected %s bit for bit", where, got, ref));
                }
            }
        }

        /** The failure message, or null when every element passed. */
        String failure() {
            if (count == 0) {
                return null;
            }
            return what + ": " + count + " of " + checked + " elements out of bounds: " + String.join("; ", shown)
                    + (count > shown.size() ? "; ..." : "");
        }

        double worst() {
            return worst;
        }

        long checked() {
            return checked;
        }
    }
}
