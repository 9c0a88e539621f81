package dev.irisjvm.core;

import dev.irisjvm.core.env.RankEnvironment;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * What a rank announces at init as its node; ranks with equal keys share a node (and its heap).
 * The first that applies:
 * <ol>
 *   <li>{@code IRIS_NODE_ID}, any text: an explicit node, which lets one machine stand in for
 *       several (bin/iris-run {@code --simulate-nodes} sets it per simulated node);</li>
 *   <li>the launcher's node rank, when the launcher says the job spans several nodes;</li>
 *   <li>the host name, so that a launcher that says nothing of nodes still gets one node per host.</li>
 * </ol>
 * The kind is part of the key, so a rank that sets {@code IRIS_NODE_ID} never matches one that
 * does not by accident; {@link NodeLayout} rejects a job whose ranks disagree on the kind.
 */
final class NodeKey {
    /** The variable that names this rank's node explicitly. */
    static final String IRIS_NODE_ID = "IRIS_NODE_ID";
    static final String EXPLICIT = "IRIS_NODE_ID=";
    static final String LAUNCHER = "launcher node ";
    static final String HOST = "host ";
    /** The announcement field's size; longer ids would be cut and could collide. */
    static final int MAX_BYTES = 64;

    private NodeKey() {}

    /**
     * This rank's key.
     *
     * @throws IllegalArgumentException naming IRIS_NODE_ID and the rank when the id is too long to announce
     */
    static String of(Map<String, String> env, RankEnvironment rank, String host) {
        String id = env.get(IRIS_NODE_ID);
        String key;
        if (id != null && !id.isBlank()) {
            key = EXPLICIT + id.strip();
        } else if (rank.isMultiNode()) {
            key = LAUNCHER + rank.nodeRank();
        } else {
            key = HOST + host;
        }
        if (key.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException("rank " + rank.rank() + ": " + IRIS_NODE_ID + " must be at most "
                    + (MAX_BYTES - EXPLICIT.length()) + " bytes (host names at most " + (MAX_BYTES - HOST.length())
                    + "), got '" + key + "'");
        }
        return key;
    }

    /** The kind of a key (explicit, launcher or host), for telling ranks that disagree. */
    static String kind(String key) {
        if (key.startsWith(EXPLICIT)) return "IRIS_NODE_ID";
        if (key.startsWith(LAUNCHER)) return "the launcher's node rank";
        return "the host name";
    }
}
