package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.StaleMarks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's forgets owed to absent workers, on disk: kept across a reopen, dropped for a removed worker,
 * a worker owed more than kept or whose part does not read distrusted (also across a reopen), and the
 * answers of a distrusted worker in another worker's range turned into misses with their runs cut.
 */
class OwedForgetsTest {
    @TempDir
    Path dir;

    private static StaleMarks part(long... pbns) {
        return new StaleMarks(1, pbns.length, pbns, new byte[pbns.length * 32]);
    }

    /** Worker 2 owed one part whose CRC no longer matches. */
    private OwedForgets owedDamagedPart() throws Exception {
        OwedForgets o = new OwedForgets(dir);
        o.owe(2, "b", part(7));
        Path f = dir.resolve("2").resolve("0000000000000001.marks");
        byte[] b = Files.readAllBytes(f);
        b[b.length - 1] ^= 1; // its CRC no longer matches
        Files.write(f, b);
        return o;
    }

    @Test
    void owed_keptAcrossReopen_droppedOnceTheWorkerIsNoLongerRegistered() {
        OwedForgets o = new OwedForgets(dir);
        o.owe(2, "b", part(7, 8));
        o.owe(2, "b", part(9));
        o.owe(3, "c", part(7));
        OwedForgets reopened = new OwedForgets(dir);
        assertThat(reopened.owed(2)).as("a master restart keeps what is owed").isEqualTo(2);
        assertThat(reopened.owed(3)).isEqualTo(1);
        assertThat(reopened.distrusted(2)).isFalse();
        reopened.retain(Set.of(1L, 3L)); // worker 2 was removed
        assertThat(reopened.owed(2)).isZero();
        assertThat(dir.resolve("2")).doesNotExist();
        assertThat(reopened.owed(3)).as("the others keep theirs").isEqualTo(1);
    }

    @Test
    void moreThanKept_distrustedInstead_partsGo_markerKeptAcrossReopen() {
        OwedForgets o = new OwedForgets(dir, 1);
        o.owe(2, "b", part(7));
        assertThat(o.distrusted(2)).isFalse();
        o.owe(2, "b", part(8));
        assertThat(o.distrusted(2)).as("the second part does not fit").isTrue();
        assertThat(o.owed(2)).as("the marker covers them all").isZero();
        assertThat(Files.exists(dir.resolve("2").resolve(OwedForgets.DISTRUST))).isTrue();
        assertThat(new OwedForgets(dir, 1).distrusted(2)).isTrue();
    }

    @Test
    void owedPartDoesNotRead_distrusted() throws Exception {
        OwedForgets o = owedDamagedPart();
        assertThat(o.deliver(2, "b", null)).as("nothing to send").isZero();
        assertThat(o.distrusted(2)).isTrue();
        assertThat(o.owed(2)).isZero();
    }

    @Test
    void owedPartDoesNotRead_markerCannotBeWritten_partNotDroppedWithoutIt() throws Exception {
        OwedForgets o = owedDamagedPart();
        Path blocker = Files.createDirectories(dir.resolve("2").resolve(OwedForgets.DISTRUST + ".tmp").resolve("x"));
        assertThatThrownBy(() -> o.deliver(2, "b", null)).as("the marker cannot be written (as on a full disk)")
                .isInstanceOf(UncheckedIOException.class);
        Files.delete(blocker);
        Files.delete(blocker.getParent()); // the disk has room again
        for (OwedForgets seen : new OwedForgets[] {o, new OwedForgets(dir)}) {
            assertThat(seen.distrusted(2) || seen.owed(2) > 0).as("the worker is still owed its forgets or distrusted, never clean"
                    + " (its engine may still answer the PBNs the damaged part named)").isTrue();
        }
        assertThat(o.deliver(2, "b", null)).isZero();
        assertThat(o.distrusted(2)).as("once the marker can be written").isTrue();
    }

    @Test
    void owedPartGone_distrusted() throws Exception {
        OwedForgets o = new OwedForgets(dir);
        o.owe(2, "b", part(7));
        Files.delete(dir.resolve("2").resolve("0000000000000001.marks")); // deleted by hand, or lost: its forgets were not delivered
        assertThat(o.deliver(2, "b", null)).isZero();
        assertThat(o.distrusted(2)).as("a part owed and gone is a forget lost").isTrue();
    }

    @Test
    void owedPartCannotBeRead_distrusted_deliveryDoesNotFailForEver() throws Exception {
        OwedForgets o = new OwedForgets(dir);
        o.owe(2, "b", part(7));
        Path f = dir.resolve("2").resolve("0000000000000001.marks");
        Files.delete(f);
        Files.createDirectory(f); // reads fail every time (as a bad sector would): the worker's next link would never serve
        OwedForgets reopened = new OwedForgets(dir);
        assertThat(reopened.owed(2)).isEqualTo(1);
        assertThat(reopened.deliver(2, "b", null)).isZero();
        assertThat(reopened.distrusted(2)).isTrue();
        assertThat(reopened.owed(2)).isZero();
        assertThat(f).doesNotExist();
    }

    @Test
    void strayDirectoryWithAnIdPastLongRange_ignored_masterStarts() throws Exception {
        Files.createDirectories(dir.resolve("9999999999999999999")); // 19 digits, past Long.MAX_VALUE
        OwedForgets o = new OwedForgets(dir);
        o.owe(2, "b", part(7));
        assertThat(new OwedForgets(dir).owed(2)).isEqualTo(1);
    }

    @Test
    void distrustedAnswers_otherWorkersRangeMisses_runsCut_ownAndMastersKept() {
        OtherRangePbns others = new OtherRangePbns(1000, new PbnRange(1000, 2000)); // worker 1 of ranges of 1000 from 1000
        long[] pbns = {5, 6, 2500, 1500, 1501, 2600, 0};
        int[] runs = {3, 2, 1, 2, 1, 1, 0};
        assertThat(others.asMisses(pbns, runs, pbns.length)).isEqualTo(2);
        assertThat(pbns).as("the master's own PBNs and the worker's own stay").containsExactly(5, 6, 0, 1500, 1501, 0, 0);
        assertThat(runs).as("the run through 2500 ends before it").containsExactly(2, 1, 0, 2, 1, 0, 0);
    }
}
