package dev.irisjvm.bench.gemm;

import dev.irisjvm.kernels.gemm.GemmLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One benchmarked problem: {@code C (M x N) = A (M x K) B}, B in the given layout. Written
 * {@code MxNxK:layout} on the command line and in the results, e.g. {@code 8192x4608x36864:nk}.
 *
 * <pre>{@code
 * GemmShape s = GemmShape.parse("8192x8192x4096:kn");
 * s.flops();             // 2 M N K = 5.5e11
 * GemmShape.parseList("4096x4096x4096:nk,1024x8192x8192:nk");
 * }</pre>
 */
public record GemmShape(int m, int n, int k, GemmLayout layout) {
    public GemmShape {
        if (m < 1 || n < 1 || k < 1) {
            throw new IllegalArgumentException("shape " + m + "x" + n + "x" + k + ": M, N and K must be >= 1");
        }
        if (layout == null) {
            throw new IllegalArgumentException("shape " + m + "x" + n + "x" + k + ": layout must not be null");
        }
    }

    /** {@code MxNxK} or {@code MxNxK:nk|kn} (NK when the layout is left out). */
    public static GemmShape parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        GemmLayout layout = GemmLayout.NK;
        int colon = t.indexOf(':');
        if (colon >= 0) {
            String l = t.substring(colon + 1).trim();
            layout = switch (l) {
                case "nk" -> GemmLayout.NK;
                case "kn" -> GemmLayout.KN;
                default -> throw new IllegalArgumentException("shape '" + text + "': layout '" + l + "' is not nk or kn");
            };
            t = t.substring(0, colon).trim();
        }
        String[] parts = t.split("x");
        if (parts.length != 3) {
            throw new IllegalArgumentException("shape '" + text + "' is not MxNxK[:nk|kn], e.g. 8192x8192x4096:nk");
        }
        try {
            return new GemmShape(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()),
                    Integer.parseInt(parts[2].trim()), layout);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("shape '" + text + "' is not MxNxK[:nk|kn] with whole numbers, e.g. 8192x8192x4096:nk");
        }
    }

    /** Comma-separated shapes, in the order given, duplicates dropped. */
    public static List<GemmShape> parseList(String text) {
        List<GemmShape> out = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                GemmShape s = parse(part);
                if (!out.contains(s)) {
                    out.add(s);
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--shapes needs at least one MxNxK[:nk|kn]");
        }
        return out;
    }

    /** 2 M N K. */
    public double flops() {
        return 2.0 * m * n * k;
    }

    /** B's rows x columns for the layout. */
    public long bRows() {
        return layout.bRows(n, k);
    }

    public long bCols() {
        return layout.bCols(n, k);
    }

    /** Bytes of A and B together, for 16-bit inputs. */
    public long inputBytes(int elementBytes) {
        return ((long) m * k + (long) n * k) * elementBytes;
    }

    /** "8192x4608x36864:nk": how it is written on the command line and in the results. */
    public String id() {
        return m + "x" + n + "x" + k + ":" + layout.kernelSuffix();
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
