package org.holdfast.server.store;

/**
 * The object key scheme of sealed logs in an object store: {@code <node>/logs/<id %08x>-<epoch %016x>.hfl},
 * where the node is a node name or a worker's key space ({@link WorkerKeys#space}) and the epoch is
 * the log header's creation time, so a log id created again, or compacted, gets a key of its own.
 */
final class LogKeys {
    private LogKeys() {
    }

    /** The object key of log {@code id} of epoch {@code epoch} uploaded by node {@code node}. */
    static String key(String node, int id, long epoch) {
        return String.format("%s/logs/%08x-%016x.hfl", node, id, epoch);
    }

    /** {id, epoch} of a log object key {@link #key} made for {@code node}, or null for any other key. */
    static long[] parseKey(String node, String key) {
        String head = node + "/logs/";
        if (!key.startsWith(head) || !key.endsWith(".hfl") || key.length() != head.length() + 8 + 1 + 16 + 4
                || key.charAt(head.length() + 8) != '-') {
            return null;
        }
        try {
            return new long[] {Integer.parseUnsignedInt(key.substring(head.length(), head.length() + 8), 16),
                    Long.parseUnsignedLong(key.substring(head.length() + 9, head.length() + 25), 16)};
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
