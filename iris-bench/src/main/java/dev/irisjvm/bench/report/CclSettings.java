package dev.irisjvm.bench.report;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ccl.CclOptions;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.Collectives;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The settings of a collectives sweep that the report needs, read back from the command the sweep
 * recorded (CclSweep spells out every option). Options the command does not name keep CclSweep's
 * defaults.
 *
 * <pre>{@code
 * CclSettings s = CclSettings.fromCommand("bin/iris-run -n 2 -- java ... CclSweep --dtype f32 --graph-calls 10");
 * s.dtype();        // "f32"
 * s.graphCalls();   // 10
 * }</pre>
 *
 * @param dtype        bf16, f16 or f32
 * @param reduceOp     sum, max, min or avg
 * @param stagingBytes Collectives staging bytes (decides ONE_SHOT's capacity and AUTO's choice)
 * @param copyEngineBytes Collectives.Options.copyEngineBytes (decides AUTO's choice of COPY_ENGINE);
 *                     (NEVER for "never" and for sweeps from before --copy-engine-bytes)
 * @param eagerCalls   calls launched back to back per timed eager repetition; 1 for sweeps from
 *                     before --eager-calls, which timed one call per repetition
 * @param graphCalls   calls captured per graph
 * @param oneCallMaxBytes sizes up to which each implementation was also timed as one call from
 *                     Java ({@code --one-call-max-bytes}); 0 for sweeps from before that option
 * @param nccl         false when the sweep ran with --no-nccl
 */
public record CclSettings(String dtype, String reduceOp, long stagingBytes, long copyEngineBytes, int eagerCalls, int graphCalls,
                          long oneCallMaxBytes, boolean nccl) {
    public static final long DEFAULT_STAGING_BYTES = 16L << 20;

    public static CclSettings defaults() {
        return new CclSettings("bf16", "sum", DEFAULT_STAGING_BYTES, Collectives.Options.NEVER, 1, 10, 0, true);
    }

    public static CclSettings fromCommand(String command) {
        CclSettings s = defaults();
        if (command == null) {
            return s;
        }
        List<String> words = words(command);
        String dtype = s.dtype;
        String op = s.reduceOp;
        long staging = s.stagingBytes;
        long copyEngine = s.copyEngineBytes;
        int eager = s.eagerCalls;
        int calls = s.graphCalls;
        long oneCall = s.oneCallMaxBytes;
        boolean nccl = true;
        for (int i = 0; i < words.size(); i++) {
            String w = words.get(i);
            String value = i + 1 < words.size() ? words.get(i + 1) : null;
            String inline = w.contains("=") ? w.substring(w.indexOf('=') + 1) : null;
            String name = w.contains("=") ? w.substring(0, w.indexOf('=')) : w;
            String v = inline != null ? inline : value;
            try {
                switch (name) {
                    case "--dtype" -> dtype = canonicalType(v);
                    case "--reduce-op" -> op = v.toLowerCase(Locale.ROOT);
                    case "--staging-bytes" -> staging = SizeList.parse(v);
                    case "--copy-engine-bytes" -> copyEngine = new CclOptions.CopyEngineBytesConverter().convert(v);
                    case "--eager-calls" -> eager = Integer.parseInt(v.trim());
                    case "--graph-calls" -> calls = Integer.parseInt(v.trim());
                    case "--one-call-max-bytes" -> oneCall = SizeList.parse(v);
                    case "--no-nccl" -> nccl = false;
                    default -> { }
                }
            } catch (RuntimeException e) {
                // a malformed value keeps the default: the report says what it assumed
            }
        }
        return new CclSettings(dtype, op, staging, copyEngine, eager, calls, oneCall, nccl);
    }

    private static String canonicalType(String v) {
        DType t = OptionChecks.dtype(v);
        return t != null ? OptionChecks.dtypeName(t) : v.trim().toLowerCase(Locale.ROOT);
    }

    /** Shell-like words: single and double quotes group, backslash escapes outside single quotes. */
    static List<String> words(String command) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean any = false;
        char quote = 0;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (quote == '\'') {
                if (c == '\'') {
                    quote = 0;
                } else {
                    cur.append(c);
                }
            } else if (quote == '"') {
                if (c == '"') {
                    quote = 0;
                } else if (c == '\\' && i + 1 < command.length()) {
                    cur.append(command.charAt(++i));
                } else {
                    cur.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                any = true;
            } else if (c == '\\' && i + 1 < command.length()) {
                cur.append(command.charAt(++i));
                any = true;
            } else if (Character.isWhitespace(c)) {
                if (any || cur.length() > 0) {
                    out.add(cur.toString());
                    cur.setLength(0);
                    any = false;
                }
            } else {
                cur.append(c);
            }
        }
        if (any || cur.length() > 0) {
            out.add(cur.toString());
        }
        return out;
    }
}
