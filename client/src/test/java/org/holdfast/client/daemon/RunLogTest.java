package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.LeftoverRules;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The run log's files on a real disk: private to the daemon's user whatever the state directory's mode. */
class RunLogTest {
    @TempDir
    Path dir;

    private static RunRecord record(String result) {
        return new RunRecord("vol", "schedule", "2026-11-25T20:00:00Z", null, result, 1, null, 0, 0, 0, null, null, "m", null);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    @Test
    void runLog_stateDirectoryWorldReadable_runsAndMarkersCreatedPrivate() throws Exception {
        // a state-dir the operator made, or systemd's StateDirectory= without StateDirectoryMode=0700 (0755 then)
        Path state = Files.createDirectory(dir.resolve("state"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        RunLog log = new RunLog(state);
        log.begin(record("running"));
        assertThat(mode(state.resolve("running"))).isEqualTo("rwx------");
        assertThat(mode(state.resolve("running/vol.json"))).isEqualTo("rw-------");
        log.append(record(RunRecord.SUCCEEDED));
        assertThat(mode(state.resolve("runs.jsonl"))).isEqualTo("rw-------");
        for (int i = 0; i < 2 * RunLog.KEEP; i++) { // reaches the trim, which rewrites the file
            log.append(record(RunRecord.SUCCEEDED));
        }
        assertThat(new RunLog(state).readAll()).hasSizeLessThanOrEqualTo(2 * RunLog.KEEP);
        assertThat(mode(state.resolve("runs.jsonl"))).as("after the trim's rewrite").isEqualTo("rw-------");
    }

    @Test
    void runLog_leftoversOfKilledWrites_removedAtDaemonStart_liveOnesKept() throws Exception {
        Path state = Files.createDirectory(dir.resolve("state"));
        RunLog first = new RunLog(state);
        first.append(record(RunRecord.SUCCEEDED));
        first.begin(record("running")); // a run in progress: its marker must stay
        List<String> notices = new ArrayList<>();

        LeftoverRules.check(state, "runs.jsonl.", ".tmp", () -> new RunLog(state, notices::add), notices);
        LeftoverRules.check(state.resolve("running"), "vm-1.json.", ".tmp", () -> new RunLog(state, notices::add), notices);

        // an older daemon's fixed temporary names: this one holds the directory's lock, nobody else writes them
        Files.writeString(state.resolve("runs.jsonl.tmp"), "x");
        Files.writeString(state.resolve("running/vol.json.tmp"), "x");
        RunLog next = new RunLog(state, notices::add);
        assertThat(state.resolve("runs.jsonl.tmp")).doesNotExist();
        assertThat(state.resolve("running/vol.json.tmp")).doesNotExist();
        assertThat(next.readAll()).hasSize(1);
        assertThat(state.resolve("running/vol.json")).as("a real run marker is no leftover").exists();
        try (var files = Files.list(state.resolve("running"))) {
            assertThat(files).containsExactly(state.resolve("running/vol.json"));
        }
    }
}
