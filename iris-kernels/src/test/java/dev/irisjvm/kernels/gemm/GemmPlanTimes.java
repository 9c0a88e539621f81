package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Times every schedule of a shape in every tile, the 64-row ones past 64 rows too ({@link
 * StreamKPlan#candidates}), each forced in turn, beside
 * {@link ScheduleCost}'s estimate of it: the data the cost model's constants are fitted on (the
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
 * round, after one warm-up replay each; a plan's time per call is the median of its rounds. Each
 * plan's output is compared with the rule's (the same sums in another order): a difference over
 * {@value #TOLERANCE} of the largest |C| fails the run (exit code 3).
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
        try (Iris iris = Iris.init(IrisConfig.fromEnvironment().withHeapSize(heap + (256L << 20))); Gemm gemm = Gemm.create()) {
            int sms = gemm.device().multiprocessorCount();
            System.out.println("GemmPlanTimes on " + gemm.device().name() + ", " + sms + " SMs, L2 " + (gemm.device().l2CacheBytes() >> 20)
                    + " MiB");
            for (Shape s : shapes) {
                failed |= timeShape(iris, gemm, s, sms, json);
            }
        }
        Files.writeString(Path.of(argv[0]), json.append("]\n").toString().replace(",\n]", "\n]"));
        System.exit(failed ? 3 : 0);
    }

    private static int copies(Shape s) {
        return (int) Math.max(1, Math.min(MAX_COPIES, (2 * L2_BYTES + s.operandBytes() - 1) / s.operandBytes()));
    }

    /** Times every plan of {@code s}; appends a JSON object per plan; true if a plan's output was wrong. */
    private static boolean timeShape(Iris iris, Gemm gemm, Shape s, int sms, StringBuilder json) throws IOException {
        int kBlocks = Gemm.kBlocks(s.k());
        StreamKPlan rule = StreamKPlan.paired(StreamKPlan.choose(s.m(), s.n(), kBlocks, sms), s.m(), s.n(), sms);
        List<StreamKPlan> plans = new ArrayList<>(List.of(rule));
        for (StreamKPlan plan : StreamKPlan.candidates(GemmTile.unpaired(), s.m(), s.n(), kBlocks, sms)) {
            if (!plans.contains(plan)) {
                plans.add(plan);
            }
        }
        int bRows = (int) s.layout().bRows(s.n(), s.k());
        int bCols = (int) s.layout().bCols(s.n(), s.k());
        HostMatrix a = HostMatrix.random(s.hashCode(), DType.BF16, s.m(), s.k());
        HostMatrix b = HostMatrix.random(s.hashCode() + 1L, DType.BF16, bRows, bCols);
        int copies = copies(s);
        List<SymTensor> owned = new ArrayList<>();
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
            Stream stream = iris.stream();
            float[] ruleC = null;
            List<CudaGraph> graphs = new ArrayList<>();
            try {
                for (StreamKPlan plan : plans) {
                    Memcpy.memset(c.deviceAddress(), 0xFF, c.byteSize(), stream);
                    gemm.launch(calls.get(0), plan, stream);
                    iris.synchronize();
                    float[] got = download(c);
                    if (ruleC == null) {
                        ruleC = got;
                    }
                    double diff = maxDifference(got, ruleC);
                    if (!(diff <= TOLERANCE)) {
                        System.out.printf(Locale.ROOT, "FAIL %s %s: differs from the rule's output by %.3g of max |C|%n", s,
                                plan.describe(plan.tiles(s.m(), s.n())), diff);
                        failed = true;
                    }
                    stream.beginCapture();
                    CudaGraph graph;
                    try {
                        for (int i = 0; i < CALLS; i++) {
                            gemm.launch(calls.get(i % copies), plan, stream);
                        }
                    } finally {
                        graph = stream.endCapture();
                    }
                    graphs.add(graph);
                }
                double[][] us = new double[plans.size()][ROUNDS];
                try (Event start = Event.timed(); Event end = Event.timed()) {
                    for (CudaGraph g : graphs) {
                        g.launch(stream);
                    }
                    for (int r = 0; r < ROUNDS; r++) {
                        for (int j = 0; j < plans.size(); j++) {
                            int p = (j + r) % plans.size();
                            start.record(stream);
                            graphs.get(p).launch(stream);
                            end.record(stream);
                            end.synchronize();
                            us[p][r] = end.elapsedSince(start) * 1000.0 / CALLS;
                        }
                    }
                }
                iris.checkDeviceStatus();
                for (int p = 0; p < plans.size(); p++) {
                    StreamKPlan plan = plans.get(p);
                    double median = median(us[p]);
                    double estimate = ScheduleCost.us(plan, s.m(), s.n(), kBlocks, sms);
                    String what = plan.describe(plan.tiles(s.m(), s.n()));
                    System.out.printf(Locale.ROOT, "%-20s %8.2f us (model %7.2f)%s  %s%n", s, median, estimate, p == 0 ? " rule" : "     ", what);
                    json.append(String.format(Locale.ROOT,
                            "  {\"shape\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"tile\": \"%s\", \"grid\": %d, \"sharedTiles\": %d, "
                                    + "\"rule\": %b, \"plan\": \"%s\", \"medianUs\": %.3f, \"modelUs\": %.3f},%n",
                            s, s.m(), s.n(), s.k(), plan.tile(), plan.grid(), plan.sharedTiles(), p == 0, what, median, estimate));
                }
            } finally {
                for (CudaGraph g : graphs) {
                    g.close();
                }
            }
        } finally {
            iris.synchronize();
            for (SymTensor t : owned) {
                t.close();
            }
        }
        return failed;
    }

    private static SymTensor own(List<SymTensor> owned, SymTensor t) {
        owned.add(t);
        return t;
    }

    private static float[] download(SymTensor c) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.toIntExact(c.byteSize())).order(ByteOrder.nativeOrder());
        c.copyTo(b);
        b.flip();
        float[] v = new float[b.remaining() / 2];
        for (int i = 0; i < v.length; i++) {
            v[i] = Float.intBitsToFloat((b.getShort() & 0xFFFF) << 16);
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
