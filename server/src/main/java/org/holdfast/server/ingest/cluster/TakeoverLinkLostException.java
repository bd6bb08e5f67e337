package org.holdfast.server.ingest.cluster;

import org.holdfast.server.store.StoreException;

/**
 * A takeover read the range's logs but claims nothing: this node's link to the master dropped or
 * registered again meanwhile, so the master may have let the old node back, which would serve on
 * until the claim. Not kept as a refusal: the next call after a registration takes the range over again.
 */
final class TakeoverLinkLostException extends StoreException {
    TakeoverLinkLostException(String path, long workerId, long epoch) {
        super("range-data", path, null, "the takeover of worker " + workerId + "'s range at epoch " + epoch + " claims nothing:"
                + " this node's link to the master dropped, or it registered again, while it read the range's logs (the master may"
                + " have let the old node back meanwhile, which would serve until the claim and lose what it uploads after it);"
                + " nothing was claimed or written in the bucket; the takeover runs again, from the start, once the node is"
                + " registered", null);
    }
}
