package org.holdfast.client.qcow2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Choosing the source format, refusing bad combinations, and which bitmaps a volume owns. */
class Qcow2BackupTest {
    @TempDir
    Path dir;
    final List<String> notices = new ArrayList<>();

    Path state(String volume) {
        return dir.resolve("state").resolve("10.0.0.5_8481").resolve(volume + ".state");
    }

    @Test
    void auto_readsQcow2ByItsMagic_andAnythingElseAsRaw() throws Exception {
        Path q = Files.write(dir.resolve("a.img"), new byte[] {'Q', 'F', 'I', (byte) 0xfb, 0, 0, 0, 3});
        Path raw = Files.write(dir.resolve("b.img"), new byte[] {'Q', 'F', 'I', 0});
        assertThat(Qcow2Backup.choose(q, "auto", false, state("v"), notices::add)).isNotNull();
        assertThat(Qcow2Backup.choose(raw, "auto", false, state("v"), notices::add)).isNull();
        assertThat(Qcow2Backup.choose(q, "raw", false, state("v"), notices::add)).isNull();
        assertThat(Qcow2Backup.choose(raw, "QCOW2", false, state("v"), notices::add)).isNotNull();
    }

    @Test
    void badFormat_orBitmapOnRaw_isAUsageError() throws Exception {
        Path raw = Files.write(dir.resolve("b.img"), new byte[8]);
        assertThatThrownBy(() -> Qcow2Backup.choose(raw, "vmdk", false, state("v"), notices::add))
                .isInstanceOf(AgentException.class).hasMessageContaining("--format vmdk")
                .satisfies(e -> assertThat(((AgentException) e).exitCode()).isEqualTo(ExitCode.USAGE));
        assertThatThrownBy(() -> Qcow2Backup.choose(raw, "auto", true, state("v"), notices::add))
                .isInstanceOf(AgentException.class).hasMessageContaining("--dirty-bitmap needs a qcow2 image");
    }

    @Test
    void aVolumeOwnsOnlyItsOwnBitmaps() throws Exception {
        Path q = Files.write(dir.resolve("a.img"), new byte[] {'Q', 'F', 'I', (byte) 0xfb});
        Qcow2Backup a = Qcow2Backup.choose(q, "qcow2", true, state("vm-a"), notices::add);
        Qcow2Backup ab = Qcow2Backup.choose(q, "qcow2", true, state("vm-a-b"), notices::add);
        String mine = a.bitmapPrefix() + "0123456789abcdef";
        String theirs = ab.bitmapPrefix() + "0123456789abcdef";
        assertThat(a.bitmapPrefix()).isEqualTo("holdfast-10.0.0.5_8481-vm-a-");
        assertThat(a.owns(mine)).isTrue();
        assertThat(a.owns(theirs)).as("vm-a-b's bitmap is not vm-a's").isFalse();
        assertThat(a.owns("holdfast-10.0.0.5_8481-vm-a-manual")).isFalse();
        assertThat(ab.owns(theirs)).isTrue();
    }
}
