package dev.irisjvm.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiled kernels on disk, one file per key ({@code <root>/kernels/<key>.cubin}). The key is a
 * SHA-256 over everything that decides the code (source, options, headers, architecture, compiler
 * and driver versions), so entries are never updated, only added. An entry is written to a temporary
 * file in the same folder and renamed into place: a reader sees a whole entry or none, however many
 * ranks and processes compile the same kernel at once (the last rename wins, with identical bytes).
 *
 * <pre>{@code
 * KernelCache cache = new KernelCache(KernelCache.defaultRoot());
 * String key = KernelCache.key(List.of(source, "-arch=sm_90a", "nvrtc 13010"));
 * byte[] cubin = cache.read(key).orElseGet(() -> compileAndStore(key));
 * }</pre>
 */
public final class KernelCache {
    public static final String DIRECTORY_VARIABLE = "IRIS_CACHE_DIR";
    public static final String DIRECTORY_PROPERTY = "iris.cache.dir";
    private static final Logger LOG = LoggerFactory.getLogger(KernelCache.class);
    private static final byte[] ELF_MAGIC = {0x7f, 'E', 'L', 'F'};

    private final Path root;

    public KernelCache(Path root) {
        this.root = root;
    }

    /** {@code iris.cache.dir}, else {@code IRIS_CACHE_DIR}, else {@code $XDG_CACHE_HOME/iris-jvm}, else {@code ~/.cache/iris-jvm}. */
    public static Path defaultRoot() {
        String property = System.getProperty(DIRECTORY_PROPERTY);
        if (property != null && !property.isBlank()) {
            return Path.of(property);
        }
        String variable = System.getenv(DIRECTORY_VARIABLE);
        if (variable != null && !variable.isBlank()) {
            return Path.of(variable);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("iris-jvm");
    }

    public Path root() {
        return root;
    }

    /** The key of an entry: SHA-256 over the parts, each length-prefixed so that no two lists collide. */
    public static String key(List<String> parts) {
        MessageDigest sha = sha256();
        for (String part : parts) {
            update(sha, part);
        }
        return hex(sha.digest());
    }

    /** The entry's file (whether or not it exists). */
    public Path entry(String key) {
        return root.resolve("kernels").resolve(key + ".cubin");
    }

    /** The stored code, if there is an entry and it is an ELF image. */
    public Optional<byte[]> read(String key) {
        try {
            byte[] bytes = Files.readAllBytes(entry(key));
            if (bytes.length > ELF_MAGIC.length && ByteBuffer.wrap(bytes, 0, 4).equals(ByteBuffer.wrap(ELF_MAGIC))) {
                return Optional.of(bytes);
            }
            LOG.warn("{}: kernel cache entry {} is not an ELF image; compiling again", NativeCalls.rankLabel(), entry(key));
            return Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            LOG.warn("{}: cannot read kernel cache entry {} ({}); compiling again", NativeCalls.rankLabel(), entry(key), e.toString());
            return Optional.empty();
        }
    }

    /**
     * Stores the code under the key, atomically. A cache that cannot be written costs a compile next
     * time, not this one: the failure is logged, not thrown.
     */
    public void write(String key, byte[] code) {
        Path target = entry(key);
        Path temp = null;
        try {
            Files.createDirectories(target.getParent());
            temp = Files.createTempFile(target.getParent(), key + ".", ".tmp");
            Files.write(temp, code);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            temp = null;
        } catch (IOException e) {
            LOG.warn("{}: cannot write kernel cache entry {} ({}); it will be compiled again next time",
                    NativeCalls.rankLabel(), target, e.toString());
        } finally {
            if (temp != null) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException e) {
                    LOG.warn("{}: cannot remove {} ({})", NativeCalls.rankLabel(), temp, e.toString());
                }
            }
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    static void update(MessageDigest sha, String part) {
        update(sha, part.getBytes(StandardCharsets.UTF_8));
    }

    static void update(MessageDigest sha, byte[] part) {
        sha.update(ByteBuffer.allocate(8).putLong(part.length).array());
        sha.update(part);
    }

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
