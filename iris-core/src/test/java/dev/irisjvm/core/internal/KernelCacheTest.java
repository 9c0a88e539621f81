package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelCacheTest {
    private static final byte[] ELF = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 1, 2, 3};

    @TempDir
    Path root;

    @Test
    void anEntryReadsBackAndLeavesNoTemporaryFile() throws Exception {
        KernelCache cache = new KernelCache(root);
        String key = KernelCache.key(List.of("source", "-arch=sm_90a"));
        assertTrue(cache.read(key).isEmpty());
        cache.write(key, ELF);
        assertArrayEquals(ELF, cache.read(key).orElseThrow());
        try (Stream<Path> files = Files.list(root.resolve("kernels"))) {
            assertEquals(List.of(key + ".cubin"), files.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void anEntryThatIsNotElfIsAMiss() throws Exception {
        KernelCache cache = new KernelCache(root);
        Files.createDirectories(cache.entry("k").getParent());
        Files.write(cache.entry("k"), new byte[] {1, 2, 3, 4, 5, 6});
        assertTrue(cache.read("k").isEmpty());
    }

    @Test
    void keysSeparateTheirParts() {
        assertNotEquals(KernelCache.key(List.of("ab", "c")), KernelCache.key(List.of("a", "bc")));
        assertEquals(KernelCache.key(List.of("a", "b")), KernelCache.key(List.of("a", "b")));
    }

    @Test
    void theHeadersDigestFollowsTheirContentAndNames() {
        String digest = DeviceHeaders.digest(Map.of("iris/iris.cuh", new byte[] {1}, "iris/ctx.cuh", new byte[] {2}));
        assertNotEquals(digest, DeviceHeaders.digest(Map.of("iris/iris.cuh", new byte[] {1}, "iris/ctx.cuh", new byte[] {3})));
        assertNotEquals(digest, DeviceHeaders.digest(Map.of("iris/iris.cuh", new byte[] {1}, "iris/ctz.cuh", new byte[] {2})));
    }

    @Test
    void theShippedHeadersUnpackOnceUnderTheirDigest() throws Exception {
        DeviceHeaders first = DeviceHeaders.unpack(root);
        DeviceHeaders second = DeviceHeaders.unpack(root);
        assertEquals(first, second);
        assertTrue(Files.isRegularFile(first.directory().resolve("iris/iris.cuh")));
        assertTrue(first.directory().getFileName().toString().length() == 16 && first.digest().startsWith(
                first.directory().getFileName().toString()));
        try (Stream<Path> folders = Files.list(root.resolve("include"))) {
            assertEquals(1, folders.count(), "no staging folder left behind");
        }
    }
}
