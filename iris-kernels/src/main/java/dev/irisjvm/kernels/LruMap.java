package dev.irisjvm.kernels;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A map that keeps at most {@code entries} entries, dropping the least recently used one (a get or
 * a put is a use): the caches of encoded tensor maps and of GEMM schedules. Not thread-safe: its
 * owner synchronizes.
 *
 * <pre>{@code
 * Map<Key, TensorMap> maps = new LruMap<>(256);
 * }</pre>
 */
public final class LruMap<K, V> extends LinkedHashMap<K, V> {
    private final int entries;

    /** An empty map of at most {@code entries} entries. */
    public LruMap(int entries) {
        super(64, 0.75f, true);
        this.entries = entries;
    }

    @Override
    protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > entries;
    }
}
