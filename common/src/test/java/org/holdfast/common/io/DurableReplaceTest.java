package org.holdfast.common.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableReplaceTest {

    @TempDir
    Path tmp;

    @Test
    void write_missingDirectory_createsItAndLeavesNoTemporary() throws IOException {
        Path dir = tmp.resolve("a/b");
        DurableReplace.write(dir, "rec", bytes("first"));
        assertThat(Files.readString(dir.resolve("rec"))).isEqualTo("first");
        assertThat(dir.resolve("rec.tmp")).doesNotExist();
    }

    @Test
    void write_overLongerFileAndLeftoverTemporary_holdsExactlyTheNewBytes() throws IOException {
        Files.writeString(tmp.resolve("rec"), "an older and longer record");
        Files.writeString(tmp.resolve("rec.tmp"), "a torn temporary from an earlier crash, longer still");
        ByteBuffer content = bytes("xxnew");
        content.position(2); // only position to limit is written
        DurableReplace.write(tmp, "rec", content);
        assertThat(Files.readString(tmp.resolve("rec"))).isEqualTo("new");
        assertThat(content.hasRemaining()).isFalse();
        assertThat(tmp.resolve("rec.tmp")).doesNotExist();
    }

    @Test
    void write_renameRefused_throwsAndKeepsWhatTheNameHeld() throws IOException {
        // the name is taken by a non-empty directory: the rename fails, and what was there must survive
        Path taken = Files.createDirectories(tmp.resolve("rec"));
        Files.writeString(taken.resolve("keep"), "kept");
        assertThatThrownBy(() -> DurableReplace.write(tmp, "rec", bytes("new"))).isInstanceOf(IOException.class);
        assertThat(Files.readString(taken.resolve("keep"))).isEqualTo("kept");
    }

    @Test
    void write_directoryIsAFile_throwsAndChangesNothing() throws IOException {
        Path notDir = Files.writeString(tmp.resolve("plain"), "plain");
        assertThatThrownBy(() -> DurableReplace.write(notDir, "rec", bytes("new"))).isInstanceOf(IOException.class);
        assertThat(Files.readString(notDir)).isEqualTo("plain");
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
    }
}
