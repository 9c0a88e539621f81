package dev.irisjvm.core;

/**
 * A kernel source that did not compile. The message names the rank, the source and the
 * architecture, followed by the compiler's log, whose lines point into the source
 * ({@code allreduce.cu(12): error: identifier "x" is undefined}); {@link #log()} is the log alone.
 *
 * <pre>{@code
 * try {
 *     compiler.compile("mine.cu", source);
 * } catch (KernelCompileException e) {
 *     System.err.println(e.log());
 * }
 * }</pre>
 */
public final class KernelCompileException extends IrisException {
    private final String sourceName;
    private final String architecture;
    private final String log;

    public KernelCompileException(String message, String sourceName, String architecture, String log) {
        super(message);
        this.sourceName = sourceName;
        this.architecture = architecture;
        this.log = log;
    }

    /** The source's file name, as the log's lines print it. */
    public String sourceName() {
        return sourceName;
    }

    /** The architecture it was compiled for, e.g. {@code sm_90a}. */
    public String architecture() {
        return architecture;
    }

    /** The compiler's messages. */
    public String log() {
        return log;
    }
}
