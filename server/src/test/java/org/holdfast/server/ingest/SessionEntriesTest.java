package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.common.id.Fingerprint;
import org.junit.jupiter.api.Test;

class SessionEntriesTest {
    /** A fingerprint whose first bytes (the table's hash) and last byte carry {@code n}. */
    private static byte[] fp(int n) {
        byte[] b = new byte[Fingerprint.BYTES];
        b[0] = (byte) n;
        b[7] = (byte) (n >> 8);
        b[31] = (byte) n;
        return b;
    }

    private static int add(SessionEntries e, long lbn, int content, boolean adjacent) {
        int idx = e.add(lbn, fp(content), 0, SessionEntries.AWAITING, 0);
        e.segment(idx, adjacent);
        return idx;
    }

    @Test
    void segment_adjacentEntries_shareASegmentUpToTheLimit() {
        SessionEntries e = new SessionEntries(3);
        for (int i = 0; i < 5; i++) {
            add(e, 10 + i, i, i > 0);
        }
        add(e, 20, 9, false); // a gap starts a new segment even though the last one has room
        assertThat(e.segments).isEqualTo(3);
        assertThat(new int[] {e.segStart[0], e.segLen[0], e.segStart[1], e.segLen[1], e.segStart[2], e.segLen[2]})
                .containsExactly(0, 3, 3, 2, 5, 1);
    }

    @Test
    void ask_sameFingerprintTwice_secondFollowsFirstAndOnlyFirstIsAwaited() {
        SessionEntries e = new SessionEntries(16);
        int a = add(e, 0, 1, false);
        int b = add(e, 1, 1, true);
        assertThat(e.ask(a)).isTrue();
        assertThat(e.ask(b)).as("asked once per session").isFalse();
        assertThat(e.state[b]).isEqualTo(SessionEntries.FOLLOWS);
        assertThat(e.owner[b]).isEqualTo(a);
        assertThat(e.awaiting()).isEqualTo(1);
        assertThat(e.awaitedEntry(1)).as("a follower receives no payload").isEqualTo(-1);
        assertThat(e.isResolved(b)).isFalse();
        e.answered(a, 77, true);
        assertThat(e.awaiting()).isZero();
        assertThat(e.isResolved(b)).isTrue();
        e.resolveFollower(b);
        assertThat(e.pbns[b]).isEqualTo(77);
    }

    @Test
    void resolvedPrefix_neverSplitsASegment_andStopsAtTheFirstUnresolvedEntry() {
        SessionEntries e = new SessionEntries(4);
        for (int i = 0; i < 8; i++) {
            add(e, i, i, i > 0); // segments [0, 4) and [4, 8)
        }
        for (int i = 0; i < 6; i++) {
            e.ask(i);
            e.answered(i, 100 + i, true);
        }
        e.ask(6); // entry 6 still waits for its payload
        assertThat(e.resolvedPrefix()).as("entries 4 and 5 are resolved, but their segment is not whole").isEqualTo(4);
        assertThat(e.segmentsWithin(4)).isEqualTo(1);
        e.ask(7);
        e.answered(6, 106, true);
        e.answered(7, 107, true);
        assertThat(e.resolvedPrefix()).isEqualTo(8);
        assertThat(e.segmentsWithin(8)).isEqualTo(2);
    }

    @Test
    void dropPrefix_keepsRequestsAndFollowersOfWhatStays_renumbered() {
        SessionEntries e = new SessionEntries(2);
        int a = add(e, 0, 1, false);
        int b = add(e, 1, 2, true);
        int c = add(e, 5, 3, false);
        int d = add(e, 6, 2, true);
        int f = add(e, 7, 3, true); // a third segment: the limit is 2
        e.ask(a);
        e.ask(b);
        e.ask(c);
        e.ask(d); // follows b, which is dropped below
        e.ask(f); // follows c, which stays
        e.answered(a, 50, true);
        e.answered(b, 51, true);
        assertThat(e.resolvedPrefix()).isEqualTo(2);
        e.resolveFollowersOf(2);
        assertThat(e.pbns[d]).isEqualTo(51);
        e.dropPrefix(2, e.segmentsWithin(2));

        assertThat(e.count).isEqualTo(3);
        assertThat(e.lbns[0]).isEqualTo(5);
        assertThat(e.segments).isEqualTo(2);
        assertThat(e.segStart[0]).isZero();
        assertThat(e.segStart[1]).isEqualTo(2);
        assertThat(e.state[2]).isEqualTo(SessionEntries.FOLLOWS);
        assertThat(e.owner[2]).as("renumbered owner").isZero();
        assertThat(e.awaitedEntry(5)).isZero();
        int again = add(e, 9, 3, false);
        assertThat(e.ask(again)).as("the kept request of content 3 is still known").isFalse();
        assertThat(e.owner[again]).isZero();
        int dropped = add(e, 10, 1, true);
        assertThat(e.ask(dropped)).as("a dropped request is forgotten: the engine finds that block now").isTrue();
    }

    @Test
    void add_pastTheInitialCapacity_keepsEveryEntry() {
        SessionEntries e = new SessionEntries(4096);
        for (int i = 0; i < 3000; i++) {
            add(e, i, i, i > 0);
            e.ask(i);
        }
        assertThat(e.count).isEqualTo(3000);
        assertThat(e.awaiting()).isEqualTo(3000);
        assertThat(e.awaitedEntry(2999)).isEqualTo(2999);
        assertThat(e.fps[2999 * Fingerprint.BYTES + 31]).isEqualTo((byte) 2999);
    }
}
