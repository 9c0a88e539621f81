package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Turns one RMA sweep (and the JMH files of the same run) into {@code rma.md} plus PNG charts,
 * with the raw JSON copied next to them. {@code bin/bench-rma} runs it last.
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.RmaReport \
 *     --sweep /tmp/run/rma-sweep.json --jmh /tmp/run/jmh-rank0.json /tmp/run/jmh-rank1.json \
 *     --jmh-command "bin/iris-run -n 2 -- ..." --findings docs/benchmarks/rma-findings.md --out docs/benchmarks
 * </pre>
 */
@Command(name = "rma-report", mixinStandardHelpOptions = true,
        description = "Writes rma.md and PNG charts from an RMA sweep (and JMH) JSON.")
public final class RmaReport extends ReportCommand {
    public static final String SWEEP_FILE = "rma-sweep.json";

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    public static CommandLine command() {
        return commandFor(new RmaReport());
    }

    @Override
    protected String prefix() {
        return "rma";
    }

    @Override
    protected String markdown() {
        return RmaDocument.MARKDOWN;
    }

    @Override
    protected SweepDocument document(SweepResult result, List<JmhResult> jmhResults, List<String> jmhProblems, List<String> raw,
                                     List<String> commands) {
        return new RmaDocument(result, jmhResults, jmhProblems, raw, runCommand, commands);
    }
}
