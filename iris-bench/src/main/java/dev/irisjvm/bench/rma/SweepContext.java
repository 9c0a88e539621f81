package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.Seeds;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;

/**
 * What every benchmark of a sweep shares on one rank: the Iris instance, the kernels, the timer, the
 * verifier, the point protocol, the log, and helpers for buffers and seeds. Every rank holds one and
 * calls it in the same order (allocation and points are collective).
 *
 * <pre>{@code
 * try (SymTensor src = ctx.freshData(bytes); SymTensor dst = ctx.buffer(bytes)) {
 *     ctx.forEachPair((issuer, peer) -> ...);   // one point per ordered pair of ranks
 * }
 * }</pre>
 */
public final class SweepContext implements AutoCloseable {
    private final Iris iris;
    private final SweepOptions options;
    private final RmaKernels kernels;
    private final RepTimer timer;
    private final Verifier verifier;
    private final Lockstep lockstep;
    private final MeasurementLog log;
    private final long runSeed;
    private long point;

    public SweepContext(Iris iris, SweepOptions options, RmaKernels kernels, long runSeed) {
        this.iris = iris;
        this.options = options;
        this.kernels = kernels;
        this.runSeed = runSeed;
        this.timer = new RepTimer(iris, kernels, iris.stream(), options.gate());
        this.verifier = new Verifier(iris, kernels, iris.stream());
        this.lockstep = new Lockstep(iris);
        this.log = new MeasurementLog();
    }

    public Iris iris() {
        return iris;
    }

    public int rank() {
        return iris.rank();
    }

    public int world() {
        return iris.worldSize();
    }

    public Stream stream() {
        return iris.stream();
    }

    public SweepOptions options() {
        return options;
    }

    public RmaKernels kernels() {
        return kernels;
    }

    public RepTimer timer() {
        return timer;
    }

    public Verifier verifier() {
        return verifier;
    }

    public Lockstep lockstep() {
        return lockstep;
    }

    public MeasurementLog log() {
        return log;
    }

    /** The next point's number; every rank calls this once per point, so numbers agree across ranks. */
    public long nextPoint() {
        return ++point;
    }

    /** A seed for data that rank {@code owner} generates at a point: differs per run seed, point and owner. */
    public long seed(long pointNumber, int owner) {
        return Seeds.point(runSeed, pointNumber, owner);
    }

    /** Work on an ordered pair of distinct ranks. */
    @FunctionalInterface
    public interface PairPoint {
        void run(int issuer, int peer);
    }

    /** Runs {@code point} for every ordered pair of distinct ranks, issuer by issuer (the same order on every rank). */
    public void forEachPair(PairPoint point) {
        for (int i = 0; i < world(); i++) {
            for (int j = 0; j < world(); j++) {
                if (i != j) {
                    point.run(i, j);
                }
            }
        }
    }

    /** {@link #randomData} of this rank seeded by the next point's number: the data of one size (collective). */
    public SymTensor freshData(long bytes) {
        return randomData(bytes, seed(nextPoint(), rank()));
    }

    /** Fresh random floats in [-1, 1) covering at least {@code bytes} bytes (collective). */
    public SymTensor randomData(long bytes, long seed) {
        return iris.heap().uniform(seed, -1.0, 1.0, DType.F32, words4(bytes));
    }

    /** An uninitialized buffer of at least {@code bytes} bytes (collective); poison it before use. */
    public SymTensor buffer(long bytes) {
        return iris.heap().empty(DType.F32, words4(bytes));
    }

    /** {@code n} uint64 counters or flags, zero (collective). */
    public SymTensor counters(long n) {
        return iris.heap().zeros(DType.I64, n);
    }

    /** Fills this rank's copy with 0xFF bytes (NaN as floats) on the sweep's stream. */
    public void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), iris.stream());
    }

    /** Sets this rank's copy to zero on the sweep's stream. */
    public void zero(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0, t.byteSize(), iris.stream());
    }

    private static long words4(long bytes) {
        return Math.max(1, (bytes + 3) / 4);
    }

    /** Logs a measurement of this rank and prints it at once if its check is not ok. */
    public void record(long pointNumber, Measurement m) {
        log.add(pointNumber, m);
        if (!Verifier.OK.equals(m.check())) {
            System.out.println("rank " + rank() + ": CHECK FAILED " + m.op() + " " + m.impl() + " " + SizeList.format(m.bytes())
                    + " issuer " + m.issuer() + " peer " + m.peer() + ": " + m.check());
        }
    }

    @Override
    public void close() {
        verifier.close();
        timer.close();
    }
}
