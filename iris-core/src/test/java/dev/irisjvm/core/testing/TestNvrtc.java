package dev.irisjvm.core.testing;

import dev.irisjvm.core.internal.Nvrtc;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * NVRTC for tests, from JavaCPP's cuda-redist jar (a test dependency): its libnvrtc.so.13 and
 * builtins are unpacked once into {@code target/nvrtc/} and named through {@code iris.nvrtc.library},
 * so that the compiler's search order need not find a toolkit on the build machine.
 *
 * <pre>{@code
 * TestNvrtc.use();   // before the first compile in this JVM
 * }</pre>
 */
public final class TestNvrtc {
    private static final String JAR_FOLDER = "org/bytedeco/cuda/linux-x86_64/";
    private static final String[] FILES = {"libnvrtc.so.13", "libnvrtc-builtins.so.13.1"};

    private TestNvrtc() {}

    /** Unpacks NVRTC (if not there already), points the compiler at it, and returns its path. */
    public static synchronized Path use() {
        Path dir = Path.of("target", "nvrtc").toAbsolutePath();
        try {
            Files.createDirectories(dir);
            for (String file : FILES) {
                Path target = dir.resolve(file);
                if (Files.exists(target)) {
                    continue;
                }
                try (InputStream in = TestNvrtc.class.getClassLoader().getResourceAsStream(JAR_FOLDER + file)) {
                    if (in == null) {
                        throw new IllegalStateException(JAR_FOLDER + file + " is not on the test class path "
                                + "(org.bytedeco:cuda-redist:linux-x86_64 is a test dependency)");
                    }
                    Path temp = Files.createTempFile(dir, file, ".tmp");
                    Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path library = dir.resolve(FILES[0]);
        System.setProperty(Nvrtc.LIBRARY_PROPERTY, library.toString());
        return library;
    }
}
