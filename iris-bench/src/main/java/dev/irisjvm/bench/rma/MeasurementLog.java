package dev.irisjvm.bench.rma;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.core.Iris;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The measurements this rank made, each tagged with its point number, and their merge across ranks
 * into one list in sweep order (point, then issuer).
 *
 * <pre>{@code
 * log.add(point, measurement);
 * List<Measurement> all = log.gather(iris);   // collective; every rank gets the whole list
 * }</pre>
 */
public final class MeasurementLog {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A measurement and the point it belongs to. */
    public record Entry(long point, Measurement measurement) {}

    private final List<Entry> entries = new ArrayList<>();

    public synchronized void add(long point, Measurement m) {
        entries.add(new Entry(point, m));
    }

    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** Collective: every rank's entries, merged in sweep order. */
    public List<Measurement> gather(Iris iris) {
        byte[][] all = iris.allGather(encode(entries()));
        List<Entry> merged = new ArrayList<>();
        for (byte[] one : all) {
            merged.addAll(decode(one));
        }
        return order(merged);
    }

    /** Sorted by point, then issuer; the original order breaks ties. */
    static List<Measurement> order(List<Entry> entries) {
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingLong(Entry::point).thenComparingInt(e -> e.measurement().issuer()));
        List<Measurement> out = new ArrayList<>();
        for (Entry e : sorted) {
            out.add(e.measurement());
        }
        return out;
    }

    static byte[] encode(List<Entry> entries) {
        try {
            return JSON.writeValueAsBytes(entries);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot encode measurements", e);
        }
    }

    static List<Entry> decode(byte[] bytes) {
        try {
            return JSON.readValue(bytes, new TypeReference<List<Entry>>() {});
        } catch (IOException e) {
            throw new UncheckedIOException("cannot decode measurements", e);
        }
    }
}
