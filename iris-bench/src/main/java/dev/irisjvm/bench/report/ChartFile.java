package dev.irisjvm.bench.report;

import java.util.List;

/**
 * One chart of a report: the markdown link to its PNG once the drawing has written it, or, where
 * this runtime cannot draw, a note that says so and names the command that redraws it from the
 * raw JSON copied next to the report.
 *
 * <pre>{@code
 * sb.append(ChartFile.markdown("gemm-tflops.png", "GEMM TFLOP/s", () -> chart.writePng(path), errors,
 *         "bin/iris-bench report gemm"));
 * }</pre>
 */
final class ChartFile {
    /** Writes the PNG. */
    @FunctionalInterface
    interface Drawing {
        void draw() throws Exception;
    }

    private ChartFile() {
    }

    /**
     * The image link, or the note; a failure's reason (file: exception) is added to {@code errors}.
     */
    static String markdown(String file, String alt, Drawing drawing, List<String> errors, String redrawCommand) {
        if (draw(file, drawing, errors)) {
            return "![" + alt + "](" + file + ")\n\n";
        }
        return "Chart not written (" + errors.get(errors.size() - 1).replace('\n', ' ') + "); the raw JSON next to this file can "
                + "redraw it: `" + redrawCommand + "`.\n\n";
    }

    /**
     * Runs the drawing of {@code file}; false, with the reason (file: exception) added to {@code
     * errors}, where this runtime cannot draw. A Java runtime without java.desktop
     * (NoClassDefFoundError), or a host without fonts (AWTError, InternalError, a
     * NullPointerException inside the font code), cannot: the tables still stand. AWTError is not
     * named here: naming it would need java.desktop to load this very method.
     */
    static boolean draw(String file, Drawing drawing, List<String> errors) {
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
}
