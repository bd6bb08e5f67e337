package org.holdfast.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IoReasonsTest {
    @TempDir
    Path dir;

    @Test
    void reason_typedExceptionsWithoutReason_namedInOsWords() {
        assertThat(IoReasons.reason(new AccessDeniedException("/dev/sdb"))).isEqualTo("permission denied");
        assertThat(IoReasons.reason(new NoSuchFileException("/x/y"))).isEqualTo("no such file or directory");
    }

    @Test
    void reason_fileSystemExceptionReason_matchedCaseInsensitively() {
        FileSystemException busy = new FileSystemException("/dev/sdb", null, "Device or resource busy");
        assertThat(IoReasons.reason(busy)).isEqualTo("device or resource busy");
        assertThat(IoReasons.advice(busy, Path.of("/dev/sdb"), "fallback")).contains("/dev/sdb").contains("unmount");
        IOException full = new IOException("No space left on device");
        assertThat(IoReasons.reason(full)).isEqualTo("no space left on device");
        assertThat(IoReasons.advice(full, Path.of("/t/x.img"), "fallback")).contains("free space").contains("/t/x.img");
    }

    @Test
    void reason_randomAccessFileStyle_reasonInParenthesesKept() {
        assertThat(IoReasons.reason(new FileNotFoundException("/a/b (Some new reason)"))).isEqualTo("some new reason");
        assertThat(IoReasons.reason(new FileNotFoundException("/a/b (Permission denied)"))).isEqualTo("permission denied");
    }

    @Test
    void failure_unknownReason_fallbackAdviceAndMessageWithoutClassName() {
        AgentException e = IoReasons.localIo("cannot open target", Path.of("/t"), new IOException("Strange thing"), "do X");
        assertThat(e.exitCode()).isEqualTo(ExitCode.LOCAL_IO);
        assertThat(e.getMessage()).isEqualTo("cannot open target /t: Strange thing");
        assertThat(e.hint()).isEqualTo("do X");
    }

    @Test
    void failure_connectionRefused_networkExitAndAgentPortAdvice() {
        AgentException e = IoReasons.failure(ExitCode.NETWORK, "cannot connect to", "h:7070",
                new ConnectException("Connection refused: h/127.0.0.1:7070"), "fallback");
        assertThat(e.getMessage()).isEqualTo("cannot connect to h:7070: connection refused");
        assertThat(e.hint()).contains("7070").contains("server is running");
    }

    @Test
    void reason_realMissingFile_noSuchFile() {
        Path missing = dir.resolve("missing");
        try {
            Files.newInputStream(missing).close();
        } catch (IOException e) {
            assertThat(IoReasons.reason(e)).isEqualTo("no such file or directory");
            assertThat(IoReasons.advice(e, missing, "fallback")).contains(missing.toString());
            return;
        }
        throw new AssertionError("opening a missing file succeeded");
    }

    @Test
    void unexplained_ioExceptionNamingAFile_localIoWithTheFileAndReason() {
        AgentException e = IoReasons.unexplained(new AccessDeniedException("/srv/x"));
        assertThat(e.exitCode()).isEqualTo(ExitCode.LOCAL_IO);
        assertThat(e.getMessage()).contains("/srv/x").contains("permission denied").doesNotContain("Exception");
    }
}
