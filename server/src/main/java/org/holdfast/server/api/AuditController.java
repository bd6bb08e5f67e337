package org.holdfast.server.api;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import org.holdfast.server.catalog.AuditStore;
import org.holdfast.server.security.AuditEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The audit log: newest first, filtered, a page at a time. */
@RestController
public class AuditController {
    private final AuditStore store;

    public AuditController(AuditStore store) {
        this.store = store;
    }

    /** One entry; {@code time} ISO-8601. */
    public record AuditEntryView(String time, long timeMillis, String principal, String source, String action, String target,
                                 String result, String detail) {
        static AuditEntryView of(AuditStore.Entry e) {
            AuditEvent a = e.event();
            return new AuditEntryView(Instant.ofEpochMilli(a.timeMillis()).toString(), a.timeMillis(), a.principal(), a.source(),
                    a.action(), a.target(), a.result(), a.detail());
        }
    }

    /** A page; pass {@code nextCursor} as {@code cursor} for the next (older) one; null at the end. */
    public record AuditPage(List<AuditEntryView> entries, String nextCursor) {
    }

    /**
     * Lists audit entries newest first. {@code from} (inclusive) and {@code to} (exclusive) are ISO-8601
     * instants; {@code target} matches a prefix ({@code volume:db1} finds {@code volume:db1@7});
     * {@code result} is ok, denied, conflict or failed.
     */
    @GetMapping("/api/v1/audit")
    public AuditPage audit(@RequestParam(defaultValue = "100") int limit, @RequestParam(required = false) String cursor,
                           @RequestParam(required = false) String from, @RequestParam(required = false) String to,
                           @RequestParam(required = false) String principal, @RequestParam(required = false) String action,
                           @RequestParam(required = false) String target, @RequestParam(required = false) String result) {
        AuditStore.Page p = store.query(new AuditStore.Query(instant("from", from), instant("to", to), blank(principal),
                blank(action), blank(target), blank(result), limit, blank(cursor)));
        return new AuditPage(p.entries().stream().map(AuditEntryView::of).toList(), p.nextCursor());
    }

    private static Long instant(String name, String s) {
        if (s == null || s.isBlank()) {
            return null;
        }
        try {
            return Instant.parse(s.trim()).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(name + " '" + s + "' is not an ISO-8601 instant like 2026-06-01T00:00:00Z");
        }
    }

    private static String blank(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
