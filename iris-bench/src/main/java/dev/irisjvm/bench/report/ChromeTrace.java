package dev.irisjvm.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;

/**
 * A Chrome / Perfetto trace of a fused kernel (dev.irisjvm.kernels.fused.TileTrace) as the reports
 * read it: its "X" events, the track names and the operation's description. Kept apart from
 * {@link TraceTimeline}, which draws it, so that a report on a Java runtime without java.desktop
 * (the GPU host's) still reads and stores its traces and writes its tables.
 *
 * <pre>{@code
 * ChromeTrace t = ChromeTrace.read(Path.of("fused-trace-all_reduce-spare_warps.json.gz"));
 * double spanUs = t.end();
 * }</pre>
 */
record ChromeTrace(List<Bar> bars, Map<Integer, String> processes, Map<Integer, Map<Integer, String>> threads,
                   String description) {

    /** One "X" event of the trace. */
    record Bar(int pid, int tid, double ts, double dur, String name, String cat) {}

    /** The last event's end, in the trace's µs. */
    double end() {
        return bars.stream().mapToDouble(b -> b.ts() + b.dur()).max().orElse(0);
    }

    /** The name a report keeps a trace under: gzipped (Perfetto opens it as it is), a tenth of the JSON's size. */
    static String storedName(String traceFile) {
        return traceFile.endsWith(".gz") ? traceFile : traceFile + ".gz";
    }

    /** Reads a Chrome trace, plain or gzipped ({@code .gz}). */
    static ChromeTrace read(Path file) throws IOException {
        JsonNode root;
        try (InputStream in = file.toString().endsWith(".gz") ? new GZIPInputStream(Files.newInputStream(file))
                : Files.newInputStream(file)) {
            root = new ObjectMapper().readTree(in);
        }
        List<Bar> bars = new ArrayList<>();
        Map<Integer, String> processes = new TreeMap<>();
        Map<Integer, Map<Integer, String>> threads = new TreeMap<>();
        for (JsonNode e : root.path("traceEvents")) {
            String ph = e.path("ph").asText();
            int pid = e.path("pid").asInt();
            if (ph.equals("M")) {
                String name = e.path("args").path("name").asText(null);
                if (name == null) {
                    continue;
                }
                if (e.path("name").asText().equals("process_name")) {
                    processes.put(pid, name);
                } else if (e.path("name").asText().equals("thread_name")) {
                    threads.computeIfAbsent(pid, p -> new TreeMap<>()).put(e.path("tid").asInt(), name);
                }
            } else if (ph.equals("X")) {
                int tid = e.path("tid").asInt();
                bars.add(new Bar(pid, tid, e.path("ts").asDouble(), e.path("dur").asDouble(), e.path("name").asText(), e.path("cat").asText()));
                processes.putIfAbsent(pid, "pid " + pid);
                threads.computeIfAbsent(pid, p -> new TreeMap<>()).putIfAbsent(tid, "tid " + tid);
            }
        }
        JsonNode other = root.path("otherData");
        String description = other.isMissingNode() ? "" : String.format(Locale.ROOT, "%s (%s), per rank M %s x N %s x K %s, %s ranks",
                other.path("operation").asText("?"), other.path("variant").asText("?"), other.path("M").asText("?"),
                other.path("N").asText("?"), other.path("K").asText("?"), other.path("world").asText("?"));
        return new ChromeTrace(bars, processes, threads, description);
    }
}
