package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProvenBlocksTest {
    private static final int N = 300; // past the initial capacity of 256

    @TempDir
    Path dir;

    private static byte[] numbered(int count, int width, int salt) {
        byte[] b = new byte[count * width];
        for (int i = 0; i < count; i++) {
            b[i * width] = (byte) i;
            b[i * width + 1] = (byte) (i >> 8);
            b[i * width + width - 1] = (byte) salt;
        }
        return b;
    }

    @Test
    void record_otherDomain_writesEveryPfAndTheDomainKeyNotTheFingerprint_thenStartsOver() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0), db)) {
            DedupDomain domain = new DedupDomain("team-a");
            ProvenBlocks proven = new ProvenBlocks(store.possession(), domain);
            byte[] pfs = numbered(N, PossessionProof.PF_BYTES, 7);
            byte[] fps = numbered(N, Fingerprint.BYTES, 9);
            long[] pbns = new long[N];
            for (int i = 0; i < N; i++) {
                pbns[i] = 1000 + i;
                proven.add(pbns[i], pfs, i * PossessionProof.PF_BYTES, fps, i * Fingerprint.BYTES);
            }
            assertThat(proven.size()).isEqualTo(N);
            proven.record();
            assertThat(proven.size()).isZero();

            byte[] readPfs = new byte[N * PossessionProof.PF_BYTES];
            boolean[] found = new boolean[N];
            store.possession().pfs(pbns, N, readPfs, found, new byte[8], new byte[org.holdfast.server.store.PossessionIndex.WITH_KEY_BYTES]);
            assertThat(found).doesNotContain(false);
            assertThat(readPfs).isEqualTo(pfs);
            byte[] keys = fps.clone();
            store.possession().indexKeys(pbns, N, keys);
            byte[] expected = new byte[N * Fingerprint.BYTES];
            domain.keys(fps, 0, expected, 0, N);
            assertThat(keys).isEqualTo(expected);
            assertThat(Arrays.equals(keys, fps)).as("the index never learns a non-default domain's fingerprints").isFalse();
        }
    }

    @Test
    void record_defaultDomain_writesPfsOnly() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 64L << 10, FsyncPolicy.COMMIT, 16, 0), db)) {
            ProvenBlocks proven = new ProvenBlocks(store.possession(), new DedupDomain(DedupDomain.DEFAULT));
            byte[] pfs = numbered(1, PossessionProof.PF_BYTES, 3);
            byte[] fps = numbered(1, Fingerprint.BYTES, 5);
            proven.add(42, pfs, 0, fps, 0);
            proven.record();
            byte[] keys = new byte[Fingerprint.BYTES];
            boolean[] recorded = new boolean[1];
            store.possession().indexKeys(new long[] {42}, 1, keys, recorded);
            assertThat(recorded[0]).isTrue();
            assertThat(keys).as("no domain key stored: the key stays the caller's").isEqualTo(new byte[Fingerprint.BYTES]);
        }
    }
}
