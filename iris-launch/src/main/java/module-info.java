/**
 * The per-rank launcher: {@code bin/iris-run -n N -- CMD} starts N copies of a command with the
 * environment {@code Iris.init()} reads, prefixes their output with the rank, and stops the job
 * when a rank fails. Independent of the rest of the library, so that it can start any program.
 *
 * <pre>{@code
 * java -p iris-launch.jar -m dev.irisjvm.launch/dev.irisjvm.launch.Launcher -n 2 -- java -jar app.jar
 * }</pre>
 */
module dev.irisjvm.launch {
    exports dev.irisjvm.launch;
}
