package dev.irisjvm.kernels;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.internal.TensorMap;
import java.util.Map;

/**
 * The tiled 2-D tensor maps an operation has encoded, keyed by everything that goes into the
 * encoding: a map is encoded on the host the first time it is asked for, and the least recently
 * used ones are dropped beyond a limit. Not thread-safe: its owner synchronizes.
 *
 * <pre>{@code
 * TensorMapCache maps = new TensorMapCache(256, 128);
 * TensorMap a = maps.tiled2d(DType.BF16, address, k, m, k * 2L, 64, 128);  // encoded once, then cached
 * }</pre>
 */
public final class TensorMapCache {
    /** What identifies a tensor map: everything that goes into its encoding (the swizzle is the cache's). */
    private record Key(DType type, long base, long inner, long outer, long strideBytes, int boxInner, int boxOuter) {}

    private final int swizzleBytes;
    private final Map<Key, TensorMap> maps;

    /** A cache of at most {@code entries} maps, all encoded with {@code swizzleBytes} of shared-memory swizzle. */
    public TensorMapCache(int entries, int swizzleBytes) {
        this.swizzleBytes = swizzleBytes;
        this.maps = new LruMap<>(entries);
    }

    /**
     * {@link TensorMap#tiled2d} of these arguments and the cache's swizzle: the cached map, or a new
     * one, encoded and cached (nothing is cached when encoding throws).
     */
    public TensorMap tiled2d(DType type, long base, long inner, long outer, long strideBytes, int boxInner, int boxOuter) {
        Key key = new Key(type, base, inner, outer, strideBytes, boxInner, boxOuter);
        TensorMap m = maps.get(key);
        if (m == null) {
            m = TensorMap.tiled2d(type, base, inner, outer, strideBytes, boxInner, boxOuter, swizzleBytes);
            maps.put(key, m);
        }
        return m;
    }

    /** Maps cached now. */
    public int size() {
        return maps.size();
    }

    /** Drops every map. */
    public void clear() {
        maps.clear();
    }
}
