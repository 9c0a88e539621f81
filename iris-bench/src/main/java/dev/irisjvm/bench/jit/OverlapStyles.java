package dev.irisjvm.bench.jit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The device lines each overlap style adds to the plain GEMM, counted from the markers in the
 * example sources ({@code 08_gemm_all_scatter.cu}, {@code 10_overlap_styles.cu}), which are
 * comments on lines of their own:
 * <ul>
 *   <li>{@code // style: NAME} ... {@code // end style}: code that only style NAME needs (a style may
 *       have several such sections in its file);</li>
 *   <li>{@code // shared: NAME} ... {@code // end shared}: code that defines NAME for the styles that
 *       use it;</li>
 *   <li>code outside both: the plain GEMM, which every style has and none adds.</li>
 * </ul>
 * The rule ({@link #RULE}): a style adds the code lines ({@link DeviceCode}: neither blank nor
 * comment only) of its own sections, plus those of every shared section of its file that it
 * reaches, that is whose NAME its code, or the code of a shared section it reaches, names as a whole
 * word. A style's kernels count whole, also where they stand in for the plain GEMM's kernel.
 *
 * <pre>{@code
 * OverlapStyles styles = OverlapStyles.of(ExampleSource.allOnClassPath());
 * for (OverlapStyles.Style s : styles.styles()) System.out.println(s.name() + ": " + s.lines());
 * }</pre>
 */
public final class OverlapStyles {
    /** The counting rule, as the report states it. */
    public static final String RULE = "non-blank, non-comment lines (preprocessor lines count) of the style's own `// style:` "
            + "sections, plus those of each `// shared: NAME` section of the same file that the style reaches (its code, or the "
            + "code of a shared section it reaches, names NAME); the code outside these markers is the plain GEMM and counts for "
            + "no style. A style's own kernels count whole, also those that stand in for the plain `gemm` kernel.";

    private static final Pattern OPEN = Pattern.compile("^\\s*//\\s*(style|shared):\\s*(\\w+)\\s*$");
    private static final Pattern CLOSE = Pattern.compile("^\\s*//\\s*end\\s+(style|shared)\\s*$");

    /**
     * One style's count.
     *
     * @param name      as its marker names it, e.g. {@code producer_consumer}
     * @param source    the file it is in
     * @param kernels   the {@code extern "C"} kernels of its own sections
     * @param shared    the shared sections it reaches, in file order
     * @param ownLines  code lines of its own sections
     * @param lines     code lines it adds: its own and its shared sections'
     */
    public record Style(String name, String source, List<String> kernels, List<String> shared, int ownLines, int lines) {}

    /**
     * The plain GEMM of a file with markers: its code lines outside every section.
     *
     * @param source the file
     * @param lines  code lines outside the markers
     */
    public record Plain(String source, int lines) {}

    private final List<Style> styles;
    private final List<Plain> plain;

    private OverlapStyles(List<Style> styles, List<Plain> plain) {
        this.styles = List.copyOf(styles);
        this.plain = List.copyOf(plain);
    }

    /** Counts the styles of every source that has markers; throws IllegalArgumentException naming the file and line of a bad marker. */
    public static OverlapStyles of(List<ExampleSource> sources) {
        List<Style> styles = new ArrayList<>();
        List<Plain> plain = new ArrayList<>();
        for (ExampleSource source : sources) {
            Sections s = Sections.of(source);
            if (s.styles.isEmpty() && s.shared.isEmpty()) {
                continue;
            }
            for (String name : s.styles.keySet()) {
                if (styles.stream().anyMatch(st -> st.name().equals(name))) {
                    throw new IllegalArgumentException(source.name() + ": style " + name + " is marked in another file too");
                }
            }
            styles.addAll(s.count());
            plain.add(new Plain(source.name(), s.plainLines));
        }
        return new OverlapStyles(styles, plain);
    }

    /** The styles in file order, and in each file in the order their first section appears. */
    public List<Style> styles() {
        return styles;
    }

    /** The plain GEMM's lines of each file with markers. */
    public List<Plain> plain() {
        return plain;
    }

    /** One file's sections: each style's and each shared name's code lines, and the unmarked ones. */
    private static final class Sections {
        final String file;
        final Map<String, List<String>> styles = new LinkedHashMap<>();
        final Map<String, List<String>> shared = new LinkedHashMap<>();
        int plainLines;

        private Sections(String file) {
            this.file = file;
        }

        static Sections of(ExampleSource source) {
            Sections s = new Sections(source.name());
            String[] raw = source.text().split("\n", -1);
            List<String> code = DeviceCode.of(source.text()).lines();
            String kind = null;
            String name = null;
            int openedAt = 0;
            for (int i = 0; i < code.size(); i++) {
                Matcher open = OPEN.matcher(raw[i]);
                Matcher close = CLOSE.matcher(raw[i]);
                if (open.matches()) {
                    if (kind != null) {
                        throw s.bad(i, "`" + raw[i].strip() + "` inside the " + kind + " section opened on line " + openedAt);
                    }
                    kind = open.group(1);
                    name = open.group(2);
                    openedAt = i + 1;
                    (kind.equals("style") ? s.styles : s.shared).computeIfAbsent(name, k -> new ArrayList<>());
                } else if (close.matches()) {
                    if (kind == null || !kind.equals(close.group(1))) {
                        throw s.bad(i, "`" + raw[i].strip() + "` closes no " + close.group(1) + " section");
                    }
                    kind = null;
                } else if (DeviceCode.isCode(code.get(i))) {
                    if (kind == null) {
                        s.plainLines++;
                    } else {
                        (kind.equals("style") ? s.styles : s.shared).get(name).add(code.get(i));
                    }
                }
            }
            if (kind != null) {
                throw s.bad(openedAt - 1, "the " + kind + " section " + name + " is never closed (// end " + kind + ")");
            }
            s.shared.forEach((n, lines) -> {
                if (!names(lines, n)) {
                    throw new IllegalArgumentException(s.file + ": the shared section " + n + " does not define " + n);
                }
            });
            return s;
        }

        List<Style> count() {
            List<Style> out = new ArrayList<>();
            List<String> usedByAny = new ArrayList<>();
            for (Map.Entry<String, List<String>> style : styles.entrySet()) {
                List<String> reached = reach(style.getValue());
                usedByAny.addAll(reached);
                int lines = style.getValue().size() + reached.stream().mapToInt(n -> shared.get(n).size()).sum();
                out.add(new Style(style.getKey(), file, ExampleSource.kernelsIn(String.join("\n", style.getValue())), reached,
                        style.getValue().size(), lines));
            }
            for (String n : shared.keySet()) {
                if (!usedByAny.contains(n)) {
                    throw new IllegalArgumentException(file + ": the shared section " + n + " is used by no style (code of the plain "
                            + "GEMM stays unmarked)");
                }
            }
            return out;
        }

        /** The shared sections that {@code code} reaches, in file order. */
        private List<String> reach(List<String> code) {
            List<String> text = new ArrayList<>(code);
            List<String> reached = new ArrayList<>();
            boolean grew = true;
            while (grew) {
                grew = false;
                for (Map.Entry<String, List<String>> part : shared.entrySet()) {
                    if (!reached.contains(part.getKey()) && names(text, part.getKey())) {
                        reached.add(part.getKey());
                        text.addAll(part.getValue());
                        grew = true;
                    }
                }
            }
            return shared.keySet().stream().filter(reached::contains).toList();
        }

        private static boolean names(List<String> code, String name) {
            Pattern word = Pattern.compile("\\b" + Pattern.quote(name) + "\\b");
            return code.stream().anyMatch(l -> word.matcher(l).find());
        }

        private IllegalArgumentException bad(int line, String what) {
            return new IllegalArgumentException(file + ":" + (line + 1) + ": " + what);
        }
    }
}
