package dev.irisjvm.bench.report;

/**
 * Which committed run a figure comes from: the raw JSON's file name and the date the run recorded.
 * The JSON of the sweeps holds no commit, so file and date are what name a run.
 *
 * <pre>{@code
 * new RunSource("gemm-sweep.json", "2026-11-30T14:02:31Z").cite("docs/benchmarks");
 * // "[gemm-sweep.json](docs/benchmarks/gemm-sweep.json) of 2026-11-30T14:02:31Z"
 * }</pre>
 *
 * @param file the JSON's name in the benchmarks folder
 * @param date the run's ISO date-time (UTC), as its JSON records it
 */
record RunSource(String file, String date) {

    /** A Markdown link to the JSON, {@code linkBase} being the folder as seen from the document that cites it. */
    String cite(String linkBase) {
        return StatusSection.link(linkBase, file) + " of " + (date == null || date.isBlank() ? "an unrecorded date" : date);
    }
}
