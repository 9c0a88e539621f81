package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;

/**
 * The GEMM report's bar chart, TFLOP/s per shape for Iris and its baselines, written as a PNG by
 * XChart. Kept apart from {@link GemmDocument} so that a runtime without java.desktop (a jlink'd
 * one) fails only here, where the document catches it, and still writes the tables.
 *
 * <pre>{@code
 * Map<String, List<Double>> series = new LinkedHashMap<>();   // the legend's order
 * series.put("Iris", List.of(733.0));
 * series.put("cuBLAS", List.of(758.0));
 * GemmChart.write("GEMM throughput", List.of("8192³ nk"), series, Path.of("gemm-tflops.png"));
 * }</pre>
 */
final class GemmChart {
    private GemmChart() {}

    /** One bar per shape and series, the series in the map's order (0 where a series has no figure for a shape). */
    static void write(String title, List<String> labels, Map<String, List<Double>> series, Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(600).title(title).xAxisTitle("M × N × K, B layout")
                .yAxisTitle("TFLOP/s").build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisLabelRotation(20);
        series.forEach((name, values) -> chart.addSeries(name, labels, values));
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
    }
}
