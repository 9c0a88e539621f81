package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} and its charts into a folder from one sweep and the JMH results of
 * the same run. The raw files it links to must already be in that folder ({@link Report}
 * copies them there).
 *
 * <pre>{@code
 * List<String> chartErrors = new RmaDocument(sweep, context).write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class RmaDocument extends SweepDocument {
    public static final String MARKDOWN = "rma.md";

    public RmaDocument(SweepResult sweep, Context context) {
        super(ReportKind.RMA, sweep, context);
    }

    @Override
    String markdown(Charts charts) {
        SweepIndex index = new SweepIndex(sweep.measurements() == null ? List.of() : sweep.measurements());
        BenchmarkTargets.Rma target = context.targets().rma();
        SizeTables sizes = new SizeTables(index, charts, target);
        return header(index)
                + Targets.section(Targets.evaluate(index, jmh, target), target)
                + findings
                + Floors.section(index, target)
                + sizes.bandwidthSection()
                + sizes.latencySection()
                + sizes.atomicsSection()
                + RankMatrix.section(index)
                + JmhTable.section(jmh, jmhProblems)
                + checks(index);
    }

    private String header(SweepIndex index) {
        return headerEnd(new ReportHeader("Iris RMA benchmarks", "Host-initiated one-sided tile operations "
                + "(`RemoteTile.loadRemote/storeRemote/atomicAdd`), device-side message passing and `Iris.barrier()`, against the "
                + "copy engine and NCCL measured in the same run.", sweep)
                .item("world size", sweep.worldSize() + " rank(s)" + (index.ranks().isEmpty() ? "" : ", ranks seen "
                        + index.ranks().stream().map(String::valueOf).collect(Collectors.joining(", "))))
                .item("measurements", String.valueOf(index.all().size()))
                .item("baseline", "bandwidth: the copy engine moving the same bytes between the same GPUs in this run "
                        + "(`copy_engine_pull` for loads, `copy_engine_push` for stores: what the link gives without SMs); NCCL's "
                        + "send/receive and all-reduce in this run beside them; message passing, launch and barrier: the absolute "
                        + "bounds of the targets (no library offers the same operation to time against)")
                .item("timing", "per point, untimed warm-up repetitions, then the timed ones queued behind a gate kernel, each "
                        + "between its own CUDA events; each issuer's median, the figures and targets over issuer and peer pairs; "
                        + "the Java-side costs (launch, barrier) in JMH, the slowest rank (commands below for the counts)"));
    }

    /** Lists every point whose data did not verify: a fast wrong answer is not a result. */
    private static String checks(SweepIndex index) {
        StringBuilder sb = new StringBuilder("## Data checks\n\n");
        List<Measurement> bad = index.all().stream().filter(m -> !"ok".equals(m.check())).collect(Collectors.toList());
        long unchecked = bad.stream().filter(m -> m.check() == null).count();
        if (bad.isEmpty()) {
            return sb.append("Every one of the ").append(index.all().size())
                    .append(" measurements verified its data after the timed runs (check = ok).\n\n").toString();
        }
        MarkdownTable t = new MarkdownTable("series", "size", "issuer", "peer", "check");
        bad.forEach(m -> t.row(new Series(m.op(), m.impl()).label(), Sizes.bytes(m.bytes()), m.issuer(),
                m.peer() < 0 ? "all" : String.valueOf(m.peer()), m.check() == null ? "(none recorded)" : m.check()));
        return sb.append(bad.size() - unchecked).append(" measurement(s) have no verified figure: their check failed or "
                        + "the point could not run (marked")
                .append(RankMatrix.BAD_CHECK).append(" in the matrices and left out of every median and target)")
                .append(unchecked > 0 ? "; " + unchecked + " recorded no check (counted, but unverified)" : "")
                .append(".\n\n").append(t.render()).append('\n').toString();
    }
}
