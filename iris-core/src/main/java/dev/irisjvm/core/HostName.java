package dev.irisjvm.core;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** This machine's name, as ranks compare it to tell whether they share a host. */
final class HostName {
    private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

    private HostName() {}

    /** The kernel's host name where Linux says it (no DNS lookup), else the JDK's. */
    static String local() {
        try {
            String name = Files.readString(KERNEL_HOSTNAME).strip();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException | SecurityException notLinux) {
            // fall through
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
