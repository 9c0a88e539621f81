package dev.irisjvm.bench.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import javax.imageio.ImageIO;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Draws a Chrome / Perfetto trace of a fused kernel (dev.irisjvm.kernels.fused.TileTrace) as a PNG
 * timeline with plain Java2D: one band per rank (the trace's processes), one thin row per track
 * (SM and role: consumer 0, consumer 1, spare warps), one bar per event colored by what it is
 * (mainloop, epilogue that stores to peers, local epilogue, spare-warp copy). Needs the
 * {@code java.desktop} module (a full JDK; the GPU bundle's runtime lacks it).
 *
 * <pre>
 * bin/iris-bench timeline --trace fused-trace-all_reduce-spare_warps.json \
 *     --out fused-trace-all_reduce-spare_warps.png
 * </pre>
 */
@Command(name = "timeline", mixinStandardHelpOptions = true, description = "Draws a fused kernel's Chrome trace JSON as a PNG timeline.")
public final class TraceTimeline implements Callable<Integer> {
    static final int WIDTH = 1600;
    static final int LEFT = 110;
    static final int RIGHT = 20;
    static final int TOP = 58;
    static final int BAND_GAP = 26;
    static final int AXIS = 44;

    static final Color COMPUTE = new Color(0x1f, 0x77, 0xb4);
    static final Color TO_PEERS = new Color(0xff, 0x7f, 0x0e);
    static final Color LOCAL = new Color(0xa0, 0xa0, 0xa0);
    static final Color COPY = new Color(0x2c, 0xa0, 0x2c);

    @Option(names = "--trace", required = true, description = "Chrome trace JSON")
    Path trace;

    @Option(names = "--out", required = true, description = "PNG to write")
    Path out;

    @Option(names = "--title", description = "title (default: from the trace's otherData)")
    String title;

    @Override
    public Integer call() throws IOException {
        draw(trace, out, title);
        System.out.println("trace-timeline: wrote " + out);
        return 0;
    }

    /** Draws {@code traceFile} into {@code png}. */
    public static void draw(Path traceFile, Path png, String title) throws IOException {
        ChromeTrace t = ChromeTrace.read(traceFile);
        int tracks = t.threads().values().stream().mapToInt(Map::size).sum();
        int row = tracks > 600 ? 1 : tracks > 300 ? 2 : tracks > 120 ? 3 : 6;
        int bands = Math.max(1, t.processes().size());
        int height = TOP + tracks * row + bands * BAND_GAP + AXIS;
        BufferedImage img = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title != null ? title : t.description(), LEFT, 20);
            legend(g, LEFT, 40);
            double end = Math.max(t.end(), 1e-3);
            double scale = (WIDTH - LEFT - RIGHT) / end;
            // Track positions: bands in pid order, tracks in tid order.
            Map<Integer, Map<Integer, Integer>> y = new LinkedHashMap<>();
            int at = TOP;
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            for (var p : t.threads().entrySet()) {
                at += BAND_GAP;
                g.setColor(Color.BLACK);
                g.drawString(t.processes().getOrDefault(p.getKey(), "pid " + p.getKey()), 8, at - 8);
                // The consumers' tracks of every SM first, then the spare warps' (tid = sm x 4 + role, role 2 = spare warps),
                // so that computing and copying read as two sub-bands of the rank.
                List<Integer> order = new ArrayList<>(p.getValue().keySet());
                order.sort((x, z) -> Integer.compare((x % 4 == 2 ? 1 << 24 : 0) + x, (z % 4 == 2 ? 1 << 24 : 0) + z));
                Map<Integer, Integer> rows = new TreeMap<>();
                int first = at;
                int spareStart = -1;
                int consumers = 0;
                for (int tid : order) {
                    if (tid % 4 == 2 && spareStart < 0) {
                        spareStart = at;
                    }
                    consumers += tid % 4 == 2 ? 0 : 1;
                    rows.put(tid, at);
                    at += row;
                }
                g.setColor(new Color(0xf4, 0xf4, 0xf4));
                g.fillRect(LEFT, first, WIDTH - LEFT - RIGHT, at - first);
                g.setColor(Color.DARK_GRAY);
                g.drawString("consumers:", 8, first + 14);
                g.drawString(consumers + " tracks", 8, first + 28);
                if (spareStart >= 0) {
                    g.drawString("spare warps:", 8, spareStart + 14);
                    g.drawString((order.size() - consumers) + " tracks", 8, spareStart + 28);
                    g.drawLine(LEFT - 6, spareStart, LEFT - 2, spareStart);
                }
                y.put(p.getKey(), rows);
            }
            for (ChromeTrace.Bar b : t.bars()) {
                Integer top = y.getOrDefault(b.pid(), Map.of()).get(b.tid());
                if (top == null) {
                    continue;
                }
                g.setColor(color(b));
                int x0 = LEFT + (int) Math.floor(b.ts() * scale);
                int w = Math.max(1, (int) Math.round(b.dur() * scale));
                g.fillRect(x0, top, w, row);
            }
            axis(g, at + 6, end, scale);
        } finally {
            g.dispose();
        }
        Path parent = png.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        if (!ImageIO.write(img, "png", png.toFile())) {
            throw new IOException("no PNG writer");
        }
    }

    static Color color(ChromeTrace.Bar b) {
        return switch (b.cat()) {
            case "compute" -> COMPUTE;
            case "copy" -> COPY;
            default -> b.name().contains("to peers") ? TO_PEERS : LOCAL;
        };
    }

    private static void legend(Graphics2D g, int x, int y) {
        Object[][] items = {{COMPUTE, "mainloop (tensor cores)"}, {TO_PEERS, "epilogue storing to peers"},
                {LOCAL, "epilogue, local store"}, {COPY, "spare warps: copy to / pull from peers"}};
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        for (Object[] item : items) {
            g.setColor((Color) item[0]);
            g.fillRect(x, y - 10, 14, 10);
            g.setColor(Color.BLACK);
            g.drawString((String) item[1], x + 18, y);
            x += 18 + fm.stringWidth((String) item[1]) + 24;
        }
    }

    private static void axis(Graphics2D g, int y, double end, double scale) {
        g.setColor(Color.BLACK);
        g.setStroke(new BasicStroke(1));
        g.drawLine(LEFT, y, WIDTH - RIGHT, y);
        double step = niceStep(end / 10);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (double v = 0; v <= end + 1e-9; v += step) {
            int x = LEFT + (int) Math.round(v * scale);
            g.drawLine(x, y, x, y + 4);
            g.drawString(String.format(Locale.ROOT, step < 1 ? "%.1f" : "%.0f", v), x - 8, y + 17);
        }
        g.drawString("µs from each rank's first record", LEFT, y + 34);
    }

    /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
    static double niceStep(double raw) {
        if (!(raw > 0)) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * p >= raw) {
                return m * p;
            }
        }
        return 10 * p;
    }
}
