package dev.irisjvm.core.env;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Slurm's compressed per-node task counts, as in {@code SLURM_TASKS_PER_NODE=4(x2),2}: 4 tasks on
 * each of the first two nodes, then 2 on the third. Counts differ by node when the tasks do not
 * divide evenly, so a task reads the entry of its own node ({@code SLURM_NODEID}).
 *
 * <pre>{@code
 * SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", "4(x2),2", 2);   // 2
 * SlurmTasksPerNode.onNode("SLURM_TASKS_PER_NODE", "4(x2),2", 1);   // 4
 * }</pre>
 */
final class SlurmTasksPerNode {

    private static final Pattern ENTRY = Pattern.compile("(\\d+)(?:\\(x(\\d+)\\))?");
    private static final String FORM = "a list of counts such as 4, 4(x2) or 4(x2),2";

    private SlurmTasksPerNode() {
    }

    /**
     * The task count of node {@code node} (0-based).
     *
     * @param name  the variable, for error messages
     * @param value its value
     * @throws IllegalArgumentException naming the variable when the value is malformed or lists
     *         fewer nodes than {@code node + 1}
     */
    static int onNode(String name, String value, int node) {
        int seen = 0;
        int found = -1;
        // The whole value is checked, not just the entries up to this node's: a malformed list
        // means a different launcher or a typo, whichever node reads it.
        for (String entry : value.split(",", -1)) {
            Matcher m = ENTRY.matcher(entry.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException(name + " must be " + FORM + ", got '" + value + "'");
            }
            int count = EnvVars.parseInt(name, m.group(1));
            int repeat = m.group(2) == null ? 1 : EnvVars.parseInt(name, m.group(2));
            if (found < 0 && node >= seen && node - seen < repeat) {
                found = count;
            }
            seen = (int) Math.min(Integer.MAX_VALUE, (long) seen + repeat);
        }
        if (found >= 0) {
            return found;
        }
        throw new IllegalArgumentException(name + "=" + value + " lists " + seen + (seen == 1 ? " node" : " nodes")
                + ", so it has no count for node " + node);
    }
}
