package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.List;
import org.holdfast.server.cluster.ClusterNode;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.NotAMasterException;
import org.holdfast.server.cluster.StartOverMark;
import org.holdfast.server.cluster.TakeoverFence;
import org.holdfast.server.cluster.UnknownWorkerException;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.cluster.WorkerLoad;
import org.holdfast.server.cluster.WorkerStatus;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.IndexReport;
import org.holdfast.server.ingest.cluster.RangeDataReport;
import org.holdfast.server.ingest.cluster.RemoteRangeStore;
import org.holdfast.server.ingest.cluster.WorkerIndexRebuildJobs;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.TokenRecord;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Master/worker mode (viewer and up): this node's role, and on a master the workers with state, epoch, range and load. */
@RestController
public class ClusterController {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ClusterController.class);
    private final ClusterNode node;
    private final ApiTokens tokens;
    /** On a master only. */
    private final ObjectProvider<WorkerIndexRebuildJobs> rebuilds;
    /** On a master only. */
    private final ObjectProvider<DedupLinks> dedupLinks;
    /** On a master only: the workers' range data as their heartbeats report it. */
    private final ObjectProvider<ClusterServer> clusterServer;

    public ClusterController(ClusterNode node, ApiTokens tokens, ObjectProvider<WorkerIndexRebuildJobs> rebuilds,
                             ObjectProvider<DedupLinks> dedupLinks, ObjectProvider<ClusterServer> clusterServer) {
        this.node = node;
        this.tokens = tokens;
        this.rebuilds = rebuilds;
        this.dedupLinks = dedupLinks;
        this.clusterServer = clusterServer;
    }

    /**
     * This node. {@code clusterAddress}: where a master listens for workers, or the master a worker
     * connects to (blank standalone). {@code workers}: counts by state, on a master only.
     * {@code registration}: a worker's own membership, on a worker only.
     */
    public record ClusterView(String role, String nodeName, String clusterAddress, WorkerCounts workers,
                              Registration registration) {
    }

    /** How many workers are in each state. */
    public record WorkerCounts(int up, int late, int lost) {
    }

    /** A worker's membership as it knows it: connected now, its last assignment (null before the first), why the last attempt failed. */
    public record Registration(boolean connected, Long workerId, Long epoch, String pbnFirst, String pbnLimit, String lastError) {
    }

    /**
     * One worker. PBNs are decimal strings (they pass 2^53, beyond what a JSON number keeps exactly
     * in a browser); {@code lastHeartbeat} (ISO-8601 or null) is when the master last heard from it,
     * registration or heartbeat; {@code loadAverage} null when unknown. {@code tokenId} and
     * {@code tokenName}: the worker token the worker is bound to, for admins only (null for other
     * roles, and while a worker from an older master is not bound yet). {@code indexEntries}: the
     * fingerprints the worker's dedup index held at its last answer to a dedup call of this master
     * ({@code indexReportedAt}, ISO-8601); both null until the first answer after its registration.
     * {@code indexStartedOver}: the worker reported that it started its dedup index over at a
     * registration, and no rebuild of its index has finished since (null otherwise; a master restart
     * keeps it: it is stored in the catalog). A figure not known is null, never 0 or "": {@code address},
     * {@code cpus}, {@code diskBytes} and {@code version} until the node registers (after a replace, a
     * master restart), the heap and disk-free figures until its first heartbeat. {@code rangeData}: the
     * worker's range data as its latest heartbeat on its current link reported it (null while its link
     * is down, before that heartbeat, and for a worker of an older release, which says nothing).
     * {@code takeoverEpoch}: the highest takeover epoch the master heard the worker's range archived at
     * (its takeover fence: a node archiving at a lower one is refused; 0: none heard), what
     * {@code POST .../takeover-fence/reset} confirms; {@code pbnFloor}: past every PBN heard handed out
     * under the id (null: none heard).
     */
    public record WorkerItem(long id, String nodeName, String address, String state, long epoch, String pbnFirst, String pbnLimit,
                             String lastHeartbeat, Double loadAverage, Long heapUsedBytes, Long heapMaxBytes, Long diskFreeBytes,
                             Integer cpus, Long diskBytes, String version, String tokenId, String tokenName, Long indexEntries,
                             String indexReportedAt, StartedOver indexStartedOver, RangeData rangeData, long takeoverEpoch,
                             String pbnFloor) {
    }

    /**
     * A worker's range data (data on workers: used by ingest and restore with holdfast.cluster.data=workers, not yet by GC): {@code state}
     * {@code serving}, {@code refused} (its range-data directory was made for another range: every data
     * call is refused, its log says why) or {@code not-open}; {@code pbnsUsed} the PBNs its store
     * handed out (blocks stored, plus reserved PBNs a crash skipped) and {@code logBytes} the bytes its
     * data logs take, both 0 unless serving; {@code reportedAt} (ISO-8601) when the master heard it.
     */
    public record RangeData(String state, long pbnsUsed, long logBytes, String reportedAt) {
    }

    /**
     * When (ISO-8601, the worker's clock) and why ({@code new-membership}, {@code other-worker-id},
     * {@code epoch-gap}, {@code unreadable-owner-file}) a worker started its dedup index over; the
     * remedy is {@code POST /api/v1/cluster/workers/{id}/rebuild}.
     */
    public record StartedOver(String at, String reason) {
    }

    @GetMapping("/api/v1/cluster")
    public ClusterView cluster() {
        WorkerCounts counts = null;
        if (node.role() == org.holdfast.server.cluster.ClusterRole.MASTER) {
            List<WorkerView> all = node.workers();
            counts = new WorkerCounts(count(all, MemberState.UP), count(all, MemberState.LATE), count(all, MemberState.LOST));
        }
        WorkerStatus s = node.workerStatus();
        Registration reg = null;
        if (s != null) {
            WorkerRecord a = s.assignment();
            reg = new Registration(s.connected(), a == null ? null : a.workerId(), a == null ? null : a.epoch(),
                    a == null ? null : Long.toString(a.range().first()), a == null ? null : Long.toString(a.range().limit()), s.lastError());
        }
        return new ClusterView(node.role().wireName(), node.nodeName(), node.clusterAddress(), counts, reg);
    }

    private static int count(List<WorkerView> all, MemberState state) {
        return (int) all.stream().filter(w -> w.state() == state).count();
    }

    /** The workers by id; 409 {@code not-a-master} on a standalone server or a worker. */
    @GetMapping("/api/v1/cluster/workers")
    public List<WorkerItem> workers(HttpServletRequest request) {
        boolean admin = request.isUserInRole("ADMIN"); // which token a worker holds helps whoever wants to steal one
        return node.workers().stream().map(w -> item(w, admin)).toList();
    }

    private WorkerItem item(WorkerView w, boolean admin) {
        String tokenId = admin && !w.tokenId().isEmpty() ? w.tokenId() : null;
        String tokenName = tokenId == null ? null : tokens.find(tokenId).map(TokenRecord::name).orElse(null);
        DedupLinks links = dedupLinks.getIfAvailable();
        IndexReport index = links == null ? null : links.indexReport(w.workerId());
        StartOverMark over = links == null ? null : links.startedOver(w.workerId());
        // the registry holds "" and zeros for what the node has not told yet (before its REGISTER, its first heartbeat)
        boolean loadKnown = !w.load().equals(WorkerLoad.NONE);
        boolean capacityKnown = w.capacity().cpus() > 0;
        TakeoverFence fence = node.takeoverFence(w.workerId());
        return new WorkerItem(w.workerId(), w.nodeName(), w.address().isEmpty() ? null : w.address(), w.state().wireName(), w.epoch(),
                Long.toString(w.range().first()), Long.toString(w.range().limit()),
                w.lastHeartbeatMillis() == 0 ? null : Instant.ofEpochMilli(w.lastHeartbeatMillis()).toString(),
                w.load().loadMilli() < 0 ? null : w.load().loadMilli() / 1000.0, loadKnown ? w.load().heapUsedBytes() : null,
                loadKnown ? w.load().heapMaxBytes() : null, loadKnown ? w.load().diskFreeBytes() : null,
                capacityKnown ? w.capacity().cpus() : null, capacityKnown ? w.capacity().diskBytes() : null,
                w.softwareVersion().isEmpty() ? null : w.softwareVersion(), tokenId, tokenName,
                index == null ? null : index.entries(), index == null ? null : Instant.ofEpochMilli(index.atMillis()).toString(),
                over == null ? null : new StartedOver(Instant.ofEpochMilli(over.atMillis()).toString(), over.reason().apiName()),
                rangeData(w.workerId()), fence.archiveEpoch(), fence.pbnFloor() == 0 ? null : Long.toString(fence.pbnFloor()));
    }

    private RangeData rangeData(long workerId) {
        ClusterServer server = clusterServer.getIfAvailable();
        RemoteRangeStore store = server == null ? null : server.rangeStores().up(workerId);
        RangeDataReport r = store == null ? null : store.report();
        return r == null ? null : new RangeData(r.state(), r.pbnsUsed(), r.logBytes(), Instant.ofEpochMilli(r.atMillis()).toString());
    }

    /** The worker token a worker is to be bound to: its id, as {@code GET /api/v1/tokens} lists it. */
    public record RebindRequest(String tokenId) {
    }

    /**
     * Binds a worker to another worker token (admin; rotating a worker's token without losing its id,
     * range or dedup index): 200 with the worker. 400 {@code invalid-request} unless the token is a
     * valid (not revoked, not expired) token of role worker; 404 {@code unknown-credential},
     * {@code unknown-worker}; 409 {@code token-node-limit} if the token is bound to
     * {@code holdfast.cluster.max-nodes-per-token} nodes already, {@code not-a-master}. Nothing
     * changes on a refusal.
     */
    @Audited("cluster.worker.rebind")
    @PutMapping("/api/v1/cluster/workers/{id}/token")
    public WorkerItem rebindWorker(@PathVariable long id, @RequestBody(required = false) RebindRequest body, HttpServletRequest request) {
        if (body == null || body.tokenId() == null || body.tokenId().isBlank()) {
            throw new IllegalArgumentException("tokenId is required: the id of a token of role worker (GET /api/v1/tokens lists them)");
        }
        TokenRecord t = workerToken(body.tokenId());
        long bound = node.rebindWorker(id, t.id()).workerId();
        request.setAttribute(AuditFilter.TARGET_ATTRIBUTE, "worker:" + bound + " token:" + t.id());
        return adminItem(bound);
    }

    /**
     * Token {@code tokenId}, which a worker is to be bound to: 404 {@code unknown-credential} if there
     * is none, 400 {@code invalid-request} unless it is a valid (not revoked, not expired) worker token.
     */
    private TokenRecord workerToken(String tokenId) {
        TokenRecord t = tokens.require(tokenId);
        if (t.role() != Role.WORKER) {
            throw new IllegalArgumentException("token " + t.id() + " has role " + t.role().wireName()
                    + "; a worker is bound to a token of role worker (POST /api/v1/tokens with role worker makes one)");
        }
        if (t.revoked() || tokens.expired(t)) {
            throw new IllegalArgumentException("token " + t.id() + " is " + (t.revoked() ? "revoked" : "expired")
                    + "; bind the worker to a valid worker token (POST /api/v1/tokens with role worker makes one)");
        }
        return t;
    }

    /** Worker {@code id} as an admin sees it in the list, after a change. */
    private WorkerItem adminItem(long id) {
        return node.workers().stream().filter(w -> w.workerId() == id).findFirst().map(w -> item(w, true))
                .orElseThrow(() -> new UnknownWorkerException(id));
    }

    /**
     * Removes a worker that is not connected (admin): 204; 404 {@code unknown-worker}; 409
     * {@code worker-connected} while it is connected, {@code not-a-master} off a master,
     * {@code data-on-workers} on a master that keeps its blocks on the workers. Forgets
     * stop waiting for it, and its index start-over mark goes (from memory and the catalog); its node
     * name may register again as a new worker (new id and range, its old dedup index wiped).
     */
    @Audited("cluster.worker.remove")
    @NeedsLocalBlocks // with the blocks on the workers a removed worker takes the only copy of its range with it: replace it instead
    @DeleteMapping("/api/v1/cluster/workers/{id}")
    public ResponseEntity<Void> removeWorker(@PathVariable long id) {
        node.removeWorker(id);
        DedupLinks links = dedupLinks.getIfAvailable();
        if (links != null) {
            links.removed(id);
        }
        return ResponseEntity.noContent().build();
    }

    /**
     * The node that takes a lost worker over: its {@code holdfast.store.s3.node}, and the id of the
     * worker token it will register with (optional, advised: bound at once, so no other worker token
     * can register {@code node} first).
     */
    public record ReplaceRequest(String node, String tokenId) {
    }

    /**
     * Hands a lost worker's id and PBN range to another node (admin; its host died for good): 200
     * with the worker, now named {@code node}, still lost, bound to {@code tokenId} if given (only
     * that token registers {@code node} then), else to no token (the next worker token that
     * registers {@code node} binds it); that registration gets the epoch one higher. The old node's
     * name is forgotten: if it comes back it registers as a new worker. 400 {@code invalid-request}
     * without {@code node}, for a malformed one, or for a {@code tokenId} that is not a valid worker
     * token; 404 {@code unknown-worker}, {@code unknown-credential}; 409 {@code worker-connected}
     * while the master holds its connection, {@code node-name-taken} if a worker holds {@code node}
     * (this one too), {@code token-node-limit}, {@code not-a-master}. Nothing changes on a refusal.
     */
    @Audited("cluster.worker.replace")
    @PostMapping("/api/v1/cluster/workers/{id}/replace")
    public WorkerItem replaceWorker(@PathVariable long id, @RequestBody(required = false) ReplaceRequest body,
                                    HttpServletRequest request) {
        if (body == null || body.node() == null || body.node().isBlank()) {
            throw new IllegalArgumentException("node is required: the node name (holdfast.store.s3.node) of the host that takes worker "
                    + id + " over");
        }
        String tokenId = body.tokenId() == null || body.tokenId().isBlank() ? null : workerToken(body.tokenId()).id();
        WorkerRecord r = node.replaceWorker(id, body.node(), tokenId);
        request.setAttribute(AuditFilter.TARGET_ATTRIBUTE, "worker:" + r.workerId() + " node:" + r.nodeName()
                + (tokenId == null ? "" : " token:" + tokenId));
        return adminItem(r.workerId());
    }

    /**
     * The confirmation of a takeover fence reset: the worker id and the takeover epoch to drop, as
     * {@code GET /api/v1/cluster/workers} shows them ({@code id}, {@code takeoverEpoch}).
     */
    public record FenceResetRequest(Long workerId, Long takeoverEpoch) {
    }

    /**
     * Drops a worker's takeover fence epoch (admin; an older node of it is wanted back on purpose: the
     * node that took the range over was destroyed, or a disk was restored): 200 with the worker, its
     * {@code takeoverEpoch} 0; the PBN floor stays. Audited {@code cluster.worker.fence-reset}, target
     * {@code worker:<id> takeover-epoch:<dropped>}. 400 {@code invalid-request} unless the body names
     * this worker id and an epoch; 404 {@code unknown-worker}; 409 {@code fence-reset-refused} if the
     * fence is not at the confirmed epoch (changed since the caller looked) or holds none,
     * {@code worker-connected} while a node of the worker is connected, {@code not-a-master}. Nothing
     * changes on a refusal.
     */
    @Audited("cluster.worker.fence-reset")
    @PostMapping("/api/v1/cluster/workers/{id}/takeover-fence/reset")
    public WorkerItem resetTakeoverFence(@PathVariable long id, @RequestBody(required = false) FenceResetRequest body,
                                         HttpServletRequest request) {
        if (body == null || body.workerId() == null || body.takeoverEpoch() == null) {
            throw new IllegalArgumentException("a takeover fence reset is confirmed by naming the worker and the epoch it drops:"
                    + " {\"workerId\": " + id + ", \"takeoverEpoch\": <takeoverEpoch as GET /api/v1/cluster/workers shows it>}");
        }
        if (body.workerId() != id) {
            throw new IllegalArgumentException("the confirmation names worker " + body.workerId() + " but the path worker " + id
                    + "; name the worker whose fence you mean to reset in both");
        }
        TakeoverFence old = node.resetTakeoverFence(id, body.takeoverEpoch());
        LOG.warn("{} reset worker {}'s takeover fence: epoch {} dropped (PBN floor {} kept); a node of it archiving at a lower"
                + " epoch may register again", Principals.name(request), id, old.archiveEpoch(), old.pbnFloor());
        request.setAttribute(AuditFilter.TARGET_ATTRIBUTE, "worker:" + id + " takeover-epoch:" + old.archiveEpoch());
        return adminItem(id);
    }

    /**
     * Rebuilds a worker's dedup index from the master's store (admin): a job (202, its URL in
     * Location) that teaches the worker every stored block no other worker holds, so duplicates of
     * what only a lost index held are found again. 404 {@code unknown-worker}; 409
     * {@code rebuild-refused} while that or any other registered worker is not connected, or a
     * rebuild or GC job is queued or running; 409 {@code not-a-master} off a master.
     */
    @Audited("cluster.worker.rebuild")
    @PostMapping("/api/v1/cluster/workers/{id}/rebuild")
    public ResponseEntity<JobView> rebuildWorker(@PathVariable long id, HttpServletRequest request) {
        WorkerIndexRebuildJobs r = rebuilds.getIfAvailable();
        if (r == null) {
            throw new NotAMasterException(node.role(), node.clusterAddress());
        }
        return JobController.accepted(r.start(id, Principals.name(request)));
    }
}
