package dev.irisjvm.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads JMH result files ({@code -rf json}). Each rank of a run writes its own file, named
 * with its rank ({@code jmh-rank0.json}, ...), because every rank runs the same benchmarks and
 * JMH knows nothing of the others.
 *
 * <pre>{@code
 * List<JmhResult> r0 = JmhResults.read(Path.of("jmh-rank0.json"), JmhResults.rankOf(Path.of("jmh-rank0.json")));
 * }</pre>
 */
public final class JmhResults {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern RANK = Pattern.compile("rank[-_]?(\\d+)", Pattern.CASE_INSENSITIVE);

    private JmhResults() {}

    /** The rank a file name carries ({@code jmh-rank3.json} gives 3), or -1. */
    public static int rankOf(Path file) {
        Matcher m = RANK.matcher(file.getFileName().toString());
        int rank = -1;
        while (m.find()) {
            rank = Integer.parseInt(m.group(1));   // the last one: a folder-like prefix must not win
        }
        return rank;
    }

    public static List<JmhResult> read(Path file, int rank) throws IOException {
        JsonNode root = JSON.readTree(file.toFile());
        if (root == null || !root.isArray()) {
            throw new IOException(file + ": not a JMH result file (expected a JSON array of benchmark entries)");
        }
        List<JmhResult> out = new ArrayList<>();
        for (JsonNode entry : root) {
            JsonNode primary = entry.path("primaryMetric");
            Map<String, String> params = new LinkedHashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = entry.path("params").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> p = it.next();
                params.put(p.getKey(), p.getValue().asText());
            }
            out.add(new JmhResult(
                    rank,
                    entry.path("benchmark").asText(),
                    entry.path("mode").asText(),
                    params,
                    number(primary.path("score")),
                    number(primary.path("scoreError")),
                    primary.path("scoreUnit").asText(),
                    number(primary.path("scorePercentiles").path("50.0")),
                    entry.path("measurementIterations").asInt(0),
                    entry.path("measurementBatchSize").asInt(1)));
        }
        return out;
    }

    /** JMH writes NaN as the string "NaN"; a missing node is NaN as well. */
    private static double number(JsonNode node) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            return Double.NaN;
        }
        if (node.isNumber()) {
            return node.asDouble();
        }
        try {
            return Double.parseDouble(node.asText());
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }
}
