package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.holdfast.server.jobs.CancelAfterChecks;
import org.holdfast.server.jobs.JobCancelledException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rebuild's first pass, which counts the blocks below its limit for the job's progress, on a real
 * data store: it counts page by page with a safe point before each, so a rebuild cancelled while it
 * counts a large store stops after the page it is in, not after the whole location index.
 */
class WorkerIndexRebuildCountTest {
    @TempDir
    Path dir;

    @Test
    void countBelow_pagesWithSafePoints_countsBelowTheLimitAndStopsWhenCancelled() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 16, 0), db);
            try {
                byte[] fp = new byte[32];
                long first = 0;
                for (int i = 0; i < 35; i++) {
                    fp[0] = (byte) i;
                    byte[] payload = new byte[100 + i];
                    long pbn = store.append(fp, 0, payload, 0, payload.length, FormatVersions.CODEC_RAW, 4096);
                    first = i == 0 ? pbn : first;
                }
                store.sync();
                long limit = first + 30; // the 30 blocks stored when the rebuild started

                CancelAfterChecks never = CancelAfterChecks.never();
                long[] total = WorkerIndexRebuildJobs.countBelow(store.locations(), limit, 10, never);
                assertThat(total[0]).isEqualTo(30);
                assertThat(total[1]).isEqualTo(30 * 100 + 29 * 30 / 2);
                assertThat(never.checks()).as("a safe point per page of 10, and one for the empty last page").isEqualTo(4);

                CancelAfterChecks cancelled = new CancelAfterChecks(1);
                assertThatThrownBy(() -> WorkerIndexRebuildJobs.countBelow(store.locations(), limit, 10, cancelled))
                        .isInstanceOf(JobCancelledException.class);
                assertThat(cancelled.checks()).as("stopped before the second page").isEqualTo(2);
            } finally {
                store.close();
            }
        }
    }
}
