package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.Test;

/**
 * Every reclaim-now test over a store whose PBNs start at 2^40 (a worker's range): backups and
 * restores over the wire, the exact mark, the sweep of unmarked blocks, compaction and fsck.
 */
class RangeStoreReclaimNowTest extends ReclaimNowTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 30));

    @Override
    PbnRange range() {
        return RANGE;
    }

    @Test
    void backup_rangeStore_everyBlockInRangeAndRestoresByteIdentical() {
        byte[] image = new byte[64 * 4096];
        new Random(5).nextBytes(image);
        backup("w", image);
        assertThat(pbns("w")).isNotEmpty().allMatch(RANGE::contains);
        assertThat(pbns("w")).contains(RANGE.first());
        assertThat(restore("w", 1)).isEqualTo(image);
    }
}
