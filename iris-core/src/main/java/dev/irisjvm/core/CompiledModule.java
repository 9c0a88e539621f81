package dev.irisjvm.core;

/**
 * Machine code that {@link KernelCompiler} produced (or found in its cache) for one architecture:
 * a cubin, which {@link #load()} puts on the current GPU, or which can be stored and loaded later
 * with {@link DeviceModule#load(byte[], String)}.
 *
 * <pre>{@code
 * CompiledModule c = KernelCompiler.forArchitecture("sm_90a").compile("mine.cu", source);
 * Files.write(Path.of("mine.cubin"), c.image());
 * }</pre>
 */
public final class CompiledModule {
    private final String name;
    private final String architecture;
    private final byte[] image;
    private final String log;
    private final String cacheKey;
    private final boolean fromCache;

    CompiledModule(String name, String architecture, byte[] image, String log, String cacheKey, boolean fromCache) {
        this.name = name;
        this.architecture = architecture;
        this.image = image;
        this.log = log;
        this.cacheKey = cacheKey;
        this.fromCache = fromCache;
    }

    /** The source's name, e.g. {@code allreduce.cu}. */
    public String name() {
        return name;
    }

    /** The architecture the code is for, e.g. {@code sm_90a}. */
    public String architecture() {
        return architecture;
    }

    /** The cubin's bytes (a copy). */
    public byte[] image() {
        return image.clone();
    }

    /** The compiler's warnings; empty when it said nothing or the code came from the cache. */
    public String log() {
        return log;
    }

    /** The cache key: a SHA-256 over source, options, headers, architecture and versions. */
    public String cacheKey() {
        return cacheKey;
    }

    /** Whether the code came from the disk cache rather than the compiler. */
    public boolean fromCache() {
        return fromCache;
    }

    /** Loads the code into the current GPU. */
    public DeviceModule load() {
        return DeviceModule.load(image, name);
    }

    @Override
    public String toString() {
        return name + " for " + architecture + " (" + image.length + " bytes" + (fromCache ? ", cached" : "") + ")";
    }
}
