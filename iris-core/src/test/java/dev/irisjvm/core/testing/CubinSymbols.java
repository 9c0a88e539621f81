package dev.irisjvm.core.testing;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The global functions (kernels) in one cubin's ELF symbol table, read without any CUDA tool, so a
 * test can check on a machine without a GPU that a kernel was compiled.
 *
 * <pre>{@code
 * assertTrue(CubinSymbols.globalFunctions(cubin).contains("my_kernel"));
 * }</pre>
 */
public final class CubinSymbols {
    private static final int SHT_SYMTAB = 2;
    private static final int STT_FUNC = 2;
    private static final int STB_GLOBAL = 1;

    private CubinSymbols() {}

    /**
     * The global functions of each ELF image (one per architecture) of a fatbin. A CUDA fatbin is
     * read entry by entry ({@link FatbinEntries}); anything else (a HIP code object bundle) is
     * searched for images at 8-byte aligned offsets, each starting with 0x7f 'E' 'L' 'F'.
     */
    public static List<Set<String>> perImage(byte[] fatbin) {
        if (FatbinEntries.isFatbin(fatbin)) {
            return FatbinEntries.read(fatbin).stream()
                    .filter(e -> e.kind() == FatbinEntries.KIND_ELF)
                    .map(e -> globalFunctions(e.payload()))
                    .toList();
        }
        ByteBuffer b = ByteBuffer.wrap(fatbin).order(ByteOrder.LITTLE_ENDIAN);
        List<Set<String>> images = new ArrayList<>();
        for (int at = 0; at + 64 <= b.limit(); at += 8) {
            if (b.getInt(at) == 0x464c457f && b.get(at + 4) == 2) {  // ELF, 64-bit
                images.add(globalFunctions(b.slice(at, b.limit() - at)));
            }
        }
        return images;
    }

    public static Set<String> globalFunctions(byte[] cubin) {
        return globalFunctions(ByteBuffer.wrap(cubin));
    }

    /** The same for an image that starts at index 0 of {@code image} (a slice of a fatbin, say). */
    public static Set<String> globalFunctions(ByteBuffer image) {
        ByteBuffer b = image.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt(0) != 0x464c457f || b.get(4) != 2) {
            throw new IllegalArgumentException("not a 64-bit ELF image");
        }
        long sectionTable = b.getLong(0x28);
        int entrySize = Short.toUnsignedInt(b.getShort(0x3a));
        int sections = Short.toUnsignedInt(b.getShort(0x3c));
        Set<String> names = new TreeSet<>();
        for (int s = 0; s < sections; s++) {
            int header = Math.toIntExact(sectionTable + (long) s * entrySize);
            if (b.getInt(header + 4) != SHT_SYMTAB) {
                continue;
            }
            int symbols = Math.toIntExact(b.getLong(header + 0x18));
            long size = b.getLong(header + 0x20);
            int symbolSize = Math.toIntExact(b.getLong(header + 0x38));
            int stringsHeader = Math.toIntExact(sectionTable + (long) b.getInt(header + 0x28) * entrySize);
            int strings = Math.toIntExact(b.getLong(stringsHeader + 0x18));
            for (int i = 0; (long) i * symbolSize < size; i++) {
                int symbol = symbols + i * symbolSize;
                int info = Byte.toUnsignedInt(b.get(symbol + 4));
                if ((info & 0xf) == STT_FUNC && (info >> 4) == STB_GLOBAL) {
                    names.add(cString(b, strings + b.getInt(symbol)));
                }
            }
        }
        return names;
    }

    private static String cString(ByteBuffer b, int at) {
        StringBuilder s = new StringBuilder();
        for (int i = at; b.get(i) != 0; i++) {
            s.append((char) b.get(i));
        }
        return s.toString();
    }
}
