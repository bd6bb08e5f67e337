package org.holdfast.server.api;

import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.verify.DamageReport;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.RetentionExplainer;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.RetentionLocks;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A volume's snapshots: list, details, early deletion, holds and retention locks. The
 * {@code {snapshot}} segment is the snapshot id ({@code db01@3}) or its sequence ({@code 3}); a
 * snapshot that does not exist answers 404 (unknown-snapshot) on every route, before anything else
 * is looked at (except the admin check of the release routes, which names nothing).
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
@RequestMapping("/api/v1/volumes/{name}/snapshots")
public class SnapshotController {
    private final Catalog catalog;
    private final GcService gc;
    private final Clock clock;
    private final DamageReport damage;

    public SnapshotController(Catalog catalog, GcService gc, Clock holdfastClock, DamageReport damage) {
        this.catalog = catalog;
        this.gc = gc;
        this.clock = holdfastClock;
        this.damage = damage;
    }

    /**
     * A snapshot's hold state, its lock (mode {@code governance} or {@code compliance}, {@code until}
     * an ISO-8601 instant or null for none; both null if not held) and fixed expiry (epoch ms, null if unknown).
     */
    public record HoldView(String volume, long sequence, boolean held, Long expiryMillis, String lockMode, String lockUntil,
                           String lockedBy) {
    }

    /** Body of a lock request: {@code {"mode": "compliance", "until": "2027-01-01T00:00:00Z"}}; until is optional for governance. */
    public record LockRequest(String mode, String until) {
    }

    /** The volume's retained snapshots, oldest first. */
    @GetMapping
    public List<SnapshotView> snapshots(@PathVariable String name) {
        VolumeId v = PathIds.volumeId(name);
        if (gc.deleting(catalog.requireVolume(v).internalId())) {
            throw new UnknownVolumeException(name); // deleted; only freeing its map waits for space
        }
        Map<Long, RetentionLocks.Lock> locks = gc.locks().locks(v);
        Map<Long, RetentionExplainer.Verdict> retention = gc.explain(v, null, clock.millis());
        VolumeRecord vr = catalog.requireVolume(v);
        return catalog.snapshots(v).stream().map(s -> SnapshotView.of(s, locks.get(s.sequence()), expiryOf(s),
                keptBy(retention, s.sequence())).withVerification(damage.snapshot(vr, s))).toList();
    }

    /** One snapshot: what {@link #snapshots} lists for it. */
    @GetMapping("/{snapshot}")
    public SnapshotView snapshot(@PathVariable String name, @PathVariable String snapshot) {
        SnapshotRecord s = require(name, snapshot);
        return SnapshotView.of(s, gc.locks().lock(s.volume(), s.sequence()).orElse(null), expiryOf(s),
                keptBy(gc.explain(s.volume(), null, clock.millis()), s.sequence()))
                .withVerification(damage.snapshot(catalog.requireVolume(s.volume()), s));
    }

    /** The rule that keeps the snapshot ({@code weekly 3 of 4}); null if the next GC run deletes it. */
    private static String keptBy(Map<Long, RetentionExplainer.Verdict> retention, long sequence) {
        RetentionExplainer.Verdict verdict = retention.get(sequence);
        return verdict == null ? null : verdict.rule();
    }

    /** Deletes one snapshot before its expiry. 409 if it is held or is the volume's newest. */
    @DeleteMapping("/{snapshot}")
    @Audited("snapshot.delete")
    @NeedsGcBookkeeping
    public ResponseEntity<Void> deleteSnapshot(@PathVariable String name, @PathVariable String snapshot) {
        SnapshotRecord s = require(name, snapshot);
        gc.deleteSnapshot(s.volume(), s.sequence());
        return ResponseEntity.noContent().build();
    }

    @GetMapping("/{snapshot}/hold")
    @NeedsGcBookkeeping
    public HoldView hold(@PathVariable String name, @PathVariable String snapshot) {
        return holdView(require(name, snapshot));
    }

    /** Places a hold (legal hold: a governance lock without date): the snapshot is kept until an admin releases it. */
    @PutMapping("/{snapshot}/hold")
    @Audited("hold.place")
    @NeedsGcBookkeeping
    public HoldView placeHold(@PathVariable String name, @PathVariable String snapshot, HttpServletRequest request) {
        SnapshotRecord s = require(name, snapshot);
        gc.locks().place(s.volume(), s.sequence(), RetentionLocks.Mode.GOVERNANCE, null, Principals.name(request));
        return holdView(s);
    }

    /** Releases a hold or governance lock (admin only); 409 for a compliance lock before its date. */
    @DeleteMapping("/{snapshot}/hold")
    @Audited("hold.release")
    @NeedsGcBookkeeping
    public HoldView releaseHold(@PathVariable String name, @PathVariable String snapshot, HttpServletRequest request) {
        Principals.requireAdmin(request, "releasing a hold");
        SnapshotRecord s = require(name, snapshot);
        gc.locks().release(s.volume(), s.sequence());
        return holdView(s);
    }

    @GetMapping("/{snapshot}/lock")
    @NeedsGcBookkeeping
    public HoldView lock(@PathVariable String name, @PathVariable String snapshot) {
        return holdView(require(name, snapshot));
    }

    /** Places or extends a retention lock; 409 if it would shorten or weaken the lock there. */
    @PutMapping("/{snapshot}/lock")
    @Audited("lock.place")
    @NeedsGcBookkeeping
    public HoldView placeLock(@PathVariable String name, @PathVariable String snapshot, @RequestBody LockRequest body,
                              HttpServletRequest request) {
        SnapshotRecord s = require(name, snapshot);
        if (body == null || body.mode() == null) {
            throw new IllegalArgumentException("body must be {\"mode\": \"governance\"|\"compliance\", \"until\": \"2027-01-01T00:00:00Z\"}");
        }
        Long until = null;
        if (body.until() != null && !body.until().isBlank()) {
            try {
                until = Instant.parse(body.until().trim()).toEpochMilli();
            } catch (DateTimeParseException | ArithmeticException e) { // ArithmeticException: a year past epoch millis
                throw new IllegalArgumentException("until '" + body.until() + "' is not an ISO-8601 instant like 2027-01-01T00:00:00Z");
            }
        }
        RetentionLocks.Mode mode = RetentionLocks.Mode.parse(body.mode());
        if (mode == RetentionLocks.Mode.COMPLIANCE) {
            // nobody can undo a compliance lock: a stolen operator credential must not be able to pin the store for years
            Principals.requireAdmin(request, "placing a compliance lock");
        }
        gc.locks().place(s.volume(), s.sequence(), mode, until, Principals.name(request));
        return holdView(s);
    }

    /** Releases a governance lock (admin only); a compliance lock cannot be released before its date (409). */
    @DeleteMapping("/{snapshot}/lock")
    @Audited("lock.release")
    @NeedsGcBookkeeping
    public HoldView releaseLock(@PathVariable String name, @PathVariable String snapshot, HttpServletRequest request) {
        Principals.requireAdmin(request, "releasing a lock");
        SnapshotRecord s = require(name, snapshot);
        gc.locks().release(s.volume(), s.sequence());
        return holdView(s);
    }

    private HoldView holdView(SnapshotRecord s) {
        RetentionLocks.Lock l = gc.locks().lock(s.volume(), s.sequence()).orElse(null);
        return new HoldView(s.volume().name(), s.sequence(), l != null, gc.expiry(s.volume(), s.sequence()).orElse(null),
                l == null ? null : l.mode().wireName(),
                l == null || l.untilMillis() == null ? null : Instant.ofEpochMilli(l.untilMillis()).toString(),
                l == null ? null : l.placedBy());
    }

    private Long expiryOf(SnapshotRecord s) {
        return gc.expiry(s.volume(), s.sequence()).orElse(null);
    }

    /**
     * The snapshot the path names: 404 for an unknown volume or snapshot, 400 for a segment that is
     * no snapshot id ({@code abc}, {@code 0}, or the id of another volume).
     */
    private SnapshotRecord require(String name, String snapshot) {
        VolumeId v = PathIds.volumeId(name);
        catalog.requireVolume(v); // an unknown volume is 404 whatever the snapshot segment says
        return catalog.requireSnapshot(v, SnapshotId.parse(snapshot, v).sequence());
    }
}
