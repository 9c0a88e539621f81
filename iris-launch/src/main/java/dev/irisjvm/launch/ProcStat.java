package dev.irisjvm.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The fields of Linux's {@code /proc/PID/stat} the launcher needs: the state (to tell a zombie from
 * a running process) and the session (to find every process a rank started, re-parented ones
 * included, when the rank leads a session of its own).
 *
 * <pre>{@code
 * ProcStat.read(pid).filter(s -> s.session() == rankPid && s.isRunning()).isPresent()
 * }</pre>
 *
 * @param state   the one-letter state: R, S, D, T, Z (zombie), X (dead), ...
 * @param session the session id, the pid of the session's leader
 */
record ProcStat(char state, long session) {

    /** Whether this system has {@code /proc/PID/stat} to read. */
    static final boolean AVAILABLE = Files.isReadable(Path.of("/proc/self/stat"));

    /** Whether the process still runs: neither a zombie waiting to be reaped nor dead. */
    boolean isRunning() {
        return state != 'Z' && state != 'X';
    }

    /** The process's stat, empty when it is gone, unreadable or this is not Linux. */
    static Optional<ProcStat> read(long pid) {
        if (!AVAILABLE) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(parse(Files.readString(Path.of("/proc", Long.toString(pid), "stat"))));
        } catch (IOException | UncheckedIOException | SecurityException gone) {
            return Optional.empty();
        }
    }

    /**
     * Parses one stat line, null if it is malformed. The command name in parentheses may hold
     * spaces or ')', so the fields are counted from the last ')': state, ppid, pgrp, session.
     */
    static ProcStat parse(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return null;
        }
        String[] fields = stat.substring(close + 1).trim().split(" ");
        if (fields.length < 4 || fields[0].length() != 1) {
            return null;
        }
        try {
            return new ProcStat(fields[0].charAt(0), Long.parseLong(fields[3]));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
