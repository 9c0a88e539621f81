package dev.irisjvm.core.env;

import dev.irisjvm.launch.RankVariables;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Where a rank finds its job's secret: {@code IRIS_JOB_TOKEN} (set per launch by
 * {@code bin/iris-run}, or by the user for other launchers), else the contents of the file that
 * {@code IRIS_JOB_TOKEN_FILE} names, else none.
 *
 * <p>The variable wins over the file, so that a user who keeps {@code IRIS_JOB_TOKEN_FILE} in
 * their shell still gets iris-run's fresh per-launch secret. The file must be a regular file
 * that only its owner may read or write, the way ssh treats private keys: a secret that others
 * on the host can read is no secret, and one they can write they can choose.
 */
final class JobTokenSource {
    /** A secret is one line; a larger file is a wrong path, not a secret. */
    static final int MAX_FILE_BYTES = 4096;

    private static final Set<PosixFilePermission> NOT_OWNER = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE);

    private JobTokenSource() {
    }

    /**
     * The secret, or {@code ""} when neither variable is set.
     *
     * @throws IllegalArgumentException naming {@code IRIS_JOB_TOKEN_FILE}, the path and the fix
     *         when the file is missing, unreadable, empty, too large, or open to group or others
     */
    static String read(Map<String, String> env) {
        String token = env.get(RankVariables.IRIS_JOB_TOKEN);
        if (token != null && !token.isBlank()) {
            return token.trim();
        }
        String file = env.get(RankVariables.IRIS_JOB_TOKEN_FILE);
        if (file == null || file.isBlank()) {
            return "";
        }
        return fromFile(file.trim());
    }

    private static String fromFile(String name) {
        String variable = RankVariables.IRIS_JOB_TOKEN_FILE + "='" + name + "'";
        Path path;
        try {
            path = Path.of(name);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(variable + " is not a valid path: " + e.getReason());
        }
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException(variable + " does not name a regular file; write the job's secret"
                    + " into one (readable only by you: chmod 600) or set IRIS_JOB_TOKEN instead");
        }
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(path);
            Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
            open.addAll(permissions);
            open.retainAll(NOT_OWNER);
            if (!open.isEmpty()) {
                throw new IllegalArgumentException(variable + " has permissions "
                        + PosixFilePermissions.toString(permissions) + ": a job secret must be readable only by"
                        + " its owner, and this one is open to group or others; run chmod 600 '" + name + "'");
            }
            long size = Files.size(path);
            if (size > MAX_FILE_BYTES) {
                throw new IllegalArgumentException(variable + " holds " + size + " bytes, more than the "
                        + MAX_FILE_BYTES + " a job secret may have; is it the right file?");
            }
            String secret = Files.readString(path, StandardCharsets.UTF_8).trim();
            if (secret.isEmpty()) {
                throw new IllegalArgumentException(variable + " is empty; write the job's secret into it, e.g."
                        + " head -c 32 /dev/urandom | base64 > '" + name + "'");
            }
            return secret;
        } catch (UnsupportedOperationException e) {
            throw new IllegalArgumentException(variable + " is on a file system without POSIX permissions, so"
                    + " it cannot be checked to be private; set IRIS_JOB_TOKEN instead");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + variable + ": " + e, e);
        }
    }
}
