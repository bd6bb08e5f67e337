package org.holdfast.server.api;

import java.nio.file.Path;
import org.springframework.test.context.DynamicPropertyRegistry;

/** The properties of a test server on {@code data}: no TLS, the agent port on a free loopback port, no free-space floor. */
final class PlainServerProperties {
    private PlainServerProperties() {
    }

    static void add(DynamicPropertyRegistry r, Path data) {
        r.add("holdfast.data-dir", data::toString);
        r.add("holdfast.tls.enabled", () -> "false");
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
    }
}
