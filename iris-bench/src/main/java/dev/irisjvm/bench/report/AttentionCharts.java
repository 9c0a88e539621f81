package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The attention report's charts, written as PNGs by XChart. Kept apart from {@link
 * AttentionDocument} so that a runtime without java.desktop (a jlink'd one) fails only here, where
 * the document catches it and still writes the tables.
 *
 * <pre>{@code
 * AttentionCharts.bars("Local kernel", "TFLOP/s", List.of("4K", "16K"), Map.of("Iris", List.of(500.0, 560.0)), Path.of("a.png"));
 * }</pre>
 */
final class AttentionCharts {
    private AttentionCharts() {}

    /** Empty series of bars under {@code names}, in that order, for {@link #bars} to draw once they are filled. */
    static Map<String, List<Double>> series(String... names) {
        Map<String, List<Double>> series = new LinkedHashMap<>();
        for (String name : names) {
            series.put(name, new ArrayList<>());
        }
        return series;
    }

    /** Grouped bars: one group per label, one bar per series (series in map order; 0 for a missing value). */
    static void bars(String title, String yTitle, List<String> labels, Map<String, List<Double>> series, Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(600).title(title).yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisLabelRotation(15);
        series.forEach((name, values) -> chart.addSeries(name, labels, values));
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
    }

    /** Lines against a logarithmic X axis, with a dashed horizontal line at {@code target} (NaN: none). */
    static void lines(String title, String xTitle, String yTitle, Map<String, double[][]> series, double target, String targetName,
                      Path file) throws IOException {
        XYChart chart = new XYChartBuilder().width(1100).height(600).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setXAxisLogarithmic(true);
        double minX = Double.MAX_VALUE;
        double maxX = 0;
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            double[][] xy = e.getValue();
            if (xy[0].length == 0) {
                continue;
            }
            chart.addSeries(e.getKey(), xy[0], xy[1]).setMarker(SeriesMarkers.CIRCLE);
            for (double x : xy[0]) {
                minX = Math.min(minX, x);
                maxX = Math.max(maxX, x);
            }
        }
        if (!Double.isNaN(target) && maxX > 0) {
            chart.addSeries(targetName, new double[] {minX, maxX}, new double[] {target, target}).setMarker(SeriesMarkers.NONE)
                    .setLineStyle(new java.awt.BasicStroke(1.5f, java.awt.BasicStroke.CAP_BUTT, java.awt.BasicStroke.JOIN_MITER, 10f,
                            new float[] {6f, 4f}, 0f));
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
    }
}
