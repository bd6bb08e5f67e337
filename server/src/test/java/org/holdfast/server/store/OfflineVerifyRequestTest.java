package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The offline fsck's verify request on disk: merged across runs, cleared only if unchanged, refused clearly when mangled. */
class OfflineVerifyRequestTest {
    @TempDir
    Path root;

    @Test
    void write_twice_mergesTheBlocks_andReadsBack() throws Exception {
        assertThat(OfflineVerifyRequest.read(root)).isNull();
        OfflineVerifyRequest.write(root, "fsck", new long[] {9, 3}, 1000);
        OfflineVerifyRequest r = OfflineVerifyRequest.write(root, "fsck", new long[] {3, 7}, 2000);
        assertThat(r.pbns()).containsExactly(3, 7, 9);
        OfflineVerifyRequest back = OfflineVerifyRequest.read(root);
        assertThat(back.pbns()).containsExactly(3, 7, 9);
        assertThat(back.requestedAtMillis()).isEqualTo(2000);
        assertThat(back.by()).isEqualTo("fsck");
        assertThat(back.full()).isFalse();
        try (var s = Files.list(root)) {
            assertThat(s.map(p -> p.getFileName().toString())).containsExactly(OfflineVerifyRequest.FILE);
        }
    }

    @Test
    void clear_afterANewerRequest_keepsTheNewerOne() {
        OfflineVerifyRequest older = OfflineVerifyRequest.write(root, "fsck", new long[] {1}, 1000);
        OfflineVerifyRequest newer = OfflineVerifyRequest.write(root, "fsck", new long[] {2}, 2000);
        older.clear(root);
        assertThat(OfflineVerifyRequest.read(root).pbns()).as("a pass that ran before the newer fsck").containsExactly(1, 2);
        newer.clear(root);
        assertThat(OfflineVerifyRequest.file(root)).doesNotExist();
    }

    @Test
    void read_mangledFile_refusedSayingWhatToDo() throws Exception {
        Files.writeString(OfflineVerifyRequest.file(root), "version=1\nrequestedAt=5\npbn=" + "9".repeat(80) + "\n");
        assertThatThrownBy(() -> OfflineVerifyRequest.read(root)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining(OfflineVerifyRequest.FILE).hasMessageContaining("delete the file").hasMessageContaining("full");
        Files.writeString(OfflineVerifyRequest.file(root), "version=2\nrequestedAt=5\n");
        assertThatThrownBy(() -> OfflineVerifyRequest.read(root)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("expected version 1");
        Files.writeString(OfflineVerifyRequest.file(root), "version=1\nrequestedAt=5\npbn=x\n");
        assertThatThrownBy(() -> OfflineVerifyRequest.read(root)).isInstanceOf(CorruptDataException.class);
    }

    @Test
    void write_overAMangledRequest_asksForAFullPass_insteadOfFailing() throws Exception {
        Files.writeString(OfflineVerifyRequest.file(root), "garbage\n");
        OfflineVerifyRequest r = OfflineVerifyRequest.write(root, "fsck", new long[] {4}, 1000);
        assertThat(r.full()).as("what the mangled one listed is unknown").isTrue();
        assertThat(OfflineVerifyRequest.read(root).full()).isTrue();
        assertThat(OfflineVerifyRequest.read(root).pbns()).containsExactly(4);
    }

    @Test
    void read_hugeFileWithoutLineBreaks_refusedBeforeReadingIt() throws Exception {
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(OfflineVerifyRequest.file(root).toFile(), "rw")) {
            f.setLength(3L << 30); // sparse: one 3 GiB "line"
        }
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> OfflineVerifyRequest.read(root)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("bytes");
        assertThat(System.nanoTime() - t0).as("not read").isLessThan(2_000_000_000L);
    }
}
