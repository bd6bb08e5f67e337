package org.holdfast.server.ingest.cluster;

import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.Heartbeat;

/**
 * What a worker last told the master about its range data (data on workers), in its heartbeat
 * (cluster version 3): {@code state} {@code serving}, {@code refused} (its store would not open,
 * every data call is refused) or {@code not-open}; {@code pbnsUsed} the PBNs its store handed out
 * (the blocks stored in its range, plus any reserved PBNs a crash skipped; 0 unless serving);
 * {@code logBytes} the bytes its data logs take on its disk (0 unless serving); {@code atMillis} when
 * the heartbeat arrived (epoch milliseconds, the master's clock).
 */
public record RangeDataReport(String state, long pbnsUsed, long logBytes, long atMillis) {
    /** The report of heartbeat figures {@code d} from a worker over {@code range}. */
    static RangeDataReport of(Heartbeat.RangeData d, PbnRange range, long atMillis) {
        String state = switch (d.state()) {
            case Heartbeat.RangeData.SERVING -> "serving";
            case Heartbeat.RangeData.REFUSED -> "refused";
            default -> "not-open";
        };
        // a worker's next PBN outside its range would be its error; never show a negative count for it
        long used = d.state() == Heartbeat.RangeData.SERVING ? Math.max(0, Math.min(d.nextPbn(), range.limit()) - range.first()) : 0;
        return new RangeDataReport(state, used, d.logBytes(), atMillis);
    }
}
