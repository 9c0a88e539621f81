package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The device API headers that iris-native ships under {@code dev/irisjvm/runtime/include}, unpacked
 * once into {@code <cache>/include/<digest>/} so that a compiler can take them as an include path.
 * The folder is named after the headers' content, so a new version of the library unpacks beside the
 * old one instead of over it, and it appears by an atomic rename, so concurrent ranks never see half
 * of it.
 *
 * <pre>{@code
 * DeviceHeaders headers = DeviceHeaders.unpack(KernelCache.defaultRoot());
 * options.add("-I" + headers.directory());   // #include <iris/iris.cuh>
 * }</pre>
 */
public record DeviceHeaders(Path directory, String digest) {
    static final String ROOT = "dev/irisjvm/runtime/include/";
    private static final String ANCHOR = ROOT + "iris/iris.cuh";

    /** Unpacks the shipped headers under {@code cacheRoot} (if not there already). */
    public static DeviceHeaders unpack(Path cacheRoot) {
        Map<String, byte[]> files = read();
        String digest = digest(files);
        Path target = cacheRoot.resolve("include").resolve(digest.substring(0, 16));
        if (Files.isDirectory(target)) {
            return new DeviceHeaders(target, digest);
        }
        Path staging = null;
        try {
            Files.createDirectories(target.getParent());
            staging = Files.createTempDirectory(target.getParent(), "unpacking-");
            for (Map.Entry<String, byte[]> f : files.entrySet()) {
                Path out = staging.resolve(f.getKey());
                Files.createDirectories(out.getParent());
                Files.write(out, f.getValue());
            }
            Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            staging = null;
        } catch (AtomicMoveNotSupportedException e) {
            throw new IrisException(NativeCalls.rankLabel() + ": cannot unpack the device headers into " + target
                    + ": the file system cannot rename atomically (set IRIS_CACHE_DIR to a local folder)", e);
        } catch (IOException e) {
            // A rename onto a folder that another rank or process unpacked first fails (ENOTEMPTY,
            // reported as a plain FileSystemException): theirs holds the same headers.
            if (!Files.isDirectory(target)) {
                throw new IrisException(NativeCalls.rankLabel() + ": cannot unpack the device headers into " + target
                        + ": " + e, e);
            }
        } finally {
            if (staging != null) {
                deleteTree(staging);
            }
        }
        return new DeviceHeaders(target, digest);
    }

    /** Every shipped header by its path below the include root, from iris-native's jar or build folder. */
    static Map<String, byte[]> read() {
        URL anchor = DeviceHeaders.class.getClassLoader().getResource(ANCHOR);
        if (anchor == null) {
            throw new IrisException(NativeCalls.rankLabel() + ": the device headers (" + ANCHOR
                    + ") are not on the class path: add iris-native's jar");
        }
        Map<String, byte[]> files = new TreeMap<>();
        try {
            if ("jar".equals(anchor.getProtocol())) {
                JarURLConnection connection = (JarURLConnection) anchor.openConnection();
                connection.setUseCaches(false);
                try (JarFile jar = connection.getJarFile()) {
                    for (JarEntry e : (Iterable<JarEntry>) jar.stream()::iterator) {
                        if (!e.isDirectory() && e.getName().startsWith(ROOT)) {
                            try (InputStream in = jar.getInputStream(e)) {
                                files.put(e.getName().substring(ROOT.length()), in.readAllBytes());
                            }
                        }
                    }
                }
            } else {
                Path root = Path.of(anchor.toURI()).getParent().getParent();
                try (Stream<Path> walk = Files.walk(root)) {
                    for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
                        files.put(root.relativize(p).toString().replace('\\', '/'), Files.readAllBytes(p));
                    }
                }
            }
        } catch (IOException | URISyntaxException e) {
            throw new IrisException(NativeCalls.rankLabel() + ": cannot read the device headers at " + anchor + ": " + e, e);
        }
        return files;
    }

    /** SHA-256 over each file's path and content, in path order. */
    static String digest(Map<String, byte[]> files) {
        MessageDigest sha = KernelCache.sha256();
        for (Map.Entry<String, byte[]> f : new TreeMap<>(files).entrySet()) {
            KernelCache.update(sha, f.getKey());
            KernelCache.update(sha, f.getValue());
        }
        return KernelCache.hex(sha.digest());
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // A leftover staging folder is harmless (its name never collides); nothing to report.
        }
    }
}
