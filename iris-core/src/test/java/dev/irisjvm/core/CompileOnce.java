package dev.irisjvm.core;

import java.nio.file.Path;

/**
 * A process of KernelCompilerTest: compiles {@link KernelCompilerTest#SOURCE} for sm_90a into the
 * cache folder given as the first argument and prints {@code compiled} or {@code cached}; a failure
 * prints its message and exits 1.
 */
public final class CompileOnce {
    private CompileOnce() {}

    public static void main(String[] args) {
        try {
            CompiledModule m = KernelCompiler.forArchitecture("sm_90a").withCacheDirectory(Path.of(args[0]))
                    .compile("probe.cu", KernelCompilerTest.SOURCE);
            System.out.println(m.fromCache() ? "cached" : "compiled");
        } catch (RuntimeException e) {
            System.out.println(e.getMessage());
            System.exit(1);
        }
    }
}
