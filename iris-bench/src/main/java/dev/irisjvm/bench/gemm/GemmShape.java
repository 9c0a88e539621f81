package dev.irisjvm.bench.gemm;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One benchmarked problem: {@code C (M x N) = A B}, A and B in the given layouts. Written {@code
 * MxNxK:layouts} on the command line and in the results, the layouts as in the kernel names: {@code
 * nk} or {@code kn} for B with an M x K A, {@code km_nk} or {@code km_kn} with A stored K x M (a
 * weight gradient's {@code dY^T X}), e.g. {@code 8192x4608x36864:nk}, {@code 4096x4096x16384:km_kn}.
 *
 * <pre>{@code
 * GemmShape s = GemmShape.parse("8192x8192x4096:kn");
 * s.flops();             // 2 M N K = 5.5e11
 * GemmShape.parseList("4096x4096x4096:nk,1024x8192x8192:nk,8192x8192x8192:km_kn");
 * }</pre>
 */
public record GemmShape(int m, int n, int k, GemmLayouts layouts) {
    /** The layout names {@link #parse} takes, as {@link GemmLayouts#kernelPart()} writes them. */
    static final String LAYOUT_NAMES = "nk|kn|km_nk|km_kn";

    public GemmShape {
        if (m < 1 || n < 1 || k < 1) {
            throw new IllegalArgumentException("shape " + m + "x" + n + "x" + k + ": M, N and K must be >= 1");
        }
        if (layouts == null) {
            throw new IllegalArgumentException("shape " + m + "x" + n + "x" + k + ": layouts must not be null");
        }
    }

    /** An M x K A and B in {@code layout}. */
    public GemmShape(int m, int n, int k, GemmLayout layout) {
        this(m, n, k, layout == null ? null : new GemmLayouts(GemmALayout.MK, layout));
    }

    /** {@code MxNxK} or {@code MxNxK:nk|kn|km_nk|km_kn} (nk when the layouts are left out). */
    public static GemmShape parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        GemmLayouts layouts = GemmLayouts.MK_NK;
        int colon = t.indexOf(':');
        if (colon >= 0) {
            String l = t.substring(colon + 1).trim();
            layouts = switch (l) {
                case "nk" -> GemmLayouts.MK_NK;
                case "kn" -> GemmLayouts.MK_KN;
                case "km_nk" -> GemmLayouts.KM_NK;
                case "km_kn" -> GemmLayouts.KM_KN;
                default -> throw new IllegalArgumentException("shape '" + text + "': layout '" + l + "' is not one of " + LAYOUT_NAMES);
            };
            t = t.substring(0, colon).trim();
        }
        String[] parts = t.split("x");
        if (parts.length != 3) {
            throw new IllegalArgumentException("shape '" + text + "' is not MxNxK[:" + LAYOUT_NAMES + "], e.g. 8192x8192x4096:nk");
        }
        try {
            return new GemmShape(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()),
                    Integer.parseInt(parts[2].trim()), layouts);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("shape '" + text + "' is not MxNxK[:" + LAYOUT_NAMES
                    + "] with whole numbers, e.g. 8192x8192x4096:nk");
        }
    }

    /** Comma-separated shapes, in the order given, duplicates dropped. */
    public static List<GemmShape> parseList(String text) {
        List<GemmShape> out = new ArrayList<>();
        for (String part : OptionChecks.items(text)) {
            GemmShape s = parse(part);
            if (!out.contains(s)) {
                out.add(s);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--shapes needs at least one MxNxK[:" + LAYOUT_NAMES + "]");
        }
        return out;
    }

    /** 2 M N K. */
    public double flops() {
        return 2.0 * m * n * k;
    }

    /** B's layout. */
    public GemmLayout layout() {
        return layouts.b();
    }

    /** A's rows x columns for its layout. */
    public long aRows() {
        return layouts.a().aRows(m, k);
    }

    public long aCols() {
        return layouts.a().aCols(m, k);
    }

    /** B's rows x columns for the layout. */
    public long bRows() {
        return layouts.b().bRows(n, k);
    }

    public long bCols() {
        return layouts.b().bCols(n, k);
    }

    /** Bytes of A and B together, for 16-bit inputs. */
    public long inputBytes(int elementBytes) {
        return ((long) m * k + (long) n * k) * elementBytes;
    }

    /** "8192x4608x36864:nk", "4096x4096x16384:km_kn": how it is written on the command line and in the results. */
    public String id() {
        return m + "x" + n + "x" + k + ":" + layouts.kernelPart();
    }

    /** "8192 × 4608 × 36864": for tables. */
    public String label() {
        return m + " × " + n + " × " + k;
    }

    @Override
    public String toString() {
        return id();
    }
}
