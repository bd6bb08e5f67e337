package org.holdfast.server.api;

import java.net.URI;

/** Stable {@code type} URIs of the problem details the API returns; clients may switch on them. */
public final class ProblemTypes {
    private ProblemTypes() {
    }

    public static final URI UNKNOWN_VOLUME = URI.create("urn:holdfast:problem:unknown-volume");
    public static final URI UNKNOWN_SNAPSHOT = URI.create("urn:holdfast:problem:unknown-snapshot");
    public static final URI INVALID_REQUEST = URI.create("urn:holdfast:problem:invalid-request");
    public static final URI FORBIDDEN = URI.create("urn:holdfast:problem:forbidden");
    /** A refused GC request: backup in progress, hold or lock, newest snapshot. */
    public static final URI CONFLICT = URI.create("urn:holdfast:problem:conflict");
    public static final URI CORRUPT_DATA = URI.create("urn:holdfast:problem:corrupt-data");
    public static final URI STORE_UNAVAILABLE = URI.create("urn:holdfast:problem:store-unavailable");
}
