package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * {@link GemmScenarios}' cases of the schedules that share tiles out by K (iris/gemm/stream_k.cuh):
 * shapes whose tiles leave SMs idle, through every case under the schedule the rule chooses (on the
 * Hopper mainloop; the portable one runs every tile whole and must give the same results), then
 * under each schedule the shape can take (whole, split-K, stream-K), forced, against the double
 * reference under the same rules as the small shapes.
 */
final class GemmStreamKScenarios extends GemmScenarioPart {
    /**
     * (M, N, K) whose tiles leave most of 132 SMs idle: a decode step's single row over 16 tiles
     * (stream-K: about 8 CTAs per tile); 3 tiles of 64 rows (up to 32 pieces per tile, the most the
     * fix-up adds); a ragged shape whose stream-K ranges start and end inside tiles of unequal pieces.
     */
    static final int[][] SHARED_SHAPES = {{1, 4096, 4096}, {64, 768, 8192}, {200, 520, 3000}};
    /** 32 x 9 = 288 tiles of 128 x 256 on 132 SMs: 132 whole, then 156 shared (2.18 waves), forced. */
    static final int[] HYBRID = {4096, 2304, 1024};
    /** Rows of the hybrid case checked against the reference: its first tile row (whole tiles) and last (shared). */
    static final int WINDOW_ROWS = 128;

    GemmStreamKScenarios(GemmScenarios s, Iris iris, Gemm gemm) {
        super(s, iris, gemm);
    }

    /**
     * The shared shapes through every case of {@link GemmScenarios#smallCase} (both input dtypes,
     * both B layouts, both outputs, bias or not, padded rows or not; the 16-bit output the F32 one
     * rounded once, which also shows the fix-up adds in the same order for both calls); the hybrid
     * shape by two row windows; and the same call twice, bit for bit.
     */
    void streamK() {
        Failures f = new Failures();
        int index = 0;
        for (int[] shape : SHARED_SHAPES) {
            for (GemmLayout layout : GemmLayout.values()) {
                s.smallCase(f, shape[0], shape[1], shape[2], GemmScenarios.INPUTS[index++ % 2], layout);
            }
        }
        if (gemm.mainloop() == GemmMainloop.HOPPER) {
            for (int[] shape : SHARED_SHAPES) {
                everySchedule(f, shape);
            }
            tuned(f);
        }
        hybrid(f);
        sameTwice(f, "stream_k_twice", SHARED_SHAPES[1][0], SHARED_SHAPES[1][1], SHARED_SHAPES[1][2]);
        f.throwIfAny();
    }

    /**
     * {@link Gemm.Options#tune()}: the first call of a shape times its schedules and must still leave
     * the right C (it ran several times, beta 0); the choice is kept; a later call of the shape with
     * beta 1 (never timed) adds A B once more.
     */
    private void tuned(Failures f) {
        // 64 rows: the tuner times the tiled kernels' schedules; at most 32 rows take the skinny kernels untimed.
        int m = SHARED_SHAPES[1][0], n = SHARED_SHAPES[1][1], k = SHARED_SHAPES[1][2];
        long seed = s.seed("stream_k_tuned", m, n, k);
        HostMatrix a = HostMatrix.random(seed, DType.BF16, m, k);
        HostMatrix b = HostMatrix.random(seed + 1, DType.BF16, n, k);
        var ref = GemmReference.full(a, b, GemmLayout.NK);
        String what = m + " x " + n + " x " + k + " bf16 -> F32, tuned";
        try (Gemm tunedGemm = Gemm.create(Gemm.Options.defaults().withTune(true));
             SymTensor ta = s.upload(a, k, 0, m, k); SymTensor tb = s.upload(b, k, 0, n, k); SymTensor c = heap.empty(DType.F32, m, n)) {
            s.poison(c);
            tunedGemm.matmul(ta, tb, GemmLayouts.MK_NK, c, 1f, 0f, stream);
            iris.synchronize();
            ByteBuffer once = GemmScenarios.download(c);
            f.add(GemmReference.check(what + ", first call", once, DType.F32, n, m, ref, null));
            f.check(tunedGemm.tunedShapes() == 1, () -> what + ": " + tunedGemm.tunedShapes() + " shapes kept after the first call, expected 1");
            tunedGemm.matmul(ta, tb, GemmLayouts.MK_NK, c, 1f, 1f, stream);
            iris.synchronize();
            ByteBuffer twice = GemmScenarios.download(c);
            for (int j = 0; j < n; j++) {
                float expected = 2 * GemmReference.get(once, DType.F32, j);
                float got = GemmReference.get(twice, DType.F32, j);
                double bound = 2 * Math.ulp(expected) + 2 * Math.abs(expected) * 0x1p-24 * k;
                if (!(Math.abs(got - expected) <= bound)) {
                    f.fail(what + ", second call with beta 1: (0, " + j + ") = " + got + ", expected about " + expected);
                    break;
                }
            }
            f.check(tunedGemm.tunedShapes() == 1, () -> what + ": the beta 1 call kept another shape");
        }
    }

    /**
     * {@code shape}, bf16 in and F32 out, under each schedule it can take on this GPU in every tile,
     * clustered or not, forced (split-K must be among them; the first and last shapes' stream-K grids
     * are no multiple of their tiles, and the last one's blocks of 64 x 64 tiles reach past C), each
     * against the reference.
     */
    private void everySchedule(Failures f, int[] shape) {
        int m = shape[0], n = shape[1], k = shape[2];
        int sms = gemm.device().multiprocessorCount();
        List<StreamKPlan> plans = StreamKPlan.candidates(GemmTile.values(), m, n, Gemm.kBlocks(k), sms, true);
        String what = m + " x " + n + " x " + k + " bf16 -> F32";
        f.check(plans.stream().anyMatch(p -> p.tile().clustered() && p.isSplitK(p.units(m, n))),
                () -> what + " on " + sms + " SMs: no split-K in clusters among " + plans);
        long seed = s.seed("stream_k_every_schedule", m, n, k);
        HostMatrix a = HostMatrix.random(seed, DType.BF16, m, k);
        HostMatrix b = HostMatrix.random(seed + 1, DType.BF16, n, k);
        var ref = GemmReference.full(a, b, GemmLayout.NK);
        try (SymTensor ta = s.upload(a, k, 0, m, k); SymTensor tb = s.upload(b, k, 0, n, k); SymTensor c = heap.empty(DType.F32, m, n)) {
            GemmProblem p = new GemmProblem(DeviceMatrix.of(ta), DeviceMatrix.of(tb), GemmLayout.NK, 0, DeviceMatrix.of(c));
            for (StreamKPlan plan : plans) {
                s.poison(c);
                s.starting(what + ", " + plan);
                gemm.launch(p, plan, stream);
                iris.synchronize();
                f.add(GemmReference.check(what + ", " + plan.describe(plan.units(m, n)), GemmScenarios.download(c), DType.F32, n, m, ref, null));
            }
        }
    }

    /** The hybrid shape, bf16 in, F32 out with a bias: its first and last tile rows against the reference. */
    private void hybrid(Failures f) {
        int m = HYBRID[0], n = HYBRID[1], k = HYBRID[2];
        long seed = s.seed("stream_k_hybrid", m, n, k);
        HostMatrix a = HostMatrix.random(seed, DType.BF16, m, k);
        HostMatrix b = HostMatrix.random(seed + 1, DType.BF16, n, k);
        HostMatrix bias = HostMatrix.random(seed + 2, DType.BF16, 1, n).as(DType.F32);
        try (SymTensor ta = s.upload(a, k, 0, m, k); SymTensor tb = s.upload(b, k, 0, n, k); SymTensor tbias = s.upload(bias, n, 0, n);
             SymTensor c = heap.empty(DType.F32, m, n)) {
            s.poison(c);
            if (gemm.mainloop() == GemmMainloop.HOPPER) {
                int sms = gemm.device().multiprocessorCount();
                StreamKPlan plan = StreamKPlan.shared(GemmTile.of(m), GemmChecks.tiles(m, n), Gemm.kBlocks(k), sms);
                f.check(plan != null && plan.sharedTiles() < GemmChecks.tiles(m, n), () -> "the hybrid shape has no hybrid plan on " + sms + " SMs");
                gemm.launch(new GemmProblem(DeviceMatrix.of(ta), DeviceMatrix.of(tb), GemmLayout.NK, tbias.deviceAddress(), DeviceMatrix.of(c)),
                        plan == null ? StreamKPlan.whole(m, n, sms) : plan, stream);
            } else {
                gemm.matmul(ta, tb, GemmLayout.NK, tbias, c, stream);
            }
            iris.synchronize();
            ByteBuffer got = GemmScenarios.download(c);
            for (int row0 : new int[] {0, m - WINDOW_ROWS}) {
                var ref = GemmReference.products(a, b, GemmLayout.NK, row0, WINDOW_ROWS, null);
                ByteBuffer rows = got.slice(row0 * n * Float.BYTES, WINDOW_ROWS * n * Float.BYTES).order(ByteOrder.nativeOrder());
                f.add(GemmReference.check(m + " x " + n + " x " + k + " bf16 -> F32 + bias, rows " + row0 + ".." + (row0 + WINDOW_ROWS - 1),
                        rows, DType.F32, n, WINDOW_ROWS, ref, bias.values()));
            }
        }
    }

}
