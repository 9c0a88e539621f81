package dev.irisjvm.bench.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A GitHub-flavoured Markdown table. A column whose cells are all numbers (or "—") is
 * right-aligned so that digits line up; text columns stay left-aligned.
 *
 * <pre>{@code
 * String md = new MarkdownTable("size", "GB/s")
 *         .row("4 KiB", "1.2")
 *         .row("1 GiB", "370")
 *         .render();
 * // | size | GB/s |
 * // | :--- | ---: |
 * // | 4 KiB | 1.2 |
 * // | 1 GiB | 370 |
 * }</pre>
 */
public final class MarkdownTable {
    private static final Pattern NUMBER = Pattern.compile("(± )?[-+]?\\d");

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();
    private final Set<Integer> leftOut = new HashSet<>();

    public MarkdownTable(String... header) {
        this(Arrays.asList(header));
    }

    public MarkdownTable(List<String> header) {
        if (header.isEmpty()) {
            throw new IllegalArgumentException("a table needs at least one column");
        }
        this.header = List.copyOf(header);
    }

    /**
     * Leaves the named columns out of the rendered table where {@code leaveOut} holds, so that a
     * table whose ratios a run cannot have (its ranks shared GPUs) is still filled row by row the same way.
     */
    public MarkdownTable without(boolean leaveOut, String... columns) {
        if (leaveOut) {
            for (String c : columns) {
                if (!header.contains(c)) {
                    throw new IllegalArgumentException("no column " + c + " in " + header);
                }
                leftOut.add(header.indexOf(c));
            }
        }
        return this;
    }

    /** Adds a row; {@code null} cells print as an em dash. */
    public MarkdownTable row(Object... cells) {
        return row(Arrays.asList(cells));
    }

    public MarkdownTable row(List<?> cells) {
        if (cells.size() != header.size()) {
            throw new IllegalArgumentException("row has " + cells.size() + " cells, the table " + header.size()
                    + " columns: " + cells);
        }
        List<String> row = new ArrayList<>();
        for (Object c : cells) {
            row.add(c == null ? "—" : c.toString());
        }
        rows.add(row);
        return this;
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    /** The table, or a line saying that there is nothing to show. */
    public String renderOrNone() {
        return isEmpty() ? "No measurements.\n" : render();
    }

    public String render() {
        StringBuilder sb = new StringBuilder();
        line(sb, header);
        sb.append('|');
        for (int i = 0; i < header.size(); i++) {
            if (!leftOut.contains(i)) {
                sb.append(numeric(i) ? " ---: |" : " :--- |");
            }
        }
        sb.append('\n');
        rows.forEach(r -> line(sb, r));
        return sb.toString();
    }

    /** True when every cell of column {@code i} starts with a number and at least one is not a dash. */
    private boolean numeric(int i) {
        boolean any = false;
        for (List<String> r : rows) {
            String c = r.get(i).trim();
            if (c.equals("—")) {
                continue;
            }
            if (!NUMBER.matcher(c).lookingAt()) {
                return false;
            }
            any = true;
        }
        return any;
    }

    private void line(StringBuilder sb, List<String> cells) {
        sb.append('|');
        for (int i = 0; i < cells.size(); i++) {
            if (leftOut.contains(i)) {
                continue;
            }
            String c = cells.get(i);
            // A bare '|' would split the cell, a newline would end the table.
            sb.append(' ').append(c.replace("|", "\\|").replace("\n", " ")).append(" |");
        }
        sb.append('\n');
    }
}
