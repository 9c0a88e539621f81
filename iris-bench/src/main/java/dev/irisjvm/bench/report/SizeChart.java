package dev.irisjvm.bench.report;

import java.awt.BasicStroke;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * A figure against message size, written as a PNG by XChart: one line per series, optional
 * dashed reference lines (a theoretical peak, a reference implementation).
 *
 * <p>The X axis is log2 of the size in bytes, labelled in binary units ("4 KiB", "1 GiB"): sizes
 * in a sweep double from point to point, so each lands on its own tick, where a base-10 log axis
 * would label 1000, 10000, ... The Y axis is logarithmic on request: bandwidth spans several
 * decades between small and large messages, latency usually does not.
 *
 * <pre>{@code
 * new SizeChart("Remote bandwidth", "GB/s", true)
 *         .series("load [iris]", Map.of(4096L, 1.2, 1L << 30, 370.0))
 *         .referenceSeries("local_copy [local]", Map.of(4096L, 3.0, 1L << 30, 1965.0))
 *         .horizontalLine("NVLink4 18 x 26.56 GB/s", 478)
 *         .writePng(Path.of("docs/benchmarks/rma-bandwidth.png"));
 * }</pre>
 */
public final class SizeChart {
    private static final int WIDTH = 1100;
    private static final int HEIGHT = 650;

    private final String title;
    private final String yTitle;
    private final boolean logY;
    private final Map<String, SortedMap<Long, Double>> lines = new LinkedHashMap<>();
    private final Map<String, SortedMap<Long, Double>> references = new LinkedHashMap<>();
    private final Map<String, Double> horizontals = new LinkedHashMap<>();

    /** @param logY a logarithmic Y axis (then zero and negative points are left out: log cannot show them) */
    public SizeChart(String title, String yTitle, boolean logY) {
        this.title = title;
        this.yTitle = yTitle;
        this.logY = logY;
    }

    /** A measured line. Points that cannot be drawn (zero or negative, NaN) are left out. */
    public SizeChart series(String name, Map<Long, Double> points) {
        lines.put(name, positive(points));
        return this;
    }

    /** A measured line drawn dashed: a reference, not a contender. */
    public SizeChart referenceSeries(String name, Map<Long, Double> points) {
        references.put(name, positive(points));
        return this;
    }

    /** A constant drawn dashed across the whole size range. */
    public SizeChart horizontalLine(String name, double y) {
        if (y > 0) {
            horizontals.put(name, y);
        }
        return this;
    }

    /** True when no series has a point: there is nothing to draw. */
    public boolean isEmpty() {
        return lines.values().stream().allMatch(Map::isEmpty) && references.values().stream().allMatch(Map::isEmpty);
    }

    public void writePng(Path file) throws IOException {
        if (isEmpty()) {
            throw new IllegalStateException("chart '" + title + "' has no points to draw");
        }
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("message size (log2 scale)").yAxisTitle(logY ? yTitle + " (log scale)" : yTitle).build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setYAxisLogarithmic(logY);
        if (!logY) {
            chart.getStyler().setYAxisMin(0.0);   // latencies compare by ratio: keep zero in view
        }
        chart.getStyler().setXAxisLabelRotation(45);
        chart.getStyler().setxAxisTickLabelsFormattingFunction(x -> Sizes.bytes(Math.round(Math.pow(2, x))));
        chart.getStyler().setMarkerSize(6);

        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        for (SortedMap<Long, Double> points : allPoints()) {
            if (!points.isEmpty()) {
                minX = Math.min(minX, log2(points.firstKey()));
                maxX = Math.max(maxX, log2(points.lastKey()));
            }
        }
        for (Map.Entry<String, SortedMap<Long, Double>> e : lines.entrySet()) {
            add(chart, e.getKey(), e.getValue(), false);
        }
        for (Map.Entry<String, SortedMap<Long, Double>> e : references.entrySet()) {
            add(chart, e.getKey(), e.getValue(), true);
        }
        for (Map.Entry<String, Double> e : horizontals.entrySet()) {
            XYSeries s = chart.addSeries(e.getKey(), new double[] {minX, maxX}, new double[] {e.getValue(), e.getValue()});
            s.setMarker(SeriesMarkers.NONE);
            s.setLineStyle(dashed());
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
    }

    private List<SortedMap<Long, Double>> allPoints() {
        List<SortedMap<Long, Double>> all = new ArrayList<>(lines.values());
        all.addAll(references.values());
        return all;
    }

    private static void add(XYChart chart, String name, SortedMap<Long, Double> points, boolean dashed) {
        if (points.isEmpty()) {
            return;
        }
        double[] x = new double[points.size()];
        double[] y = new double[points.size()];
        int i = 0;
        for (Map.Entry<Long, Double> p : points.entrySet()) {
            x[i] = log2(p.getKey());
            y[i] = p.getValue();
            i++;
        }
        XYSeries s = chart.addSeries(name, x, y);
        if (dashed) {
            s.setLineStyle(dashed());
        }
    }

    private static BasicStroke dashed() {
        return new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f);
    }

    private static double log2(long bytes) {
        return Math.log(bytes) / Math.log(2);
    }

    private static SortedMap<Long, Double> positive(Map<Long, Double> points) {
        SortedMap<Long, Double> out = new TreeMap<>();
        points.forEach((k, v) -> {
            if (k != null && k > 0 && v != null && v > 0 && !v.isNaN() && !v.isInfinite()) {
                out.put(k, v);
            }
        });
        return out;
    }
}
