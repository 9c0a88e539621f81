package dev.irisjvm.core.rendezvous;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes new connections off rank 0's listening socket and rides out accept failures instead of
 * failing the rendezvous: when the process runs out of file descriptors ("Too many open files")
 * it says so in the log, lets the caller free one, and pauses accepting with a growing back-off,
 * because the listening socket stays ready while the backlog is full and retrying at once would
 * spin.
 */
final class Acceptor {
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);

    static final long FIRST_PAUSE_MILLIS = 10;
    static final long MAX_PAUSE_MILLIS = 1000;

    /** Where connections come from: the listening socket, or a test's stand-in. */
    @FunctionalInterface
    interface Source {
        /** A new non-null connection, or null when none is waiting. */
        SocketChannel accept() throws IOException;
    }

    private final Source source;
    private final String where;
    private final Runnable freeOne;
    private long pauseMillis;
    private long resumeAtNanos;
    private boolean paused;
    private int failuresInARow;
    private int exhaustions;
    // One warning of each kind per run of failures; the rest go to debug, a flood must not flood the log.
    private boolean warnedExhaustion;
    private boolean warnedOther;

    /**
     * @param freeOne called when accepting failed for lack of file descriptors, to close one
     *                connection that matters least (rank 0 drops its oldest stranger)
     */
    Acceptor(Source source, String where, Runnable freeOne) {
        this.source = source;
        this.where = where;
        this.freeOne = freeOne;
    }

    /**
     * The next connection, or null when none is waiting or accepting is paused.
     *
     * @throws ClosedChannelException when the listening socket was closed (the rendezvous ends)
     */
    SocketChannel next() throws ClosedChannelException {
        if (isPaused()) {
            return null;
        }
        SocketChannel channel;
        try {
            channel = source.accept();
        } catch (ClosedChannelException e) {
            throw e;
        } catch (IOException e) {
            pause(e);
            return null;
        }
        if (channel != null && failuresInARow > 0) {
            LOG.info("rank 0 at {} accepts connections again after {} failed attempts", where, failuresInARow);
            failuresInARow = 0;
            pauseMillis = 0;
            warnedExhaustion = false;
            warnedOther = false;
        }
        return channel;
    }

    /** True while accepting is paused after a failure; the listening socket should not be watched. */
    boolean isPaused() {
        if (paused && System.nanoTime() - resumeAtNanos >= 0) {
            paused = false;
        }
        return paused;
    }

    /** Milliseconds until accepting resumes, at least 1; only meaningful while {@link #isPaused()}. */
    long pauseLeftMillis() {
        return Math.max(1, (resumeAtNanos - System.nanoTime()) / 1_000_000 + 1);
    }

    /** How many accepts failed for lack of file descriptors; for tests and summaries. */
    int exhaustions() {
        return exhaustions;
    }

    /** True for EMFILE (this process) and ENFILE (the whole system), as the JDK words them. */
    static boolean outOfDescriptors(IOException e) {
        String message = e.getMessage();
        return message != null && message.contains("Too many open files");
    }

    private void pause(IOException e) {
        failuresInARow++;
        pauseMillis = pauseMillis == 0 ? FIRST_PAUSE_MILLIS : Math.min(MAX_PAUSE_MILLIS, pauseMillis * 2);
        resumeAtNanos = System.nanoTime() + pauseMillis * 1_000_000;
        paused = true;
        boolean exhausted = outOfDescriptors(e);
        if (exhausted) {
            exhaustions++;
            freeOne.run();
        }
        if (exhausted && !warnedExhaustion) {
            warnedExhaustion = true;
            LOG.warn("rank 0 at {} cannot accept connections: too many open files (the process's file descriptor"
                    + " limit, ulimit -n, is reached, or the system's); dropping its oldest unauthenticated"
                    + " connection and retrying with a back-off of up to {} ms", where, MAX_PAUSE_MILLIS);
        } else if (!exhausted && !warnedOther) {
            warnedOther = true;
            LOG.warn("rank 0 at {} failed to accept a connection ({}); retrying with a back-off of up to {} ms",
                    where, FrameReader.reason(e), MAX_PAUSE_MILLIS);
        } else {
            LOG.debug("rank 0 at {}: accept failed again ({} in a row): {}", where, failuresInARow, FrameReader.reason(e));
        }
    }
}
