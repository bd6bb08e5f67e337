package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;

class ExactFingerprintIndexTest extends FingerprintIndexContractTest {
    private MetadataDb db;

    @Override
    protected FingerprintIndex openIndex(Path dir) {
        db = MetadataDb.open(dir.resolve("catalog"));
        return new ExactFingerprintIndex(db);
    }

    @Override
    protected void closeIndex(FingerprintIndex index) {
        index.close();
        db.close();
    }

    @Test
    void lookup_afterRecord_findsEveryDuplicate() {
        byte[] f = fps(9, 100);
        long[] pbns = new long[100];
        boolean[] isNew = new boolean[100];
        for (int i = 0; i < 100; i++) {
            pbns[i] = 10 + i;
            isNew[i] = true;
        }
        try (DedupStream s = index().openStream("v")) {
            s.record(f, 100, pbns, isNew);
        }
        long[] found = new long[100];
        try (DedupStream s = index().openStream("w")) {
            s.lookup(f, 100, found);
        }
        assertThat(found).containsExactly(pbns);
    }
}
