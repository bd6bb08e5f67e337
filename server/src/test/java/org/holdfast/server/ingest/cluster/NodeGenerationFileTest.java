package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code range-data/node-generation}: fixture bytes, none is 0, a file that does not read is refused (never read as none). */
class NodeGenerationFileTest {
    /** Generation 258, version 1. */
    private static final String FIXTURE = "48464e47" + "01" + "0000000000000102";

    @TempDir
    Path dir;

    @Test
    void fixtureBytes_readBackAndWrittenTheSame_noFileIsZero() throws Exception {
        Path rangeData = dir.resolve("range-data");
        assertThat(NodeGenerationFile.read(rangeData)).as("a fresh node").isZero();
        NodeGenerationFile.write(rangeData, 258);
        assertThat(HexFormat.of().formatHex(Files.readAllBytes(rangeData.resolve(NodeGenerationFile.FILE)))).isEqualTo(FIXTURE);
        assertThat(NodeGenerationFile.read(rangeData)).isEqualTo(258);
        NodeGenerationFile.write(rangeData, 259);
        assertThat(NodeGenerationFile.read(rangeData)).isEqualTo(259);
        try (var files = Files.list(rangeData)) {
            assertThat(files).as("no temporary file left").hasSize(1);
        }
    }

    @Test
    void unreadableFile_refusedSayingWhatToDo() throws Exception {
        Path rangeData = Files.createDirectories(dir.resolve("range-data"));
        Path f = rangeData.resolve(NodeGenerationFile.FILE);
        for (String bad : new String[] {"", FIXTURE.substring(2), "02" + FIXTURE.substring(2), "48464e4702" + FIXTURE.substring(10),
                "48464e4701" + "0000000000000000"}) {
            Files.write(f, HexFormat.of().parseHex(bad));
            assertThatThrownBy(() -> NodeGenerationFile.read(rangeData)).as(bad).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("does not read").hasMessageContaining("delete the file");
        }
        assertThatThrownBy(() -> NodeGenerationFile.write(rangeData, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
