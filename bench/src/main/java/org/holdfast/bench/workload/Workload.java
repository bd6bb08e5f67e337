package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A reproducible sequence of volume states, one per day, generated from a seed.
 *
 * <p>Each volume has one image at a fixed path for the whole run; {@link #advance(int)} changes
 * it in place to the next day's state, so a day costs only what changed and every backup tool
 * sees the same path with new contents, as it would on a real host.
 */
public interface Workload extends AutoCloseable {
    /** Short name used in reports (trace, ext4, edge). */
    String name();

    /** Number of daily states, day 0 being the first full backup. */
    int days();

    /** The volumes of this workload, in a fixed order. */
    List<String> volumes();

    /** The image of a volume: its path never changes between days. */
    Path image(String volume);

    /** Brings every image to the state of {@code day}; called for 0, 1, 2, ... in order. */
    void advance(int day) throws IOException;

    /** Parameters and provenance to record beside the results. */
    Map<String, Object> describe();

    @Override
    default void close() throws IOException {
    }
}
