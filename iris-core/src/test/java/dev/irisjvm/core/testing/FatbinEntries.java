package dev.irisjvm.core.testing;

import io.airlift.compress.zstd.ZstdDecompressor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The entries of a CUDA fatbin, read without any CUDA tool: each one's kind (an ELF image for one
 * architecture, or PTX) and its payload, decompressed where nvcc compressed it (Zstandard, as nvcc
 * 13 writes large entries).
 *
 * <pre>{@code
 * for (String ptx : FatbinEntries.ptx(bytes)) { assertFalse(ptx.contains("div.s64")); }
 * }</pre>
 */
public final class FatbinEntries {
    /** A CUDA fatbin container's magic; a fatbin file is one or more containers. */
    static final int MAGIC = 0xba55ed50;
    /** An entry's kind: PTX text. */
    public static final int KIND_PTX = 1;
    /** An entry's kind: an ELF image (a cubin). */
    public static final int KIND_ELF = 2;
    /** An entry's flag: its payload is compressed. */
    private static final long FLAG_COMPRESSED = 0x8000;

    /** One entry: its kind and its payload as the driver would load it. */
    public record Entry(int kind, byte[] payload) {}

    private FatbinEntries() {}

    /** Whether {@code bytes} start as a CUDA fatbin (a HIP code object bundle does not). */
    public static boolean isFatbin(byte[] bytes) {
        return bytes.length >= 16 && ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(0) == MAGIC;
    }

    /**
     * Every entry of every container. A container: magic, version (u16), header size (u16), entries'
     * bytes (u64); an entry: kind (u16), version (u16), header size (u32), payload size (u64),
     * compressed size (u32 at 16), flags (u64 at 40), uncompressed size (u64 at 56), then its payload.
     */
    public static List<Entry> read(byte[] fatbin) {
        ByteBuffer b = ByteBuffer.wrap(fatbin).order(ByteOrder.LITTLE_ENDIAN);
        List<Entry> entries = new ArrayList<>();
        for (int container = 0; container + 16 <= b.limit() && b.getInt(container) == MAGIC; ) {
            int header = Short.toUnsignedInt(b.getShort(container + 6));
            int end = Math.toIntExact(container + header + b.getLong(container + 8));
            for (int entry = container + header; entry < end; ) {
                int payload = entry + b.getInt(entry + 4);
                int payloadSize = Math.toIntExact(b.getLong(entry + 8));
                entries.add(new Entry(Short.toUnsignedInt(b.getShort(entry)), payload(b, entry, payload, payloadSize)));
                entry = payload + payloadSize;
            }
            container = end;
        }
        return entries;
    }

    /** The PTX texts of a fatbin (one per virtual architecture it keeps). */
    public static List<String> ptx(byte[] fatbin) {
        return read(fatbin).stream()
                .filter(e -> e.kind() == KIND_PTX)
                .map(e -> new String(e.payload(), StandardCharsets.UTF_8).replace("\0", ""))
                .toList();
    }

    private static byte[] payload(ByteBuffer b, int entry, int payload, int payloadSize) {
        if ((b.getLong(entry + 40) & FLAG_COMPRESSED) == 0) {
            byte[] bytes = new byte[payloadSize];
            b.get(payload, bytes);
            return bytes;
        }
        byte[] bytes = new byte[Math.toIntExact(b.getLong(entry + 56))];
        int size = new ZstdDecompressor().decompress(b.array(), payload, b.getInt(entry + 16), bytes, 0, bytes.length);
        if (size != bytes.length) {
            throw new IllegalArgumentException("a compressed entry of " + bytes.length + " bytes decompressed to " + size);
        }
        return bytes;
    }
}
