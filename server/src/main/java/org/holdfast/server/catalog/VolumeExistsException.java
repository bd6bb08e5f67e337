package org.holdfast.server.catalog;

/** A volume of that name exists already. */
public class VolumeExistsException extends RuntimeException {
    public VolumeExistsException(String volume) {
        super("volume '" + volume + "' exists already; change it with PATCH /api/v1/volumes/" + volume + " or pick another name");
    }
}
