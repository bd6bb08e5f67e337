package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateFileTest {
    static final int BS = 4096;
    static final long VOLUME = 100L * BS + 17;
    static final int BLOCKS = 101;

    @TempDir
    Path dir;

    private Path written(long sequence, byte[] fps) {
        Path p = StateFile.path(dir, "srv_7070", "vol");
        try (StateFile.Writer w = StateFile.Writer.create(p, BS, VOLUME)) {
            w.append(fps, 0, 60);
            w.append(fps, 60 * 32, BLOCKS - 60);
            w.commit(sequence, 1234);
        }
        return p;
    }

    private static byte[] fps() {
        byte[] b = new byte[BLOCKS * 32];
        new Random(5).nextBytes(b);
        return b;
    }

    @Test
    void load_committedFile_trustedWithSameFingerprints() {
        byte[] fps = fps();
        Path p = written(7, fps);
        StateFile.Loaded l = StateFile.load(p);
        assertThat(l.trusted()).as(l.reason()).isTrue();
        try (StateFile.PreviousState s = l.state()) {
            assertThat(s.sequence()).isEqualTo(7);
            assertThat(s.blockSize()).isEqualTo(BS);
            assertThat(s.volumeBytes()).isEqualTo(VOLUME);
            byte[] back = new byte[BLOCKS * 32];
            s.read(0, 50, back, 0);
            s.read(50, BLOCKS - 50, back, 50 * 32);
            assertThat(back).isEqualTo(fps);
        }
    }

    @Test
    void load_missing_untrustedWithReason() {
        StateFile.Loaded l = StateFile.load(dir.resolve("none.state"));
        assertThat(l.trusted()).isFalse();
        assertThat(l.reason()).contains("no state file");
    }

    @Test
    void load_tornBody_untrusted() throws Exception {
        Path p = written(3, fps());
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.setLength(f.length() - 1);
        }
        assertThat(StateFile.load(p).reason()).contains("torn");
    }

    @Test
    void load_tornHeader_untrusted() throws Exception {
        Path p = written(3, fps());
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.setLength(40);
        }
        assertThat(StateFile.load(p).trusted()).isFalse();
    }

    @Test
    void load_flippedHeaderBit_untrusted() throws Exception {
        Path p = written(3, fps());
        flip(p, 33); // inside the sequence
        assertThat(StateFile.load(p).reason()).contains("header is corrupt");
    }

    @Test
    void load_flippedFingerprintBit_untrusted() throws Exception {
        Path p = written(3, fps());
        flip(p, StateFile.HEADER_BYTES + 32 * 77 + 9);
        assertThat(StateFile.load(p).reason()).contains("fingerprints are corrupt");
    }

    @Test
    void load_otherFileFormat_untrusted() throws Exception {
        Path p = dir.resolve("x.state");
        Files.write(p, new byte[StateFile.HEADER_BYTES + BLOCKS * 32]);
        assertThat(StateFile.load(p).reason()).contains("not a Holdfast agent state file");
    }

    @Test
    void writer_closedWithoutCommit_keepsOldStateAndLeavesNoTemp() throws Exception {
        byte[] fps = fps();
        Path p = written(3, fps);
        byte[] before = Files.readAllBytes(p);
        try (StateFile.Writer w = StateFile.Writer.create(p, BS, VOLUME)) {
            w.append(new byte[32 * 10], 0, 10);
            // no commit: as if the backup failed or the agent died before COMMITTED
        }
        assertThat(Files.readAllBytes(p)).isEqualTo(before);
        try (var s = Files.list(p.getParent())) {
            assertThat(s).containsExactly(p);
        }
    }

    @Test
    void writer_copyFromPrevious_carriesFingerprints() {
        byte[] fps = fps();
        Path p = written(3, fps);
        Path next = StateFile.path(dir, "srv_7070", "vol2");
        try (StateFile.PreviousState prev = StateFile.load(p).state();
             StateFile.Writer w = StateFile.Writer.create(next, BS, VOLUME)) {
            w.copyFrom(prev, 40, new byte[32 * 7]);
            w.append(new byte[32], 0, 1);
            w.copyFrom(prev, BLOCKS - 41, new byte[32 * 7]);
            w.commit(4, 0);
        }
        try (StateFile.PreviousState s = StateFile.load(next).state()) {
            byte[] back = new byte[BLOCKS * 32];
            s.read(0, BLOCKS, back, 0);
            byte[] expected = fps.clone();
            java.util.Arrays.fill(expected, 40 * 32, 41 * 32, (byte) 0);
            assertThat(back).isEqualTo(expected);
        }
    }

    private static void flip(Path p, long at) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 1);
        }
    }

    private Path writtenWithId(long sequence, long snapshotId, StateFile.ChangeHashes hashes) {
        Path p = StateFile.path(dir, "srv_7070", "vol");
        byte[] fps = fps();
        try (StateFile.Writer w = StateFile.Writer.create(p, BS, VOLUME, hashes)) {
            w.append(fps, 0, BLOCKS);
            w.commit(sequence, 1234, snapshotId);
        }
        return p;
    }

    private static long longAt(Path p, long at) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "r")) {
            f.seek(at);
            return f.readLong();
        }
    }

    @Test
    void commit_format1WithSnapshotId_storedAtOffset52AndReadBack() throws Exception {
        Path p = writtenWithId(7, 0xfeedfacecafebeefL, null);
        assertThat(longAt(p, 52)).isEqualTo(0xfeedfacecafebeefL);
        try (StateFile.PreviousState s = StateFile.load(p).state()) {
            assertThat(s.formatVersion()).isEqualTo(1);
            assertThat(s.snapshotId()).isEqualTo(0xfeedfacecafebeefL);
        }
    }

    @Test
    void commit_format2WithSnapshotId_storedAtOffset72AndReadBack() throws Exception {
        Path p = writtenWithId(7, -5L, new StateFile.ChangeHashes(42, 1, 99));
        assertThat(longAt(p, 72)).isEqualTo(-5L);
        try (StateFile.PreviousState s = StateFile.load(p).state()) {
            assertThat(s.formatVersion()).isEqualTo(2);
            assertThat(s.snapshotId()).isEqualTo(-5L);
            assertThat(s.changeHashes()).isEqualTo(new StateFile.ChangeHashes(42, 1, 99));
        }
    }

    @Test
    void load_snapshotIdBytesChanged_headerCorrupt() throws Exception {
        Path p1 = writtenWithId(7, 12345, null);
        flip(p1, 59);
        assertThat(StateFile.load(p1).reason()).isEqualTo("state file header is corrupt");
        Path p2 = writtenWithId(7, 12345, new StateFile.ChangeHashes(42, 1, 99));
        flip(p2, 79);
        assertThat(StateFile.load(p2).reason()).isEqualTo("state file header is corrupt");
    }

    @Test
    void load_olderAgentsFileWithZeroInTheReservedBytes_trustedWithIdUnknown() throws Exception {
        Path p = written(7, fps()); // commit(sequence, at): what agents before protocol 5 wrote
        assertThat(longAt(p, 52)).isZero();
        StateFile.Loaded l = StateFile.load(p);
        assertThat(l.trusted()).as(l.reason()).isTrue();
        try (StateFile.PreviousState s = l.state()) {
            assertThat(s.snapshotId()).isZero();
            assertThat(s.sequence()).isEqualTo(7);
        }
    }

    @Test
    void writerCreate_missingStateDirectories_createdReadableOnlyByTheUser() throws Exception {
        Path p = written(1, fps());
        for (Path d = p.getParent(); !d.equals(dir); d = d.getParent()) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(d))).as(d.toString()).isEqualTo("rwx------");
        }
        assertThat(p.getParent()).isNotEqualTo(dir);
    }
}
