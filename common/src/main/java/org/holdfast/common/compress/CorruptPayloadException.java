package org.holdfast.common.compress;

/** A block payload that cannot be turned back into exactly one block: wrong size, bad zstd, unknown codec. */
public class CorruptPayloadException extends RuntimeException {
    public CorruptPayloadException(String message) {
        super(message);
    }
}
