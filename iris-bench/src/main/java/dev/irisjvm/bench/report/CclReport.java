package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Turns one collectives sweep ({@link dev.irisjvm.bench.ccl.CclSweep}) and the JMH files of the
 * same run into {@code collectives.md} plus PNG charts, with the raw JSON copied next to them.
 * {@code bin/bench-ccl} runs it last.
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.CclReport \
 *     --sweep /tmp/run/ccl-sweep.json --jmh /tmp/run/jmh-rank0.json /tmp/run/jmh-rank1.json --out docs/benchmarks
 * </pre>
 */
@Command(name = "ccl-report", mixinStandardHelpOptions = true,
        description = "Writes collectives.md and PNG charts from a collectives sweep (and JMH) JSON.")
public final class CclReport extends ReportCommand {
    public static final String SWEEP_FILE = "ccl-sweep.json";

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    public static CommandLine command() {
        return commandFor(new CclReport());
    }

    @Override
    protected String prefix() {
        return "ccl";
    }

    @Override
    protected String markdown() {
        return CclDocument.MARKDOWN;
    }

    @Override
    protected SweepDocument document(SweepResult result, List<JmhResult> jmhResults, List<String> jmhProblems, List<String> raw,
                                     List<String> commands) {
        return new CclDocument(result, jmhResults, jmhProblems, raw, runCommand, commands);
    }
}
