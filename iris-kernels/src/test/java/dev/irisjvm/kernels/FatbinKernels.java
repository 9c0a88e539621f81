package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.testing.CubinSymbols;
import dev.irisjvm.core.testing.FatbinEntries;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kernels a fatbin built by this module holds, read from the ELF images (cubins) inside it:
 * the global function symbols of each image's symbol table; and the PTX it keeps. It lets a test
 * check, with no GPU and no CUDA tool, that every kernel a Java class looks up was compiled, for
 * every architecture, and what nvcc made of the source.
 *
 * <pre>{@code
 * List<Set<String>> perArch = FatbinKernels.of("ccl_all_gather");
 * }</pre>
 */
public final class FatbinKernels {
    private FatbinKernels() {}

    /** One set of kernel names per ELF image of the module's fatbin (a class-path resource of this module). */
    public static List<Set<String>> of(String module) {
        return CubinSymbols.perImage(bytes(module));
    }

    /**
     * The kernels and device functions of the module's PTX, each name to its text up to the next
     * one, of every virtual architecture the fatbin keeps (a name of two keeps the last).
     */
    public static Map<String, String> ptxFunctions(String module) {
        Map<String, String> functions = new TreeMap<>();
        for (String ptx : FatbinEntries.ptx(bytes(module))) {
            Matcher header = PTX_FUNCTION.matcher(ptx);
            int at = -1;
            String name = null;
            while (header.find()) {
                if (name != null) {
                    functions.put(name, ptx.substring(at, header.start()));
                }
                name = header.group(1);
                at = header.start();
            }
            if (name != null) {
                functions.put(name, ptx.substring(at));
            }
        }
        return functions;
    }

    /** A PTX kernel's or function's header: ".entry name(", ".func name(" or ".func (.param ...) name(". */
    private static final Pattern PTX_FUNCTION = Pattern.compile("(?m)^(?:\\.\\w+\\s+)*\\.(?:entry|func)\\s+(?:\\([^)]*\\)\\s*)?([\\w$]+)\\s*\\(");

    private static byte[] bytes(String module) {
        String resource = "/dev/irisjvm/kernels/" + module + ".fatbin";
        try (InputStream in = FatbinKernels.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path: was the module built?");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(resource, e);
        }
    }

    /** Every kernel a class looks up ({@code kernelNames()}: module to names) is in every cubin of its module. */
    public static void assertEveryModuleHolds(Map<String, ? extends Collection<String>> namesByModule) {
        namesByModule.forEach((module, names) -> {
            List<Set<String>> images = of(module);
            assertFalse(images.isEmpty(), module + " holds no cubin");
            for (Set<String> image : images) {
                for (String name : names) {
                    assertTrue(image.contains(name), module + " lacks " + name + " in one of its cubins: " + image);
                }
            }
        });
    }
}
