package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChangeHashPolicyTest {
    static final long NOW = 1_800_000_000_000L;

    @TempDir
    Path dir;

    private StateFile.PreviousState state(StateFile.ChangeHashes hashes) {
        Path p = dir.resolve("v" + System.nanoTime() + ".state");
        try (StateFile.Writer w = StateFile.Writer.create(p, 4096, 4096 * 3, hashes)) {
            w.append(new byte[3 * 32], 0, 3);
            w.commit(5, NOW);
        }
        StateFile.Loaded l = StateFile.load(p);
        assertThat(l.trusted()).as(l.reason()).isTrue();
        return l.state();
    }

    @Test
    void rehashReason_recentState_keepsStoredSha256() {
        try (StateFile.PreviousState s = state(new StateFile.ChangeHashes(9, 30, NOW - Duration.ofDays(6).toMillis()))) {
            assertThat(s.changeHashes()).isEqualTo(new StateFile.ChangeHashes(9, 30, NOW - Duration.ofDays(6).toMillis()));
            assertThat(ChangeHashPolicy.DEFAULT.rehashReason(s, NOW)).isNull();
        }
    }

    @Test
    void rehashReason_lastRehashOlderThanDays_rehashes() {
        try (StateFile.PreviousState s = state(new StateFile.ChangeHashes(9, 1, NOW - Duration.ofDays(7).toMillis()))) {
            assertThat(ChangeHashPolicy.DEFAULT.rehashReason(s, NOW)).contains("older than 7 days");
            assertThat(new ChangeHashPolicy(true, 32, 0).rehashReason(s, NOW)).isNull();
        }
    }

    @Test
    void rehashReason_nthBackup_rehashes() {
        try (StateFile.PreviousState s = state(new StateFile.ChangeHashes(9, 31, NOW))) {
            assertThat(ChangeHashPolicy.DEFAULT.rehashReason(s, NOW)).contains("backup 32").contains("--rehash-every 32");
            assertThat(new ChangeHashPolicy(true, 0, 7).rehashReason(s, NOW)).isNull();
        }
    }

    @Test
    void rehashReason_rehashDatedInFuture_rehashes() {
        try (StateFile.PreviousState s = state(new StateFile.ChangeHashes(9, 0, NOW + Duration.ofDays(3).toMillis()))) {
            assertThat(ChangeHashPolicy.DEFAULT.rehashReason(s, NOW)).contains("future");
        }
    }

    @Test
    void rehashReason_formatOneState_rehashes() {
        try (StateFile.PreviousState s = state(null)) {
            assertThat(ChangeHashPolicy.DEFAULT.rehashReason(s, NOW)).contains("no cheap hashes");
            assertThat(ChangeHashPolicy.SHA256.rehashReason(s, NOW)).contains("SHA-256");
        }
    }
}
