package dev.irisjvm.core;

/**
 * Base of every exception this library throws. Messages name the rank where that is known,
 * the argument or call at fault, and what was expected, so that a log line from one rank of
 * a multi-GPU job is enough to find the cause.
 */
public class IrisException extends RuntimeException {
    public IrisException(String message) {
        super(message);
    }

    public IrisException(String message, Throwable cause) {
        super(message, cause);
    }
}
