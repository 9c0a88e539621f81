package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import dev.irisjvm.kernels.gemm.GemmReference.Reference;

/**
 * {@link GemmScenarios}' cases of the skinny kernels (at most 32 rows, A stored M x K, which the Gemm
 * runs on them; iris/gemm/sm80/skinny.cuh), on whichever mainloop the Gemm runs, under the same rules
 * (fresh inputs, poisoned outputs, the double reference within the derived bound).
 */
final class GemmSkinnyScenarios extends GemmScenarioPart {
    /**
     * (M, N, K) of at most 32 rows: a decode row over more tiles than one (ragged N and K), 3 rows
     * split into many short slices with a ragged last one, one band of 16 rows, a ragged 5 x 136 x 72
     * of one k-block, two bands (the second of one row, then whole). The Gemm runs all of them on the
     * skinny kernels on the portable mainloop; on the Hopper one those whose swapped tile runs whole in
     * one wave on swapped tiles ({@link #expectedRoute}).
     */
    static final int[][] SHAPES = {{1, 4104, 1032}, {3, 1000, 8200}, {16, 4096, 512}, {5, 136, 72}, {17, 1000, 2056}, {32, 4096, 512}};
    /**
     * (M, N, K) forced onto the skinny kernels in each of {@link #FORCED_SLICES}: rows of one half of
     * the tile, all 16, and two bands, the second ragged.
     */
    static final int[][] FORCED = {{5, 520, 3000}, {16, 520, 3000}, {29, 520, 3000}};
    /** One slice, two, an uneven count, and one k-block each (47). */
    static final int[] FORCED_SLICES = {1, 2, 7, 47};

    GemmSkinnyScenarios(GemmScenarios s, Iris iris, Gemm gemm) {
        super(s, iris, gemm);
    }

    /**
     * The shapes through every case of {@link GemmScenarios#smallCase} under the split the rule
     * chooses; one shape under each forced split, both B layouts; and a split call twice, bit for bit.
     */
    void skinny() {
        Failures f = new Failures();
        int index = 0;
        for (int[] shape : SHAPES) {
            String schedule = gemm.schedule(shape[0], shape[1], shape[2]);
            String expected = expectedRoute(shape);
            f.check(schedule.contains(expected), () -> shape[0] + " x " + shape[1] + " x " + shape[2] + " runs " + schedule
                    + ", expected " + expected + " on the " + gemm.mainloop() + " mainloop");
            for (GemmLayout layout : GemmLayout.values()) {
                s.smallCase(f, shape[0], shape[1], shape[2], GemmScenarios.INPUTS[index++ % 2], layout);
            }
        }
        for (int[] shape : FORCED) {
            for (GemmLayout layout : GemmLayout.values()) {
                forcedSplits(f, shape, layout);
            }
        }
        int[] sliced = SHAPES[1];
        String split = gemm.schedule(sliced[0], sliced[1], sliced[2]);
        f.check(split.contains("slices"), () -> sliced[0] + " x " + sliced[1] + " x " + sliced[2] + " is not split: " + split);
        sameTwice(f, "skinny_twice", sliced[0], sliced[1], sliced[2]);
        f.throwIfAny();
    }

    /** What the rule's schedule of a shape names: the skinny kernels, or a swapped tile ({@link Gemm#runsSkinny(int, int, int)}). */
    private String expectedRoute(int[] shape) {
        return gemm.runsSkinny(shape[0], shape[1], shape[2]) ? "skinny" : "swapped tiles";
    }

    /** {@code shape}, bf16 in and F32 out with a bias, in each of {@link #FORCED_SLICES}, against the reference. */
    private void forcedSplits(Failures f, int[] shape, GemmLayout layout) {
        int m = shape[0], n = shape[1], k = shape[2];
        long seed = s.seed("skinny_forced", m, n, k, layout.ordinal());
        int bRows = (int) layout.bRows(n, k);
        int bCols = (int) layout.bCols(n, k);
        HostMatrix a = HostMatrix.random(seed, DType.BF16, m, k);
        HostMatrix b = HostMatrix.random(seed + 1, DType.BF16, bRows, bCols);
        HostMatrix bias = HostMatrix.random(seed + 2, DType.BF16, 1, n).as(DType.F32);
        Reference ref = GemmReference.full(a, b, layout);
        try (SymTensor ta = s.upload(a, k, 0, m, k); SymTensor tb = s.upload(b, bCols, 0, bRows, bCols);
             SymTensor tbias = s.upload(bias, n, 0, n); SymTensor c = heap.empty(DType.F32, m, n)) {
            GemmProblem p = new GemmProblem(DeviceMatrix.of(ta), DeviceMatrix.of(tb), layout, tbias.deviceAddress(), DeviceMatrix.of(c));
            for (int slices : FORCED_SLICES) {
                s.poison(c);
                gemm.launchSkinny(p, slices, stream);
                iris.synchronize();
                f.add(GemmReference.check(m + " x " + n + " x " + k + " bf16 " + layout.kernelSuffix() + " -> F32 + bias, " + slices
                        + " slices of K", GemmScenarios.download(c), DType.F32, n, m, ref, bias.values()));
            }
        }
    }

}
