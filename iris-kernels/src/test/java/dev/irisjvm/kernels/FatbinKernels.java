package dev.irisjvm.kernels;

import dev.irisjvm.core.testing.CubinSymbols;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
    private FatbinKernels() {}

    /** One set of kernel names per ELF image of the module's fatbin (a class-path resource of this module). */
    public static List<Set<String>> of(String module) {
        String resource = "/dev/irisjvm/kernels/" + module + ".fatbin";
        try (InputStream in = FatbinKernels.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path: was the module built?");
            }
            return CubinSymbols.perImage(in.readAllBytes());
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
