package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daemon's reported runs in the agent record (version 2), next to the version 1 records it must keep reading. */
class AgentRunRecordTest {
    /** An agent record as servers before run reports wrote it (version 1): one volume result, no runs. */
    private static final String V1_VALUE = "01000764622d686f7374000d31302e302e302e313a353030300014686f6c64666173742d6167656e74"
            + "2f312e3240780003312e32000000000000000a000000000000001400000000000000030001000364623101000a736e617073686f7420340000"
            + "000000001000000000000000000f";

    @TempDir
    Path dir;

    private static AgentStore.Run run(String volume, String result, long at) {
        return new AgentStore.Run(volume, "schedule", at - 5, at, result, result.equals("succeeded") ? 0 : 4, 1, 4096, 512,
                result.equals("succeeded") ? at : 0, 2, "run " + at, "0.1.0", at);
    }

    @Test
    void decode_version1Record_readsResultsAndNoRuns() {
        AgentStore.Agent a = AgentStore.decode("id1", HexFormat.of().parseHex(V1_VALUE), "db");
        assertThat(a).isEqualTo(new AgentStore.Agent("id1", "db-host", "10.0.0.1:5000", "holdfast-agent/1.2@x", "1.2", 10, 20, 3,
                List.of(new AgentStore.VolumeResult("db1", true, "snapshot 4", 4096, 15))));
        assertThat(a.runs()).isEmpty();
    }

    @Test
    void encode_withRuns_roundTripsAsVersion2() {
        AgentStore.Agent a = new AgentStore.Agent("id1", "db-host", "h:1", "holdfast-agent/0.1.0@h", "0.1.0", 10, 20, 3,
                List.of(new AgentStore.VolumeResult("db1", true, "snapshot 4", 4096, 15)),
                List.of(run("db1", "failed", 100), run("db1", "succeeded", 90)));
        byte[] v = AgentStore.encode(a);
        assertThat(v[0]).isEqualTo((byte) 2);
        assertThat(AgentStore.decode("id1", v, "db")).isEqualTo(a);
    }

    @Test
    void run_unknownToken_writesNothing() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            AgentStore s = new AgentStore(db);
            assertThat(s.run("nobody", run("v", "failed", 1))).isFalse();
            assertThat(s.list()).isEmpty();
        }
    }

    @Test
    void run_manyRunsOfOneVolume_keepsTheNewestPerVolumeAndOtherVolumes() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            AgentStore s = new AgentStore(db);
            s.contact("t1", "one", "a", "agent", "", 1);
            s.run("t1", run("other", "succeeded", 5));
            for (int i = 0; i < AgentStore.MAX_RUNS_PER_VOLUME + 5; i++) {
                s.run("t1", run("busy", i % 2 == 0 ? "succeeded" : "failed", 10 + i));
            }
            s.contact("t1", "one", "a", "agent", "", 100); // a later connection keeps the runs
            List<AgentStore.Run> runs = s.get("t1").orElseThrow().runs();
            assertThat(runs.stream().filter(r -> r.volume().equals("busy"))).hasSize(AgentStore.MAX_RUNS_PER_VOLUME);
            assertThat(runs.get(0).endMillis()).as("most recent first").isEqualTo(10 + AgentStore.MAX_RUNS_PER_VOLUME + 4);
            assertThat(runs).extracting(AgentStore.Run::volume).contains("other");
        }
    }
}
