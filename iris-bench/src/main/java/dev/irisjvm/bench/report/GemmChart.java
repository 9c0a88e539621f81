package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;

/**
 * The GEMM report's bar chart, TFLOP/s per shape for Iris and cuBLAS, written as a PNG by XChart.
 * Kept apart from {@link GemmDocument} so that a runtime without java.desktop (a jlink'd one) fails
 * only here, where the document catches it, and still writes the tables.
 *
 * <pre>{@code
 * GemmChart.write("GEMM throughput", List.of("8192³ nk"), List.of(733.0), List.of(758.0), Path.of("gemm-tflops.png"));
 * }</pre>
 */
final class GemmChart {
    private GemmChart() {}

    /** One bar per shape and series; {@code cublas} may be null (no baseline in the run). */
    static void write(String title, List<String> labels, List<Double> iris, List<Double> cublas, Path file) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(1100).height(600).title(title).xAxisTitle("M × N × K, B layout")
                .yAxisTitle("TFLOP/s").build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisLabelRotation(20);
        chart.addSeries("Iris", labels, iris);
        if (cublas != null) {
            chart.addSeries("cuBLAS", labels, cublas);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapFormat.PNG);
    }
}
