package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Consumer;
import java.util.function.Supplier;
import picocli.CommandLine;

/**
 * A sweep's option class in a test: parsed as its command parses it, and checked that a bad value
 * fails its validation with a message that names it.
 *
 * <pre>{@code
 * OptionsUnderTest<MoeOptions> moe = new OptionsUnderTest<>(MoeOptions::new, MoeOptions::validate);
 * moe.parse("--tokens", "128").cases();
 * moe.rejects("--tokens: 'many' is not a number", "--tokens", "many");
 * }</pre>
 */
public final class OptionsUnderTest<T> {
    private final Supplier<T> make;
    private final Consumer<T> validate;

    public OptionsUnderTest(Supplier<T> make, Consumer<T> validate) {
        this.make = make;
        this.validate = validate;
    }

    /** Fresh options with {@code args} parsed into them (not validated). */
    public T parse(String... args) {
        T options = make.get();
        new CommandLine(options).parseArgs(args);
        return options;
    }

    /** Fresh options with {@code args} parsed into them and validated. */
    public T valid(String... args) {
        T options = parse(args);
        validate.accept(options);
        return options;
    }

    /** Asserts that the options of {@code args} fail validation with a message that contains {@code expected}. */
    public void rejects(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> valid(args));
        assertTrue(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' should say '" + expected + "'");
    }
}
