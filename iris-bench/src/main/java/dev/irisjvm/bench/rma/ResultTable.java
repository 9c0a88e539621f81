package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.results.Measurement;
import java.util.List;
import java.util.Locale;

/**
 * The sweep's results as a compact console table: op, impl, size, issuer -> peer, median µs and
 * the rate (GB/s, or G ops/s for atomics), and the check when it is not ok.
 *
 * <pre>{@code
 * System.out.print(ResultTable.format(measurements));
 * }</pre>
 */
public final class ResultTable {
    private ResultTable() {}

    public static String format(List<Measurement> measurements) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-18s %-12s %10s %7s %12s %12s  %s%n", "op", "impl", "size", "pair",
                "median us", "rate", "check"));
        for (Measurement m : measurements) {
            String pair = m.peer() < 0 ? m.issuer() + "->*" : m.issuer() + "->" + m.peer();
            String rate;
            if (m.gops() > 0) {
                rate = String.format(Locale.ROOT, "%.2f Gop/s", m.gops());
            } else if (m.gbps() > 0) {
                rate = String.format(Locale.ROOT, "%.1f GB/s", m.gbps());
            } else {
                rate = "-";
            }
            String check = Verifier.OK.equals(m.check()) ? "" : m.check();
            if (check.length() > 100) {
                check = check.substring(0, 97) + "...";
            }
            b.append(String.format(Locale.ROOT, "%-18s %-12s %10s %7s %12.2f %12s  %s%n", m.op(), m.impl(),
                    SizeList.format(m.bytes()), pair, m.medianUs(), rate, check));
        }
        return b.toString();
    }
}
