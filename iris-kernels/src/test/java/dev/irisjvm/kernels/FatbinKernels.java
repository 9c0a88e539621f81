package dev.irisjvm.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The kernels a fatbin built by this module holds, read from the ELF images (cubins) inside it:
 * the global function symbols of each image's symbol table. It lets a test check, with no GPU and
 * no CUDA tool, that every kernel a Java class looks up was compiled, for every architecture.
 *
 * <pre>{@code
 * List<Set<String>> perArch = FatbinKernels.of("ccl_all_gather");
 * }</pre>
 */
public final class FatbinKernels {
    private static final int SHT_SYMTAB = 2;
    private static final int STT_FUNC = 2;
    private static final int STB_GLOBAL = 1;

    private FatbinKernels() {}

    /** One set of kernel names per ELF image of the module's fatbin (a class-path resource of this module). */
    public static List<Set<String>> of(String module) {
        String resource = "/dev/irisjvm/kernels/" + module + ".fatbin";
        try (InputStream in = FatbinKernels.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path: was the module built?");
            }
            return images(ByteBuffer.wrap(in.readAllBytes()).order(ByteOrder.LITTLE_ENDIAN));
        } catch (IOException e) {
            throw new UncheckedIOException(resource, e);
        }
    }

    /** The ELF images are stored uncompressed at 8-byte aligned offsets; each starts with 0x7f 'E' 'L' 'F'. */
    static List<Set<String>> images(ByteBuffer fatbin) {
        List<Set<String>> images = new ArrayList<>();
        for (int at = 0; at + 64 <= fatbin.limit(); at += 8) {
            if (fatbin.getInt(at) == 0x464c457f && fatbin.get(at + 4) == 2) {  // ELF, 64-bit
                images.add(globalFunctions(fatbin, at));
            }
        }
        return images;
    }

    private static Set<String> globalFunctions(ByteBuffer b, int elf) {
        long sectionTable = b.getLong(elf + 0x28);
        int entrySize = Short.toUnsignedInt(b.getShort(elf + 0x3a));
        int sections = Short.toUnsignedInt(b.getShort(elf + 0x3c));
        Set<String> names = new TreeSet<>();
        for (int s = 0; s < sections; s++) {
            int header = Math.toIntExact(elf + sectionTable + (long) s * entrySize);
            if (b.getInt(header + 4) != SHT_SYMTAB) {
                continue;
            }
            int symbols = Math.toIntExact(elf + b.getLong(header + 0x18));
            long size = b.getLong(header + 0x20);
            int symbolSize = Math.toIntExact(b.getLong(header + 0x38));
            int stringsHeader = Math.toIntExact(elf + sectionTable + (long) b.getInt(header + 0x28) * entrySize);
            int strings = Math.toIntExact(elf + b.getLong(stringsHeader + 0x18));
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
