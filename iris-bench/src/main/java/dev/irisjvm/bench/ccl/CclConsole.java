package dev.irisjvm.bench.ccl;

import dev.irisjvm.bench.report.CclFigures;
import dev.irisjvm.bench.report.CclFigures.Figure;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.rma.SizeList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The sweep's results as a console table, one line per op, implementation and size: the slowest
 * rank's median µs, bus GB/s, and the speed ratio against NCCL in the same mode (the time of the
 * fastest of NCCL's ways ÷ this one's), or why there is no figure; back to back first, then one
 * call from Java.
 *
 * <pre>{@code
 * System.out.print(CclConsole.format(measurements, 2));
 * }</pre>
 */
public final class CclConsole {
    private CclConsole() {}

    public static String format(List<Measurement> measurements, int world) {
        CclFigures f = new CclFigures(measurements, world);
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-15s %-28s %10s %12s %12s %9s%n", "op", "impl", "size", "us", "bus GB/s", "vs NCCL"));
        for (String op : f.ops()) {
            for (String impl : Stream.concat(f.impls(op).stream(), f.oneCallImpls(op).stream()).toList()) {
                for (long bytes : f.sizes(op)) {
                    Optional<Figure> fig = f.figure(op, impl, bytes);
                    if (fig.isPresent()) {
                        Optional<Figure> nccl = f.baseline(op, CclFigures.isGraph(impl), CclFigures.isOneCall(impl), bytes).map(CclFigures.Baseline::figure);
                        String ratio = nccl.isPresent() && !CclFigures.isNccl(impl)
                                ? String.format(Locale.ROOT, "%.2fx", nccl.get().us() / fig.get().us()) : "";
                        b.append(String.format(Locale.ROOT, "%-15s %-28s %10s %12.2f %12.1f %9s%n", op, impl, SizeList.format(bytes),
                                fig.get().us(), fig.get().busGbps(), ratio));
                    } else if (f.failed(op, impl, bytes)) {
                        String why = measurements.stream().filter(m -> m.op().equals(op) && m.impl().equals(impl) && m.bytes() == bytes
                                && !"ok".equals(m.check())).map(Measurement::check).findFirst().orElse("no timing");
                        if (why.length() > 90) {
                            why = why.substring(0, 87) + "...";
                        }
                        b.append(String.format(Locale.ROOT, "%-15s %-28s %10s %12s  FAILED: %s%n", op, impl, SizeList.format(bytes), "", why));
                    }
                }
            }
        }
        return b.toString();
    }
}
