package dev.irisjvm.bench.rma;

import picocli.CommandLine.ITypeConverter;

/**
 * Turns "64k"-style sizes into bytes for picocli ({@link SizeList#parse}); the size options of
 * every sweep name it as their converter.
 *
 * <pre>{@code
 * @Option(names = "--max-bytes", converter = SizeConverter.class, defaultValue = "1g")
 * long maxBytes;   // 1073741824
 * }</pre>
 */
public final class SizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        return SizeList.parse(value);
    }
}
