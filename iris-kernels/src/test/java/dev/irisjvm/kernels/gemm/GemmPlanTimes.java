package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.baselines.CublasLtGemm;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.IntConsumer;

/**
 * Times every schedule of a shape ({@link StreamKPlan#candidates}) in every tile it can run on
 * ({@link GemmTile#all}: clustered or not, the 64-row ones past 64 rows and the 128-row ones under
 * 64 too), at most {@link SkinnyGemm#MAX_M} rows also the skinny kernels in every even split of K,
 * each forced in turn, beside {@link ScheduleCost}'s estimate of it: the data the cost model's constants are fitted on (the
 * benchmark times only the schedule the rule chooses). One GPU, as one rank:
 *
 * <pre>
 * bin/iris-run -n 1 -- java -cp 'lib/*' dev.irisjvm.kernels.gemm.GemmPlanTimes plans.json 128x4096x2048:kn 64x3584x4096:nk
 * </pre>
 *
 * <p>Method: bf16 inputs uniform in [-1, 1), bf16 output; as many copies of A and B as hold twice the
 * L2, so that no call finds its operands in L2 from the call before; each plan captured as a CUDA
 * graph of {@value #CALLS} calls that rotate through the copies (no host launch cost in the time);
 * {@value #ROUNDS} rounds, each replaying every plan's graph once in an order that rotates every
 * round, after one warm-up replay each; a plan's time per call is the median of its rounds.
 * cuBLASLt (its heuristic's first algorithm, a 32 MiB workspace) is timed the same way beside
 * them, so that the kernels are compared without the launches. Each output is compared with the
 * rule's (the same sums in another order): a difference over {@value #TOLERANCE} of the largest
 * |C| fails the run (exit code 3).
 */
public final class GemmPlanTimes {
    static final int CALLS = 20;
    static final int ROUNDS = 15;
    static final double TOLERANCE = 2e-2;
    static final int MAX_COPIES = 16;
    /** At least the L2 of the GPUs this runs on (an H200's is 60 MB): the copies are sized by it before the GPU is asked. */
    static final long L2_BYTES = 64L << 20;

    private record Shape(int m, int n, int k, GemmLayout layout) {
        static Shape parse(String s) {
            String[] dims = s.split(":")[0].split("x");
            GemmLayout layout = s.endsWith(":kn") ? GemmLayout.KN : GemmLayout.NK;
            return new Shape(Integer.parseInt(dims[0]), Integer.parseInt(dims[1]), Integer.parseInt(dims[2]), layout);
        }

        long operandBytes() {
            return 2L * ((long) m * k + (long) n * k);
        }

        @Override
        public String toString() {
            return m + "x" + n + "x" + k + ":" + layout.name().toLowerCase(Locale.ROOT);
        }
    }

    private GemmPlanTimes() {
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length < 2) {
            System.err.println("usage: GemmPlanTimes OUT.json MxNxK:nk|kn ...");
            System.exit(2);
        }
        List<Shape> shapes = Arrays.stream(argv).skip(1).map(Shape::parse).toList();
        long heap = 0;
        for (Shape s : shapes) {
            heap = Math.max(heap, copies(s) * (s.operandBytes() + (4L << 20)) + 4L * s.m() * s.n());
        }
        StringBuilder json = new StringBuilder("[\n");
        boolean failed = false;
        try (Iris iris = Iris.init(IrisConfig.fromEnvironment().withHeapSize(heap + (256L << 20))); Gemm gemm = Gemm.create();
             CublasLtGemm lt = CublasLtGemm.open(iris.stream(), CublasLtGemm.DEFAULT_WORKSPACE_BYTES)) {
            int sms = gemm.device().multiprocessorCount();
            System.out.println("GemmPlanTimes on " + gemm.device().name() + ", " + sms + " SMs, L2 " + (gemm.device().l2CacheBytes() >> 20)
                    + " MiB");
            for (Shape s : shapes) {
                failed |= timeShape(iris, gemm, lt, s, sms, json);
            }
        }
        Files.writeString(Path.of(argv[0]), json.append("]\n").toString().replace(",\n]", "\n]"));
        System.exit(failed ? 3 : 0);
    }

    private static int copies(Shape s) {
        return (int) Math.max(1, Math.min(MAX_COPIES, (2 * L2_BYTES + s.operandBytes() - 1) / s.operandBytes()));
    }

    /** One way to compute a shape: a schedule of ours, or cuBLASLt; {@code call} enqueues it on the i-th copy of the operands. */
    private record Way(String tile, int grid, int sharedTiles, boolean rule, String what, double modelUs, IntConsumer call) {
    }

    /** Times every way of {@code s}; appends a JSON object per way; true if a way's output was wrong. */
    private static boolean timeShape(Iris iris, Gemm gemm, CublasLtGemm lt, Shape s, int sms, StringBuilder json) {
        int kBlocks = Gemm.kBlocks(s.k());
        int bRows = (int) s.layout().bRows(s.n(), s.k());
        int bCols = (int) s.layout().bCols(s.n(), s.k());
        HostMatrix a = HostMatrix.random(s.hashCode(), DType.BF16, s.m(), s.k());
        HostMatrix b = HostMatrix.random(s.hashCode() + 1L, DType.BF16, bRows, bCols);
        int copies = copies(s);
        Stream stream = iris.stream();
        List<SymTensor> owned = new ArrayList<>();
        List<CudaGraph> graphs = new ArrayList<>();
        boolean failed = false;
        try {
            List<GemmProblem> calls = new ArrayList<>();
            SymTensor c = own(owned, iris.heap().empty(DType.BF16, s.m(), s.n()));
            DeviceMatrix dc = new DeviceMatrix(c.deviceAddress(), DType.BF16, s.m(), s.n(), s.n());
            for (int i = 0; i < copies; i++) {
                SymTensor ta = own(owned, iris.heap().empty(DType.BF16, s.m(), s.k()));
                SymTensor tb = own(owned, iris.heap().empty(DType.BF16, bRows, bCols));
                ta.copyFrom(a.bytes());
                tb.copyFrom(b.bytes());
                calls.add(new GemmProblem(new DeviceMatrix(ta.deviceAddress(), DType.BF16, s.m(), s.k(), s.k()),
                        new DeviceMatrix(tb.deviceAddress(), DType.BF16, bRows, bCols, bCols), s.layout(), 0, dc));
            }
            List<Way> ways = new ArrayList<>();
            StreamKPlan rule = Gemm.plan(s.m(), s.n(), s.k(), sms, true);
            boolean skinnyRule = gemm.runsSkinny(s.m(), s.n(), s.k());   // then the rule's way is a skinny split
            List<StreamKPlan> plans = new ArrayList<>(List.of(rule));
            for (StreamKPlan plan : StreamKPlan.candidates(GemmTile.all(s.m()), s.m(), s.n(), kBlocks, sms, true)) {
                if (!plans.contains(plan)) {
                    plans.add(plan);
                }
            }
            for (StreamKPlan plan : plans) {
                ways.add(new Way(plan.tile().name(), plan.grid(), plan.sharedTiles(), plan == rule && !skinnyRule, plan.describe(plan.units(s.m(), s.n())),
                        ScheduleCost.us(plan, s.m(), s.n(), kBlocks, sms, StreamKPlan.pairsPay(s.k())), i -> gemm.launch(calls.get(i % copies), plan, stream)));
            }
            if (SkinnyGemm.takes(s.m())) {
                addSkinnyWays(gemm, s, calls, stream, ways);
            }
            if (lt != null) {
                ways.add(new Way("CUBLASLT", 0, 0, false, lt.algorithm(s.layout(), DType.BF16, DType.BF16, s.m(), s.n(), s.k()).text(), 0,
                        i -> lt.gemm(s.layout(), DType.BF16, DType.BF16, s.m(), s.n(), s.k(), calls.get(i % copies).a().address(),
                                calls.get(i % copies).b().address(), c.deviceAddress(), false)));
            }
            float[] ruleC = null;
            for (Way way : ways) {
                Memcpy.memset(c.deviceAddress(), 0xFF, c.byteSize(), stream);
                way.call().accept(0);
                iris.synchronize();
                float[] got = download(c);
                ruleC = ruleC == null ? got : ruleC;
                double diff = maxDifference(got, ruleC);
                if (!(diff <= TOLERANCE)) {
                    System.out.printf(Locale.ROOT, "FAIL %s %s: differs from the rule's output by %.3g of max |C|%n", s, way.what(), diff);
                    failed = true;
                }
                stream.beginCapture();
                try {
                    for (int i = 0; i < CALLS; i++) {
                        way.call().accept(i);
                    }
                } finally {
                    graphs.add(stream.endCapture());
                }
            }
            double[][] us = new double[ways.size()][ROUNDS];
            try (Event start = Event.timed(); Event end = Event.timed()) {
                for (CudaGraph g : graphs) {
                    g.launch(stream);
                }
                for (int r = 0; r < ROUNDS; r++) {
                    for (int j = 0; j < ways.size(); j++) {
                        int w = (j + r) % ways.size();
                        start.record(stream);
                        graphs.get(w).launch(stream);
                        end.record(stream);
                        end.synchronize();
                        us[w][r] = end.elapsedSince(start) * 1000.0 / CALLS;
                    }
                }
            }
            iris.checkDeviceStatus();
            for (int w = 0; w < ways.size(); w++) {
                Way way = ways.get(w);
                double median = median(us[w]);
                System.out.printf(Locale.ROOT, "%-20s %8.2f us (model %7.2f)%s  %s%n", s, median, way.modelUs(), way.rule() ? " rule" : "     ",
                        way.what());
                json.append(String.format(Locale.ROOT,
                        "  {\"shape\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"tile\": \"%s\", \"grid\": %d, \"sharedTiles\": %d, "
                                + "\"rule\": %b, \"plan\": \"%s\", \"medianUs\": %.3f, \"modelUs\": %.3f},%n",
                        s, s.m(), s.n(), s.k(), way.tile(), way.grid(), way.sharedTiles(), way.rule(), way.what(), median, way.modelUs()));
            }
        } finally {
            iris.synchronize();
            graphs.forEach(CudaGraph::close);
            owned.forEach(SymTensor::close);
        }
        return failed;
    }

    /**
     * The skinny kernels' splits of {@code s}, in each distinct number of even slices of K that fits
     * the workspace, on up to six blocks per SM (two waves on sm_90); the rule's is the one {@link
     * Gemm#schedule} names.
     */
    private static void addSkinnyWays(Gemm gemm, Shape s, List<GemmProblem> calls, Stream stream, List<Way> ways) {
        String rule = gemm.schedule(s.m(), s.n(), s.k());
        int copies = calls.size();
        int most = 6 * gemm.device().multiprocessorCount();
        List<SkinnyGemm.Split> splits = new ArrayList<>();
        for (int slices = 1; slices <= SkinnyGemm.evenly(s.m(), s.n(), s.k(), Integer.MAX_VALUE).slices(); slices++) {
            SkinnyGemm.Split split = SkinnyGemm.evenly(s.m(), s.n(), s.k(), slices);
            if (split.grid() <= most && !splits.contains(split)) {
                splits.add(split);
            }
        }
        for (SkinnyGemm.Split split : splits) {
            String what = split.describe();
            ways.add(new Way("SKINNY", split.grid(), split.slices(), what.equals(rule), what, 0,
                    i -> gemm.launchSkinny(calls.get(i % copies), split.slices(), stream)));
        }
    }

    private static SymTensor own(List<SymTensor> owned, SymTensor t) {
        owned.add(t);
        return t;
    }

    /** C (bf16) as floats. */
    private static float[] download(SymTensor c) {
        ByteBuffer b = GemmScenarios.download(c);
        float[] v = new float[Math.toIntExact(c.byteSize() / 2)];
        for (int i = 0; i < v.length; i++) {
            v[i] = GemmReference.get(b, DType.BF16, i);
        }
        return v;
    }

    /** max |got - want| over max |want|; NaN (an unwritten element) if any element is NaN. */
    private static double maxDifference(float[] got, float[] want) {
        double diff = 0;
        double scale = 0;
        for (int i = 0; i < got.length; i++) {
            if (Float.isNaN(got[i]) || Float.isNaN(want[i])) {
                return Double.NaN;
            }
            diff = Math.max(diff, Math.abs(got[i] - want[i]));
            scale = Math.max(scale, Math.abs(want[i]));
        }
        return diff / scale;
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
