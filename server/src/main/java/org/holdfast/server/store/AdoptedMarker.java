package org.holdfast.server.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code adopted} marker of a worker's takeover epoch ({@link WorkerKeys#marker}), written
 * create-only before anything else of that epoch: the object keys of the earlier epochs' sealed logs
 * the node adopted. A UTF-8 text, one item per line ('\n'):
 *
 * <pre>
 * holdfast-adopted-logs 1          format name and version
 * worker &lt;id&gt;                      the worker id (decimal)
 * epoch &lt;e&gt;                        the epoch this marker opens (decimal, at least 1; epoch 1's adopts no log)
 * log &lt;object key&gt;                one per adopted log, each a log key of this worker at an epoch below e
 * end &lt;count&gt;                     the number of log lines: a truncated marker is refused
 * </pre>
 *
 * A marker that does not parse exactly so is damaged, and a takeover that finds it refuses (nothing
 * written): whoever took over last cannot be known.
 */
public record AdoptedMarker(long worker, long epoch, List<String> logs) {
    static final String HEADER = "holdfast-adopted-logs 1";
    /** Longest marker read (about 1.3 M logs): a bigger object is not a marker this code wrote. */
    static final int MAX_BYTES = 64 << 20;

    public AdoptedMarker {
        logs = List.copyOf(logs);
    }

    /** The marker's text, UTF-8. */
    byte[] format() {
        return toText().getBytes(StandardCharsets.UTF_8);
    }

    /** The marker's text. */
    String toText() {
        StringBuilder b = new StringBuilder(HEADER).append('\n').append("worker ").append(worker).append('\n')
                .append("epoch ").append(epoch).append('\n');
        for (String k : logs) {
            b.append("log ").append(k).append('\n');
        }
        b.append("end ").append(logs.size()).append('\n');
        return b.toString();
    }

    /**
     * Parses the marker of worker {@code worker} at epoch {@code epoch} from {@code bytes} read at
     * {@code key}; refuses anything else with a {@link CorruptDataException} naming the key and the fault.
     */
    static AdoptedMarker parse(long worker, long epoch, String key, byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (!text.endsWith("\n")) {
            throw damaged(key, "it does not end with a newline (truncated?)");
        }
        String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
        if (lines.length < 4 || !HEADER.equals(lines[0])) {
            throw damaged(key, "its first line is not '" + HEADER + "'");
        }
        if (!("worker " + worker).equals(lines[1])) {
            throw damaged(key, "it names '" + lines[1] + "', not worker " + worker);
        }
        if (!("epoch " + epoch).equals(lines[2])) {
            throw damaged(key, "it names '" + lines[2] + "', not epoch " + epoch);
        }
        List<String> logs = new ArrayList<>();
        for (int i = 3; i < lines.length - 1; i++) {
            String l = lines[i];
            if (!l.startsWith("log ")) {
                throw damaged(key, "line " + (i + 1) + " is not a 'log <key>' line");
            }
            String k = l.substring(4);
            long e = WorkerKeys.epochOf(worker, k);
            if (e < 1 || e >= epoch || WorkerKeys.log(worker, e, k) == null) {
                throw damaged(key, "line " + (i + 1) + " names " + k + ", not a log of worker " + worker + " at an epoch below " + epoch);
            }
            logs.add(k);
        }
        if (!("end " + logs.size()).equals(lines[lines.length - 1])) {
            throw damaged(key, "its last line is not 'end " + logs.size() + "' (truncated or edited)");
        }
        return new AdoptedMarker(worker, epoch, logs);
    }

    private static CorruptDataException damaged(String key, String why) {
        return new CorruptDataException("range-takeover", key, null, "the adopted marker is damaged: " + why + ". Which logs the last"
                + " takeover of this range adopted cannot be known, so this node takes nothing over and writes nothing; compare the"
                + " object with docs/architecture.md \"Objects and fencing\" and restore it from a copy, or ask for help");
    }
}
