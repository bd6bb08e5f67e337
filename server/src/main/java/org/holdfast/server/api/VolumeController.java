package org.holdfast.server.api;

import java.time.Clock;
import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.RetentionExplainer;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.RetentionLocks;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.gc.VolumeGate;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** Volumes and their snapshots: read from the catalog, deleted through the GC. */
@RestController
@RequestMapping("/api/v1/volumes")
public class VolumeController {
    private final Catalog catalog;
    private final GcService gc;
    private final VolumeGate gate;
    private final Clock clock;

    public VolumeController(Catalog catalog, GcService gc, VolumeGate gate, Clock holdfastClock) {
        this.catalog = catalog;
        this.gc = gc;
        this.gate = gate;
        this.clock = holdfastClock;
    }

    @GetMapping
    public List<VolumeView> volumes() {
        // an agent token lists only the volumes of its scope; others are not mentioned at all
        AccessPrincipal caller = Caller.principal();
        return catalog.volumes().stream().filter(v -> caller == null || caller.mayReach(v.name().name())).map(VolumeView::of).toList();
    }

    @GetMapping("/{name}")
    public VolumeView volume(@PathVariable String name) {
        return VolumeView.of(catalog.requireVolume(volumeId(name)));
    }

    @GetMapping("/{name}/snapshots")
    public List<SnapshotView> snapshots(@PathVariable String name) {
        VolumeId v = volumeId(name);
        java.util.Map<Long, RetentionLocks.Lock> locks = gc.locks().locks(v);
        java.util.Map<Long, RetentionExplainer.Verdict> retention = gc.explain(v, null, clock.millis());
        return catalog.snapshots(v).stream().map(s -> SnapshotView.of(s, locks.get(s.sequence()),
                retention.containsKey(s.sequence()) ? retention.get(s.sequence()).rule() : null)).toList();
    }

    /**
     * Deletes a volume with all its snapshots (operator request). 409 while a backup of it is in
     * progress or any of its snapshots is held. Takes time in proportion to the volume's size.
     */
    @DeleteMapping("/{name}")
    @Audited("volume.delete")
    @NeedsGcBookkeeping
    public GcService.VolumeDeletion deleteVolume(@PathVariable String name) {
        return gc.deleteVolume(volumeId(name), gate);
    }

    /** Deletes one snapshot before its expiry. 409 if it is held or is the volume's newest. */
    @DeleteMapping("/{name}/snapshots/{sequence}")
    @Audited("snapshot.delete")
    @NeedsGcBookkeeping
    public ResponseEntity<Void> deleteSnapshot(@PathVariable String name, @PathVariable long sequence) {
        gc.deleteSnapshot(volumeId(name), sequence);
        return ResponseEntity.noContent().build();
    }

    /** A name that cannot be valid names no volume: 404 like any unknown one. */
    private static VolumeId volumeId(String name) {
        if (!VolumeId.isValid(name)) {
            throw new UnknownVolumeException(name);
        }
        return new VolumeId(name);
    }
}
