package org.holdfast.server.ingest;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;

/** An audit log that keeps its entries in memory, for tests. */
public final class RecordingAuditLog implements AuditLog {
    private final List<AuditEvent> events = new ArrayList<>();

    @Override
    public synchronized void record(AuditEvent event) {
        events.add(event);
    }

    public synchronized List<AuditEvent> events() {
        return List.copyOf(events);
    }
}
