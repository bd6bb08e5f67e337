package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An empty store takes little disk: RocksDB may not preallocate its write-ahead log or manifest. */
class IdleFootprintTest {
    /** Allocated bytes of an empty metadata database plus data store (du, so preallocated blocks count). */
    static final long MAX_IDLE_BYTES = 8L << 20;

    @TempDir
    Path dir;

    @Test
    void open_emptyStore_allocatesUnderEightMiB() throws Exception {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(DataStore.Settings.defaults(dir.resolve("data")), db)) {
            store.sync();
            long bytes = duBytes(dir);
            System.out.println("IdleFootprintTest: empty store allocates " + bytes + " bytes (du -sk " + dir + ")");
            assertThat(bytes).isLessThan(MAX_IDLE_BYTES);
        }
    }

    /** {@code du -sk}: allocated blocks, which Java's file sizes do not show. */
    static long duBytes(Path p) throws IOException, InterruptedException {
        Process du;
        try {
            du = new ProcessBuilder("du", "-sk", p.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("no du on this machine: " + e.getMessage());
            return -1;
        }
        String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(du.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return Long.parseLong(out.trim().split("\\s+")[0]) * 1024;
    }
}
