package dev.irisjvm.bench.report;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The charts of one report as it is written into its folder: each chart's markdown link once the
 * drawing has written its PNG or, where this runtime cannot draw, a note that says so and names
 * the command that redraws it from the raw JSON copied next to the report; and why charts were
 * not drawn.
 *
 * <pre>{@code
 * Charts charts = new Charts(Path.of("docs/benchmarks"), ReportKind.GEMM);
 * sb.append(charts.link("gemm-tflops.png", "GEMM TFLOP/s", () -> chart.writePng(charts.file("gemm-tflops.png"))));
 * charts.errors();   // empty when every chart was drawn
 * }</pre>
 */
final class Charts {
    /** Writes a PNG. */
    @FunctionalInterface
    interface Drawing {
        void draw() throws Exception;
    }

    private final Path dir;
    private final String redrawCommand;
    private final List<String> errors = new ArrayList<>();

    Charts(Path dir, ReportKind kind) {
        this.dir = dir;
        this.redrawCommand = "bin/iris-bench report " + kind.prefix();
    }

    /** Where a chart of this report goes. */
    Path file(String name) {
        return dir.resolve(name);
    }

    /** The image link, or the note; a failure's reason (file: exception) is added to {@link #errors()}. */
    String link(String file, String alt, Drawing drawing) {
        if (draw(file, drawing)) {
            return "![" + alt + "](" + file + ")\n\n";
        }
        return "Chart not written (" + errors.get(errors.size() - 1).replace('\n', ' ') + "); the raw JSON next to this file can "
                + "redraw it: `" + redrawCommand + "`.\n\n";
    }

    /** The link of a size chart, or {@code whenEmpty} when the chart has no data. */
    String link(SizeChart chart, String file, String alt, String whenEmpty) {
        return chart.isEmpty() ? whenEmpty : link(file, alt, () -> chart.writePng(file(file)));
    }

    /**
     * Runs the drawing of {@code file}; false, with the reason (file: exception) added to {@link
     * #errors()}, where this runtime cannot draw. A Java runtime without java.desktop
     * (NoClassDefFoundError), or a host without fonts (AWTError, InternalError, a
     * NullPointerException inside the font code), cannot: the tables still stand. AWTError is not
     * named here: naming it would need java.desktop to load this very method.
     */
    boolean draw(String file, Drawing drawing) {
        try {
            drawing.draw();
            return true;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Exception | Error e) {
            errors.add(file + ": " + e);
            return false;
        }
    }

    /** Records a chart that could not even be attempted. */
    void notDrawn(String file, String why) {
        errors.add(file + ": " + why);
    }

    /** Why charts were not drawn, one line per chart; empty when all were. */
    List<String> errors() {
        return List.copyOf(errors);
    }
}
