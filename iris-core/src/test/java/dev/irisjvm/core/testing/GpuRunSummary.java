package dev.irisjvm.core.testing;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.launch.GpuPlacement;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The machine-readable record of one GPU test run: which commit ran, on what, at which world size,
 * and what passed, failed and was skipped (with each failure's message and each skip's reason).
 * Read from the JUnit XML reports the console launcher writes ({@code --reports-dir}).
 *
 * <pre>
 * java -cp 'lib/*' dev.irisjvm.core.testing.GpuRunSummary REPORTS_DIR COMMIT SELECTION OUT.json [RESIDUE.properties]
 * java -cp 'lib/*' dev.irisjvm.core.testing.GpuRunSummary --merge OUT.json PART.json...
 * </pre>
 *
 * <p>{@code --merge} joins the summaries of runs of one commit at one world size on one machine
 * that together ran a selection too long for one sitting (a suite in parts): the counts add up,
 * the failures and skips are kept, and the selection lists the parts by file name. Parts of other
 * commits, worlds or GPUs are refused.
 *
 * <p>{@code RESIDUE.properties}, written by {@code run-gpu-tests}, is what the run left on the machine
 * ({@link RunResidue}); it goes into the summary as {@code residue}.
 *
 * <p>The world size is the one the tests ran with ({@link GpuTestSupport#worldSize()}, from
 * {@code IRIS_TEST_WORLD}); ranks per GPU follow the launcher's round-robin placement.
 */
public final class GpuRunSummary {

    /** One test that did not pass: its JUnit name and why. */
    public record Problem(String test, String message) {}

    /** The summary as it is written. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Summary(String commit, String date, String gpuModel, int gpuCount, int worldSize, int ranksPerGpu,
                          int nodes, String selection, int passed, int failed, int skipped, List<Problem> failures,
                          List<Problem> skips, RunResidue residue) {}

    /** Counts of one set of reports. */
    record Counts(int passed, List<Problem> failures, List<Problem> skips) {}

    private GpuRunSummary() {}

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("--merge")) {
            List<Path> parts = new ArrayList<>();
            for (int i = 2; i < args.length; i++) {
                parts.add(Path.of(args[i]));
            }
            write(merge(parts), Path.of(args[1]));
            return;
        }
        if (args.length != 4 && args.length != 5) {
            System.err.println("usage: GpuRunSummary REPORTS_DIR COMMIT SELECTION OUT.json [RESIDUE.properties]");
            System.exit(2);
        }
        Counts counts = read(Path.of(args[0]));
        RunResidue residue = args.length == 5 ? RunResidue.read(Path.of(args[4])) : null;
        Gpu.GpuProbe probe = GpuTestSupport.probe();
        int gpus = probe.deviceCount();
        String model = gpus > 0 ? Gpu.properties(0).name() : "none (" + probe.reason() + ")";
        int world = GpuTestSupport.worldSize();
        write(summarize(counts, args[1], Instant.now(), model, gpus, world, args[2], residue), Path.of(args[3]));
    }

    private static void write(Summary summary, Path out) throws IOException {
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.toFile(), summary);
        RunResidue r = summary.residue();
        String left = r == null ? "" : String.format("; %d process(es) left behind, GPU memory used %s -> %s MiB",
                r.leftoverProcesses(), r.gpuMemoryUsedMiBBefore(), r.gpuMemoryUsedMiBAfter());
        System.out.printf("GPU run summary: %d passed, %d failed, %d skipped; world %d, %d rank(s) per GPU on %d x %s%s -> %s%n",
                summary.passed(), summary.failed(), summary.skipped(), summary.worldSize(), summary.ranksPerGpu(),
                summary.gpuCount(), summary.gpuModel(), left, out);
    }

    /** The parts as one summary, dated by the last of them; throws unless they share commit, world and machine. */
    static Summary merge(List<Path> parts) throws IOException {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("--merge needs at least one part");
        }
        ObjectMapper json = new ObjectMapper();
        List<Summary> read = new ArrayList<>();
        for (Path p : parts) {
            read.add(json.readValue(p.toFile(), Summary.class));
        }
        Summary first = read.get(0);
        int passed = 0;
        List<Problem> failures = new ArrayList<>();
        List<Problem> skips = new ArrayList<>();
        List<String> names = new ArrayList<>();
        String last = first.date();
        RunResidue firstResidue = null;
        RunResidue lastResidue = null;
        int leftover = 0;
        for (int i = 0; i < read.size(); i++) {
            Summary s = read.get(i);
            String part = parts.get(i).getFileName().toString();
            if (!s.commit().equals(first.commit()) || s.worldSize() != first.worldSize() || s.gpuCount() != first.gpuCount()
                    || !s.gpuModel().equals(first.gpuModel()) || s.nodes() != first.nodes()) {
                throw new IllegalArgumentException(part + " ran commit " + s.commit() + " at world " + s.worldSize() + " on "
                        + s.gpuCount() + " x " + s.gpuModel() + "; " + parts.get(0).getFileName() + " ran " + first.commit()
                        + " at world " + first.worldSize() + " on " + first.gpuCount() + " x " + first.gpuModel()
                        + ": only parts of one run may be merged");
            }
            passed += s.passed();
            failures.addAll(s.failures() == null ? List.of() : s.failures());
            skips.addAll(s.skips() == null ? List.of() : s.skips());
            names.add(part);
            if (s.residue() != null) {
                firstResidue = firstResidue == null ? s.residue() : firstResidue;
                lastResidue = s.residue();
                leftover += s.residue().leftoverProcesses();
            }
            last = s.date().compareTo(last) > 0 ? s.date() : last;
        }
        return new Summary(first.commit(), last, first.gpuModel(), first.gpuCount(), first.worldSize(), first.ranksPerGpu(),
                first.nodes(), "merged: " + String.join(", ", names), passed, failures.size(), skips.size(), failures, skips,
                firstResidue == null ? null : RunResidue.merge(firstResidue, lastResidue, leftover));
    }

    static Summary summarize(Counts counts, String commit, Instant when, String model, int gpus, int world, String selection,
                             RunResidue residue) {
        // As the launcher placed the ranks; with no GPU counted, all of them on one.
        int ranksPerGpu = gpus > 0 ? GpuPlacement.plan(world, gpus, 0).ranksPerGpu() : world;
        return new Summary(commit, when.truncatedTo(ChronoUnit.SECONDS).toString(), model, gpus, world, ranksPerGpu, 1,
                selection, counts.passed(), counts.failures().size(), counts.skips().size(), counts.failures(), counts.skips(),
                residue);
    }

    /** Every {@code testcase} of every {@code TEST-*.xml} under {@code dir}. */
    static Counts read(Path dir) throws Exception {
        List<Path> reports;
        try (Stream<Path> files = Files.walk(dir)) {
            reports = files.filter(f -> f.getFileName().toString().matches("TEST-.*\\.xml")).sorted().toList();
        }
        if (reports.isEmpty()) {
            throw new IOException("no TEST-*.xml report under " + dir);
        }
        int passed = 0;
        List<Problem> failures = new ArrayList<>();
        List<Problem> skips = new ArrayList<>();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        for (Path report : reports) {
            Document doc = factory.newDocumentBuilder().parse(report.toFile());
            NodeList cases = doc.getElementsByTagName("testcase");
            for (int i = 0; i < cases.getLength(); i++) {
                Element c = (Element) cases.item(i);
                String name = c.getAttribute("classname") + " " + c.getAttribute("name");
                Element failure = first(c, "failure");
                if (failure == null) {
                    failure = first(c, "error");
                }
                Element skipped = first(c, "skipped");
                if (failure != null) {
                    failures.add(new Problem(name, firstLine(failure)));
                } else if (skipped != null) {
                    skips.add(new Problem(name, reason(skipped)));
                } else {
                    passed++;
                }
            }
        }
        return new Counts(passed, failures, skips);
    }

    private static Element first(Element parent, String tag) {
        NodeList list = parent.getElementsByTagName(tag);
        return list.getLength() == 0 ? null : (Element) list.item(0);
    }

    /** A skip's reason: its first line, without the exception's name (the console writes the trace). */
    private static String reason(Element skipped) {
        String text = firstLine(skipped).lines().findFirst().orElse("");
        return text.replaceFirst("^org\\.opentest4j\\.TestAbortedException: (Assumption failed: )?", "");
    }

    /** The message attribute, else the body's first lines: enough to tell failures apart. */
    private static String firstLine(Element e) {
        String message = e.getAttribute("message");
        if (message.isBlank()) {
            message = e.getTextContent();
        }
        String text = message.strip();
        return text.length() > 2000 ? text.substring(0, 2000) + " ..." : text;
    }
}
