package org.holdfast.client.scan;

import java.nio.ByteBuffer;

/** Receives the changed blocks of a scan, in increasing LBN order, one call per block. */
public interface ChangeSink {
    /**
     * Block {@code lbn} changed: its fingerprint is 32 bytes of {@code fingerprints} at
     * {@code fpOff}; unless {@code zero}, its bytes are {@code blockSize} bytes of {@code data} at
     * absolute index {@code dataOff} and {@code tag} is its possession tag. Both arrays are valid only
     * during the call.
     */
    void changed(long lbn, byte[] fingerprints, int fpOff, ByteBuffer data, int dataOff, boolean zero, long tag);

    /** A chunk of the scan is done: a sink that holds back output may pass it on now. */
    default void chunkDone() {
    }
}
