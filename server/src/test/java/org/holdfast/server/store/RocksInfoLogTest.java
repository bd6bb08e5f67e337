package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.System.Logger.Level;
import org.junit.jupiter.api.Test;
import org.rocksdb.InfoLogLevel;

/** The levels RocksDB's info log lines get in the server log. */
class RocksInfoLogTest {

    @Test
    void levelOf_tailPrefetchNote_isDebug() {
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.WARN_LEVEL,
                "[/srv/holdfast/catalog/000012.sst] Tail prefetch size 4096 is calculated based on heuristics."))
                .isEqualTo(Level.DEBUG);
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.WARN_LEVEL,
                "Tail prefetch size 524288 is calculated based on TailPrefetchStats"))
                .isEqualTo(Level.DEBUG);
    }

    @Test
    void levelOf_unverifiedUniqueIdNoteOfTheChecksumPass_isDebug() {
        // logged once per process at every start with data: the checksum pass opens table files outside the manifest
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.WARN_LEVEL,
                "[ble/block_based/block_based_table_reader.cc:970] At least one SST file opened without unique ID to verify: 0.sst"))
                .isEqualTo(Level.DEBUG);
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.WARN_LEVEL, "Another ~1000 SST files opened without unique ID to verify"))
                .isEqualTo(Level.DEBUG);
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.ERROR_LEVEL,
                "Corruption: SST file 000012.sst unique ID mismatch: expected {1,2}, actual {3,4}")).isEqualTo(Level.ERROR);
    }

    @Test
    void levelOf_realWarningsAndErrors_keepTheirLevel() {
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.ERROR_LEVEL,
                "Corruption: block checksum mismatch: stored = 1, computed = 2 in 000012.sst"))
                .isEqualTo(Level.ERROR);
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.FATAL_LEVEL, "IO error: No space left on device")).isEqualTo(Level.ERROR);
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.WARN_LEVEL, "Stalling writes because we have 20 level-0 files"))
                .isEqualTo(Level.WARNING);
        // a tail-prefetch note raised to an error is an error
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.ERROR_LEVEL, "Tail prefetch size 4096 is calculated based on heuristics"))
                .isEqualTo(Level.ERROR);
    }

    @Test
    void levelOf_infoAndHeaderLines_areNotKept() {
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.INFO_LEVEL, "Options.max_open_files: -1")).isEqualTo(Level.OFF);
        assertThat(RocksInfoLog.levelOf(InfoLogLevel.HEADER_LEVEL, "RocksDB version: 9.0.0")).isEqualTo(Level.OFF);
    }
}
