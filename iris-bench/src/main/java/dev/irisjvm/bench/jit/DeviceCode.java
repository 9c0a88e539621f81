package dev.irisjvm.bench.jit;

import java.util.ArrayList;
import java.util.List;

/**
 * CUDA C++ source with its comments taken out, line by line: what the device-line counts count. A
 * line is code when anything but blanks is left of it once its comments are gone ({@code //} to the
 * end of the line, {@code /* ... *}{@code /} anywhere, across lines too); preprocessor lines are
 * code. Comment markers inside string and character literals are text.
 *
 * <pre>{@code
 * DeviceCode code = DeviceCode.of("// a kernel\n__global__ void k() {}  // empty\n\n");
 * code.lines();       // ["", "__global__ void k() {}  ", ""]
 * code.codeLines();   // 1
 * }</pre>
 */
public final class DeviceCode {
    private final List<String> lines;

    private DeviceCode(List<String> lines) {
        this.lines = List.copyOf(lines);
    }

    /** The source's lines without their comments, as many lines as the source has. */
    public static DeviceCode of(String source) {
        List<String> out = new ArrayList<>();
        boolean inBlock = false;
        for (String line : source.split("\n", -1)) {
            StringBuilder code = new StringBuilder();
            char quote = 0;
            for (int i = 0; i < line.length(); i++) {
                char c = line.charAt(i);
                char next = i + 1 < line.length() ? line.charAt(i + 1) : 0;
                if (inBlock) {
                    if (c == '*' && next == '/') {
                        inBlock = false;
                        i++;
                    }
                } else if (quote != 0) {
                    code.append(c);
                    if (c == '\\' && next != 0) {
                        code.append(next);
                        i++;
                    } else if (c == quote) {
                        quote = 0;
                    }
                } else if (c == '/' && next == '/') {
                    break;
                } else if (c == '/' && next == '*') {
                    inBlock = true;
                    i++;
                } else {
                    if (c == '"' || c == '\'') {
                        quote = c;
                    }
                    code.append(c);
                }
            }
            out.add(code.toString());
        }
        if (source.endsWith("\n")) {
            out.remove(out.size() - 1);  // the newline ends the last line; it starts none
        }
        return new DeviceCode(out);
    }

    /** Every line, comments removed (a comment-only line is empty). */
    public List<String> lines() {
        return lines;
    }

    /** Lines with code on them: neither blank nor comment only. */
    public int codeLines() {
        return (int) lines.stream().filter(DeviceCode::isCode).count();
    }

    static boolean isCode(String codeOnly) {
        return !codeOnly.isBlank();
    }
}
