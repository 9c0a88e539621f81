package dev.irisjvm.core.env;

import java.math.BigInteger;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Slurm's compressed host lists, such as {@code SLURM_STEP_NODELIST=gpu[01-04,07],login1}: a
 * comma-separated list of names, each of which may hold bracketed ranges of numbers whose
 * zero padding is part of the name ({@code gpu[01-04,07]} is gpu01, gpu02, gpu03, gpu04, gpu07).
 * A name may hold several bracket groups ({@code rack[1-2]-n[01-02]} starts with rack1-n01).
 *
 * <p>Only the first host is needed: it is where task 0 of a step runs under Slurm's block and
 * cyclic distributions, and so where the rendezvous listens.
 *
 * <pre>{@code
 * SlurmHostList.firstHost("gpu[03-04]");            // "gpu03"
 * SlurmHostList.firstHost("gpu[01-04,07],login1");  // "gpu01"
 * SlurmHostList.firstHost("login1,gpu[01-02]");     // "login1"
 * }</pre>
 */
public final class SlurmHostList {

    /** Inside brackets: numbers and ranges of numbers, comma-separated, such as {@code 01-04,07}. */
    private static final Pattern RANGES = Pattern.compile("\\d+(-\\d+)?(,\\d+(-\\d+)?)*");
    /** Characters of a host name. */
    private static final Pattern NAME_PART = Pattern.compile("[A-Za-z0-9._-]*");

    private SlurmHostList() {
    }

    /**
     * The first host of a host list.
     *
     * @throws IllegalArgumentException naming the list, what is wrong in it and the form expected
     */
    public static String firstHost(String hostList) {
        Objects.requireNonNull(hostList, "hostList");
        String list = hostList.trim();
        StringBuilder host = new StringBuilder();
        int i = 0;
        // Read the first entry only: up to the first comma outside brackets.
        while (i < list.length() && list.charAt(i) != ',') {
            char c = list.charAt(i);
            if (c == '[') {
                int close = list.indexOf(']', i);
                if (close < 0) {
                    throw malformed(hostList, "'[' at position " + i + " is never closed");
                }
                String ranges = list.substring(i + 1, close);
                if (!RANGES.matcher(ranges).matches()) {
                    throw malformed(hostList, "'[" + ranges + "]' is not a list of numbers and ranges such as [01-04,07]");
                }
                host.append(firstOfRanges(hostList, ranges));
                i = close + 1;
            } else if (c == ']') {
                throw malformed(hostList, "']' at position " + i + " has no '['");
            } else {
                host.append(c);
                i++;
            }
        }
        String first = host.toString();
        if (first.isEmpty()) {
            throw malformed(hostList, "the first entry is empty");
        }
        if (!NAME_PART.matcher(first).matches()) {
            throw malformed(hostList, "'" + first + "' is not a host name");
        }
        return first;
    }

    /** The start of the first range, as written: its zero padding belongs to the host name. */
    private static String firstOfRanges(String hostList, String ranges) {
        String firstRange = ranges.split(",", 2)[0];
        int dash = firstRange.indexOf('-');
        if (dash < 0) {
            return firstRange;
        }
        String start = firstRange.substring(0, dash);
        String end = firstRange.substring(dash + 1);
        if (new BigInteger(start).compareTo(new BigInteger(end)) > 0) {
            throw malformed(hostList, "range " + firstRange + " runs backwards");
        }
        return start;
    }

    private static IllegalArgumentException malformed(String hostList, String problem) {
        return new IllegalArgumentException("'" + hostList + "' is not a Slurm host list such as gpu[01-04,07],login1: "
                + problem);
    }
}
