package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.common.tls.CertificateFingerprint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KnownServersTest {
    private static final CertificateFingerprint A = CertificateFingerprint.parse("11".repeat(32));
    private static final CertificateFingerprint B = CertificateFingerprint.parse("22".repeat(32));
    private static final ServerAddress ONE = new ServerAddress("backup.example", 7070);
    private static final ServerAddress TWO = new ServerAddress("127.0.0.1", 7071);

    @TempDir
    Path dir;

    @Test
    void lookup_noFile_empty() {
        assertThat(new KnownServers(dir.resolve("missing")).lookup(ONE)).isEmpty();
    }

    @Test
    void remember_twoServers_eachLookedUpByAddress() throws Exception {
        KnownServers k = new KnownServers(dir.resolve("sub/known-servers"));
        k.remember(ONE, A);
        k.remember(TWO, B);
        assertThat(k.lookup(ONE)).contains(A);
        assertThat(k.lookup(TWO)).contains(B);
        assertThat(k.lookup(new ServerAddress("backup.example", 7071))).isEmpty();
        assertThat(Files.readString(k.file())).contains("backup.example:7070 " + A).contains("127.0.0.1:7071 " + B);
    }

    @Test
    void remember_sameServerAgain_replacesItsLineOnly() throws Exception {
        KnownServers k = new KnownServers(dir.resolve("known-servers"));
        k.remember(ONE, A);
        k.remember(TWO, A);
        k.remember(ONE, B);
        assertThat(k.lookup(ONE)).contains(B);
        assertThat(k.lookup(TWO)).contains(A);
        assertThat(Files.readAllLines(k.file()).stream().filter(l -> l.startsWith("backup.example:7070"))).hasSize(1);
    }

    @Test
    void lookup_malformedLine_localIoErrorNamingTheLine() throws Exception {
        Path f = dir.resolve("known-servers");
        Files.writeString(f, "# comment\nbackup.example:7070 not-a-fingerprint\n");
        assertThatThrownBy(() -> new KnownServers(f).lookup(ONE)).isInstanceOf(AgentException.class)
                .hasMessageContaining("line 2").satisfies(e -> assertThat(((AgentException) e).exitCode()).isEqualTo(ExitCode.LOCAL_IO));
    }

    @Test
    void remember_missingDirectories_createdReadableOnlyByTheUser() throws Exception {
        // a fresh HOME: ~/.local/state/holdfast does not exist yet (umask 022 would make it 0755)
        KnownServers k = new KnownServers(dir.resolve("home/.local/state/holdfast/known-servers"));
        k.remember(ONE, A);
        for (String d : new String[] {"home", "home/.local", "home/.local/state", "home/.local/state/holdfast"}) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(d)))).as(d).isEqualTo("rwx------");
        }
    }

    @Test
    void removeLeftovers_copyOfAKilledRemember_removed_liveAgentsCopyKept() throws Exception {
        Path f = dir.resolve("known-servers");
        new KnownServers(f).remember(ONE, A);
        java.util.List<String> notices = new java.util.ArrayList<>();

        org.holdfast.client.LeftoverRules.check(dir, "known-servers.", ".tmp", () -> KnownServers.removeLeftovers(f, notices::add),
                notices);

        assertThat(new KnownServers(f).lookup(ONE)).as("the file itself untouched").contains(A);
    }
}
