package dev.irisjvm.bench.report;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.core.DType;
import java.util.Collection;

/**
 * The shortest time a GEMM call can take at given peaks: its FLOPs at a tensor-core rate (the
 * compute floor) or the bytes it must move, A and B read once and C written once, at an HBM
 * bandwidth (the memory floor), whichever is longer. Small M is bound by memory (the whole of B is
 * read for a few rows of A), large M by compute.
 *
 * <p>Two sets of peaks: the datasheet's ({@link GemmDocument#DATASHEET_TFLOPS} TFLOP/s and the
 * H200's {@value #DATASHEET_HBM_TBPS} TB/s), and the run's own: the best TFLOP/s and the best
 * bytes per second of any usable baseline point ({@link GemmMeasurement#usableBaseline()}) of the
 * same run, rates cuBLAS is known to reach on this GPU.
 *
 * <pre>{@code
 * GemmRoofline peaks = GemmRoofline.measured(sweep.measurements());
 * peaks.floorUs(point);                      // max(FLOPs / peak, bytes / bandwidth), µs
 * GemmRoofline.DATASHEET.memoryBound(point); // true for 1 x 4096 x 4096
 * }</pre>
 *
 * @param tflops the compute peak, TFLOP/s; NaN when unknown
 * @param tbps   the memory peak, TB/s (1e12 bytes per second); NaN when unknown
 */
record GemmRoofline(double tflops, double tbps) {
    /** HBM3e bandwidth of an H200 SXM, TB/s, from NVIDIA's datasheet. */
    static final double DATASHEET_HBM_TBPS = 4.8;
    /** The datasheet's peaks. */
    static final GemmRoofline DATASHEET = new GemmRoofline(GemmDocument.DATASHEET_TFLOPS, DATASHEET_HBM_TBPS);

    /** The best rates of the usable baseline points among {@code points}; NaN for a rate none gives. */
    static GemmRoofline measured(Collection<GemmMeasurement> points) {
        double tflops = Double.NaN;
        double tbps = Double.NaN;
        for (GemmMeasurement m : points) {
            if (m.usableBaseline() && m.medianUs() > 0) {
                tflops = Double.isNaN(tflops) ? m.tflops() : Math.max(tflops, m.tflops());
                double rate = bytes(m) / (m.medianUs() * 1e6);
                tbps = Double.isNaN(tbps) ? rate : Math.max(tbps, rate);
            }
        }
        return new GemmRoofline(tflops, tbps);
    }

    /** Bytes a call must move: A (M x K) and B (N x K) read, C (M x N) written, each once. */
    static double bytes(GemmMeasurement m) {
        return ((double) m.m() * m.k() + (double) m.n() * m.k()) * elementBytes(m.inType()) + (double) m.m() * m.n() * elementBytes(m.outType());
    }

    /** The FLOPs at the compute peak, µs. */
    double computeUs(GemmMeasurement m) {
        return m.flops() / (tflops * 1e6);
    }

    /** The bytes at the memory peak, µs. */
    double memoryUs(GemmMeasurement m) {
        return bytes(m) / (tbps * 1e6);
    }

    /** The roofline: the longer of the two floors, µs; NaN where a peak is unknown. */
    double floorUs(GemmMeasurement m) {
        double c = computeUs(m);
        double b = memoryUs(m);
        return Double.isNaN(c) || Double.isNaN(b) ? Double.NaN : Math.max(c, b);
    }

    /** Whether the memory floor is the longer one. */
    boolean memoryBound(GemmMeasurement m) {
        return memoryUs(m) > computeUs(m);
    }

    private static int elementBytes(String type) {
        DType t = OptionChecks.dtype(type);
        if (t == null) {
            throw new IllegalArgumentException("GEMM point of unknown element type '" + type + "'");
        }
        return t.byteSize();
    }
}
