package dev.irisjvm.bench.report;

/**
 * Which committed run a figure comes from: the raw JSON's file name, the date the run recorded and
 * the commit it measured. The sweeps' JSON holds no commit, so the commit comes from
 * {@link RunCommits} ({@value RunCommits#FILE} beside the JSON).
 *
 * <pre>{@code
 * new RunSource("gemm-sweep.json", "2026-11-30T14:02:31Z", "b0cd92d").cite("docs/benchmarks");
 * // "[gemm-sweep.json](docs/benchmarks/gemm-sweep.json) of 2026-11-30T14:02:31Z at `b0cd92d`"
 * }</pre>
 *
 * @param file   the JSON's name in the benchmarks folder
 * @param date   the run's ISO date-time (UTC), as its JSON records it
 * @param commit the commit the run measured (an abbreviated hash), what is known of it in words, or
 *               null where {@value RunCommits#FILE} does not name the file
 */
record RunSource(String file, String date, String commit) {

    /** A Markdown link to the JSON, {@code linkBase} being the folder as seen from the document that cites it. */
    String cite(String linkBase) {
        String when = date == null || date.isBlank() ? "an unrecorded date" : date;
        String which = commit == null ? "at an unrecorded commit" : RunCommits.isHash(commit) ? "at `" + commit + "`" : "(commit " + commit + ")";
        return StatusSection.link(linkBase, file) + " of " + when + " " + which;
    }
}
