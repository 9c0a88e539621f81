package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Rank x rank tables of one series at one size: rows are the issuing rank (whose GPU runs the
 * operation), columns the peer whose memory it reaches; a collective (peer -1) gets a single
 * "all" column. A cell shows the verified figure; one with a point that failed verification is
 * marked with ⚠, and reads "failed" when no point verified (see "Data checks").
 *
 * <pre>{@code
 * String md = RankMatrix.section(index);   // every series at its largest size and at 1 MiB
 * }</pre>
 */
public final class RankMatrix {
    /** Marks a cell whose measurement did not verify. */
    static final String BAD_CHECK = " ⚠";

    private RankMatrix() {}

    public static String section(SweepIndex index) {
        StringBuilder sb = new StringBuilder("## Rank × rank matrices\n\n");
        sb.append("Rows: issuing rank (whose GPU runs the operation); columns: the peer whose memory it reaches "
                + "(\"all\": a collective of every rank). Each series at its largest size and at 1 MiB.\n\n");
        for (Series s : index.series()) {
            SortedSet<Long> sizes = index.sizes(s);
            if (sizes.isEmpty()) {
                continue;
            }
            List<Long> shown = new ArrayList<>();
            shown.add(sizes.last());
            if (sizes.contains(Sizes.MIB) && sizes.last() != Sizes.MIB) {
                shown.add(Sizes.MIB);
            }
            for (long bytes : shown) {
                sb.append("### ").append(s.label()).append(" at ").append(Sizes.bytes(bytes)).append(" (")
                        .append(s.metric().unit()).append(")\n\n").append(table(index, s, bytes)).append('\n');
            }
        }
        return sb.toString();
    }

    /** One matrix; ranks are those of the whole sweep, so every matrix of a report has the same shape. */
    public static String table(SweepIndex index, Series s, long bytes) {
        List<Measurement> points = index.points(s, bytes);
        SortedSet<Integer> ranks = new TreeSet<>(index.ranks());
        points.forEach(m -> ranks.add(m.issuer()));
        boolean collective = points.stream().anyMatch(m -> m.peer() < 0);
        boolean pairwise = points.stream().anyMatch(m -> m.peer() >= 0);

        List<String> header = new ArrayList<>(List.of("issuer \\ peer"));
        if (pairwise) {
            ranks.forEach(r -> header.add(String.valueOf(r)));
        }
        if (collective) {
            header.add("all");
        }
        MarkdownTable t = new MarkdownTable(header);
        for (int issuer : ranks) {
            List<Object> row = new ArrayList<>(List.of(String.valueOf(issuer)));
            if (pairwise) {
                ranks.forEach(peer -> row.add(cell(index, s, bytes, issuer, peer)));
            }
            if (collective) {
                row.add(cell(index, s, bytes, issuer, -1));
            }
            t.row(row);
        }
        return t.render();
    }

    private static String cell(SweepIndex index, Series s, long bytes, int issuer, int peer) {
        List<Measurement> ms = index.cell(s, bytes, issuer, peer);
        if (ms.isEmpty()) {
            return "—";
        }
        List<Double> ok = ms.stream().filter(SweepIndex::verified).map(m -> s.metric().value(m)).collect(Collectors.toList());
        boolean bad = ok.size() < ms.size();
        if (ok.isEmpty()) {
            return "failed" + BAD_CHECK;
        }
        return Sizes.number(Stats.median(ok).getAsDouble()) + (bad ? BAD_CHECK : "");
    }
}
