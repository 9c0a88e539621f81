package dev.irisjvm.core.env;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobTokenSourceTest {
    @TempDir
    Path dir;

    @Test
    void aPrivateFileHoldsTheSecret() throws IOException {
        Path file = secretFile("s3cret-from-file\n", "rw-------");
        RankEnvironment env = RankEnvironment.fromEnvironment(Map.of("IRIS_JOB_TOKEN_FILE", file.toString()));
        assertEquals("s3cret-from-file", env.jobToken());
        assertEquals("s3cret-from-file", JobTokenSource.read(Map.of("IRIS_JOB_TOKEN_FILE", file.toString())));
        assertEquals("", JobTokenSource.read(Map.of()));
        assertEquals("", JobTokenSource.read(Map.of("IRIS_JOB_TOKEN_FILE", " ")));
    }

    @Test
    void theVariableWinsOverTheFile() throws IOException {
        Path file = secretFile("from-file", "rw-------");
        assertEquals("from-launcher", JobTokenSource.read(
                Map.of("IRIS_JOB_TOKEN", "from-launcher", "IRIS_JOB_TOKEN_FILE", file.toString())));
    }

    @Test
    void aFileOthersCanReadOrWriteIsRefused() throws IOException {
        for (String perms : new String[] {"rw-r--r--", "rw-r-----", "rw----r--", "rw--w----"}) {
            Path file = secretFile("x", perms);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> JobTokenSource.read(Map.of("IRIS_JOB_TOKEN_FILE", file.toString())));
            assertEquals("IRIS_JOB_TOKEN_FILE='" + file + "' has permissions " + perms + ": a job secret must be"
                    + " readable only by its owner, and this one is open to group or others; run chmod 600 '"
                    + file + "'", e.getMessage());
            Files.delete(file);
        }
    }

    @Test
    void missingEmptyOrHugeFilesAreRefusedNamingTheVariable() throws IOException {
        String missing = dir.resolve("nope").toString();
        assertTrue(message(missing).startsWith("IRIS_JOB_TOKEN_FILE='" + missing + "' does not name a regular file"),
                message(missing));
        assertTrue(message(dir.toString()).contains("does not name a regular file"));
        Path empty = secretFile(" \n", "rw-------");
        assertTrue(message(empty.toString()).endsWith("is empty; write the job's secret into it, e.g."
                + " head -c 32 /dev/urandom | base64 > '" + empty + "'"), message(empty.toString()));
        Files.delete(empty);
        Path huge = secretFile("x".repeat(JobTokenSource.MAX_FILE_BYTES + 1), "r--------");
        assertTrue(message(huge.toString()).contains("holds 4097 bytes, more than the 4096"), message(huge.toString()));
    }

    private String message(String file) {
        return assertThrows(IllegalArgumentException.class,
                () -> RankEnvironment.fromEnvironment(Map.of("IRIS_JOB_TOKEN_FILE", file))).getMessage();
    }

    private Path secretFile(String content, String perms) throws IOException {
        Path file = dir.resolve("secret");
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(perms));
        return file;
    }
}
