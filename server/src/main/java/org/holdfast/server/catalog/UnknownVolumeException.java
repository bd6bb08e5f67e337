package org.holdfast.server.catalog;

/** The named volume does not exist. */
public class UnknownVolumeException extends RuntimeException {
    private final String volume;

    public UnknownVolumeException(String volume) {
        super("unknown volume '" + volume + "'");
        this.volume = volume;
    }

    public String volume() {
        return volume;
    }
}
