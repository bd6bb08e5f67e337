package org.holdfast.server.cluster;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.holdfast.common.protocol.Register;

/**
 * The master's list of workers: registration, heartbeats, states, and the assignment of worker ids
 * and PBN ranges.
 *
 * <p>Assignments are for life: a node registers once and gets the next worker id and the range that
 * id implies ({@link MembershipSettings}); whenever it registers again (after a restart of either
 * side or a lost connection) it gets the same id and range with the epoch one higher. The record is
 * stored before the registration is answered, so a master restart cannot hand a range out twice.
 * The epoch lets later message types tell a stale connection's frames from the current one's:
 * {@link #heartbeat} and {@link #disconnected} name the epoch they belong to and are ignored for
 * any other.
 *
 * <p>A node is bound to the worker token that first registered it (its id is in the record, never
 * the secret): a registration with another token is refused, so a token stolen from one host cannot
 * take over another node's id, range and dedup role, and one token registers at most
 * {@link MembershipSettings#maxNodesPerToken()} node names, so it cannot take range after range. A
 * record stored before bindings existed binds to the next token that registers it. Only an admin
 * moves a binding ({@link #rebind}, to rotate a worker's token) or ends it ({@link #remove}, or
 * {@link #replace}, which hands a lost worker's id and range to another node name).
 *
 * <p>A second connection for a node that is connected and not lost is refused: two processes
 * configured with one node name would otherwise write into one range. A node whose connection went
 * silent for {@code lostAfter} may register again (it is probably the same process after a network
 * cut); its old connection is then stale. States are computed when asked from the silence on the
 * master's monotonic clock (a wall clock stepped forward must not make a live node lost; wall time
 * is kept for display only), so no timer is needed here. Thread-safe: every method holds the registry's lock (a handful of workers,
 * called once per heartbeat).
 *
 * <p>This class ties the parts together under that lock, so each check and the change it allows are
 * one step: the {@link Members} table (each {@link Member} with its connection and its state by the
 * clock), the {@link RegistrationRefusals}, the takeover rules (fence, PBN floor, the refusals of a
 * stale, unfenced or early node) of the {@link TakeoverGuard}, asked once the registration's own
 * checks pass, and the {@link NodeGenerations}.
 */
public final class WorkerRegistry {
    /** A node name: what {@code holdfast.store.s3.node} allows in object keys, 1 to 64 characters. */
    public static final Pattern NODE_NAME = RegistrationRefusals.NODE_NAME;

    private final MembershipStore store;
    private final MembershipSettings settings;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final TakeoverGuard guard;
    private final NodeGenerations generations;
    private final Members members;
    private final RegistrationRefusals refusals;

    /**
     * A registry holding what {@code store} remembers: every stored worker starts lost until it registers.
     *
     * @throws IllegalStateException if the stored records repeat an id or node name or overlap in range
     */
    public WorkerRegistry(MembershipStore store, MembershipSettings settings, Clock clock) {
        this(store, settings, clock, () -> Math.multiplyExact(clock.millis(), 1_000_000L));
    }

    /**
     * As above, with {@code nanoTime} the monotonic clock ({@code System::nanoTime} on a real master)
     * that times the workers' states and the wait before a takeover ({@link TakeoverWait}, in the
     * {@link TakeoverGuard}); {@code clock} only dates what is shown and stored. The constructor above
     * derives it from {@code clock}, for tests that move a fixed clock.
     */
    public WorkerRegistry(MembershipStore store, MembershipSettings settings, Clock clock, LongSupplier nanoTime) {
        this.store = store;
        this.settings = settings;
        this.clock = clock;
        this.nanoTime = nanoTime;
        this.guard = new TakeoverGuard(store, settings.lostAfter(), nanoTime);
        this.generations = new NodeGenerations(store);
        this.members = new Members(store);
        this.refusals = new RegistrationRefusals(members, settings);
        for (Map.Entry<Long, TakeoverFence> f : store.takeoverFences().entrySet()) {
            if (members.get(f.getKey()) != null) {
                guard.restore(f.getKey(), f.getValue());
            }
        }
    }

    public MembershipSettings settings() {
        return settings;
    }

    /**
     * Registers {@code nodeName} for the token {@code tokenId}, connected from {@code address}: a
     * known node gets its id and range back with the epoch one higher, a new node the next id and
     * range; either is bound to {@code tokenId} unless it is bound already.
     *
     * @throws RegistrationRefusedException for a malformed node name, a node bound to another token,
     *         a token at its node limit, a node that is connected and not lost, or when no range is
     *         left; nothing changes then
     */
    public WorkerRecord register(String nodeName, String tokenId, String address, WorkerCapacity capacity, String softwareVersion) {
        return register(nodeName, tokenId, address, capacity, softwareVersion, 0);
    }

    /**
     * As above, for a node whose range data archives at takeover epoch {@code archiveEpoch} (0: none
     * recorded, or an older worker that does not say): refused ({@code TAKEN_OVER}) if the master
     * heard a higher one for the node's worker id, i.e. another node took the range over while this
     * one was away; its range data is stale. A higher epoch is not kept here: the node reads it from
     * whatever catalog its directory holds, maybe another worker's (a copied or re-registered
     * directory, whose store then refuses), and kept it would refuse this worker id's own nodes for
     * good; only an open store's report raises it ({@link #archivedAt}). A negative {@code archiveEpoch}
     * (a worker before cluster version 5, which neither says it nor takes a PBN floor) is refused
     * ({@code UNFENCED_VERSION}) once the master holds a fence for the worker id.
     */
    public WorkerRecord register(String nodeName, String tokenId, String address, WorkerCapacity capacity,
                                 String softwareVersion, long archiveEpoch) {
        return register(nodeName, tokenId, address, capacity, softwareVersion, archiveEpoch, Register.NO_GENERATION);
    }

    /**
     * As above, for a node presenting node generation {@code generation} (cluster version 7; 0: its range
     * data holds none; {@link Register#NO_GENERATION}: an older worker): refused ({@code OLDER_COPY}) below
     * the generation its worker id acknowledged (a cloned or restored range-data directory). Once
     * registered, the next generation is issued and stored ({@link #issuedGeneration}).
     */
    public synchronized WorkerRecord register(String nodeName, String tokenId, String address, WorkerCapacity capacity,
                                              String softwareVersion, long archiveEpoch, long generation) {
        checkNodeName(nodeName);
        if (tokenId == null || tokenId.isEmpty()) {
            throw new IllegalArgumentException("a worker registers with the id of the API token it presented; got none");
        }
        long now = clock.millis();
        long nowNanos = nanoTime.getAsLong();
        Member m = members.byNode(nodeName);
        // the binding first: a holder of another token learns nothing about the node's connection
        refusals.refuseToken(m, nodeName, tokenId);
        if (m != null) {
            refusals.refuseLive(m, nodeName, nowNanos);
            guard.refuseRegistration(m.record(), archiveEpoch);
            generations.refuseOlderCopy(m.record(), generation);
        }
        long id = members.nextId();
        WorkerRecord r = m == null ? new WorkerRecord(id, nodeName, 1, refusals.rangeOf(id), now, now, tokenId)
                : m.record().reregistered(now, tokenId);
        if (m == null) {
            refusals.refuseOverlap(r);
        }
        store.put(r); // durable before anyone hears of it; if this throws nothing changed
        if (m == null) {
            m = members.add(r);
        }
        m.connected(r, now, nowNanos);
        guard.registered(r.workerId(), archiveEpoch);
        if (generation >= 0) {
            generations.issue(r.workerId(), generation); // stored before REGISTERED names it
        }
        m.describedAs(address, capacity, softwareVersion);
        return r;
    }

    /**
     * Notes that worker {@code workerId}'s connection of {@code epoch} reports its range data
     * archiving at {@code archiveEpoch} (a node that took the range over reports its new epoch here);
     * kept only if {@code serving} (an open store, whose catalog matched this worker id: an epoch
     * read from a directory whose store refuses may be another worker's). False (nothing noted) if
     * that connection is not the worker's current one.
     *
     * @throws RegistrationRefusedException ({@code TAKEN_OVER}) if a higher epoch was heard: the connection must end
     */
    public synchronized boolean archivedAt(long workerId, long epoch, long archiveEpoch, boolean serving) {
        if (members.current(workerId, epoch) == null) {
            return false;
        }
        guard.refuseTakenOver(workerId, archiveEpoch);
        if (serving) {
            guard.raise(workerId, archiveEpoch, 0);
            guard.takeoverEnded(workerId); // a node that took the range over claimed it: the old node may meet the fence now
        }
        return true;
    }

    /**
     * Notes that worker {@code workerId}'s connection of {@code epoch} reports its range store refused
     * (a takeover refused, say): a takeover that node was in ends, so the old node may register again
     * (its own bucket listing then finds any epoch claimed). Ignored for a connection that is not the current one.
     */
    public synchronized void rangeDataRefused(long workerId, long epoch) {
        if (members.current(workerId, epoch) != null) {
            guard.takeoverEnded(workerId);
        }
    }

    /**
     * Notes that a node of worker {@code workerId} (any connection of it, also one that ended) handed
     * out PBNs below {@code past}: no node that takes the range over may hand those out again.
     */
    public synchronized void handedOut(long workerId, long past) {
        Member m = members.get(workerId);
        if (m != null && past > 0) {
            guard.raise(workerId, 0, Math.min(past, m.record().range().limit()));
        }
    }

    /** The lowest PBN worker {@code workerId} may hand out next: its range's first, or past every PBN heard handed out. */
    public synchronized long pbnFloor(long workerId) {
        return Math.max(members.require(workerId).record().range().first(), guard.fence(workerId).pbnFloor());
    }

    /** The node generation last issued to worker {@code workerId} (0: none). */
    public synchronized long issuedGeneration(long workerId) {
        return generations.of(workerId).issued();
    }

    /** Worker {@code workerId}'s node generations as kept ({@link NodeGeneration#NONE}: none issued). */
    public synchronized NodeGeneration nodeGeneration(long workerId) {
        return generations.of(workerId);
    }

    /**
     * The node of worker {@code workerId}'s connection of {@code epoch} stored {@code generation} (its
     * first heartbeat on the link that got it): a copy of its range data from before is refused from now on.
     * Ignored for a connection that is not the worker's current one.
     */
    public synchronized void generationStored(long workerId, long epoch, long generation) {
        if (members.current(workerId, epoch) != null) {
            generations.acknowledged(workerId, generation);
        }
    }

    /** What the master heard of worker {@code workerId}'s range across its nodes ({@link TakeoverFence#NONE} if nothing). */
    public synchronized TakeoverFence fence(long workerId) {
        return members.get(workerId) == null ? TakeoverFence.NONE : guard.fence(workerId);
    }

    /**
     * Drops worker {@code workerId}'s takeover epoch (an admin who knowingly wants an older node of it
     * back: the newer node was destroyed, a disk restored on purpose), if it is {@code confirmedEpoch},
     * so a node whose range data archives at a lower epoch registers again; the PBN floor stays. Stored
     * (synced) before this returns.
     *
     * @return the fence before the reset
     * @throws UnknownWorkerException if no such worker is registered
     * @throws WorkerConnectedException while the master holds a connection of the worker (its node
     *         could raise the fence again at once, or be the newer node itself)
     * @throws FenceResetRefusedException if the fence holds no epoch or another one; nothing changes on a refusal
     */
    public synchronized TakeoverFence resetTakeoverFence(long workerId, long confirmedEpoch) {
        Member m = members.require(workerId);
        if (guard.fence(workerId).archiveEpoch() == 0) {
            // nothing to reset: refused as such first, so that an admin does not stop a serving node for nothing
            return guard.resetEpoch(workerId, confirmedEpoch);
        }
        if (m.connected()) {
            throw new WorkerConnectedException(m.record(), m.address(), "a takeover fence is reset only while no node of the worker is"
                    + " connected: stop that node (or wait until the master drops its silent connection, holdfast.cluster.lost-after),"
                    + " then reset the fence and start the older node");
        }
        return guard.resetEpoch(workerId, confirmedEpoch);
    }

    /**
     * Binds worker {@code workerId} to token {@code tokenId} (an admin rotating its token; the caller
     * checked that the token is a valid worker token): id, range and epoch stay, and the node's next
     * registration must present the new token. A live connection on the old token ends at its next
     * heartbeat ({@link #boundTo}); the worker then registers again with the token in its file.
     *
     * @return the record as stored now
     * @throws UnknownWorkerException if no such worker is registered
     * @throws RegistrationRefusedException (too many nodes) if {@code tokenId} is at its node limit; nothing changes then
     */
    public synchronized WorkerRecord rebind(long workerId, String tokenId) {
        Member m = members.require(workerId);
        if (m.record().tokenId().equals(tokenId)) {
            return m.record();
        }
        refusals.refuseOverCap(tokenId, m.record().nodeName());
        WorkerRecord r = m.record().reboundTo(tokenId);
        store.put(r); // durable first; if this throws nothing changed
        m.record(r);
        return r;
    }

    /**
     * False if worker {@code workerId} is bound to another token than {@code tokenId} now: a
     * connection registered on the token an admin rebound the worker away from ends at its next
     * heartbeat, even while that token stays valid (it may serve other workers).
     */
    public synchronized boolean boundTo(long workerId, String tokenId) {
        Member m = members.get(workerId);
        return m == null || !m.record().bound() || m.record().tokenId().equals(tokenId);
    }

    /** Throws {@link RegistrationRefusedException} (invalid node name) unless {@code nodeName} matches {@link #NODE_NAME}. */
    public static void checkNodeName(String nodeName) {
        RegistrationRefusals.checkNodeName(nodeName);
    }

    /**
     * Removes worker {@code workerId}, which must not be connected: its record is deleted from the
     * store (its id and range are never handed out again) and forgets no longer wait for it. Its
     * node name may register later, as a new worker with a new id and range at epoch 1.
     *
     * @return the removed record
     * @throws UnknownWorkerException if no such worker is registered
     * @throws WorkerConnectedException if the worker is connected now; nothing changes then
     */
    public synchronized WorkerRecord remove(long workerId) {
        Member m = members.require(workerId);
        if (m.connected()) {
            throw new WorkerConnectedException(m.record(), m.address());
        }
        store.remove(workerId); // durable first; if this throws nothing changed
        members.remove(m);
        guard.forget(workerId);
        generations.forget(workerId);
        return m.record();
    }

    /**
     * Hands worker {@code workerId}, whose host is lost, to node {@code newNodeName}, bound to no
     * token: the next worker token that registers {@code newNodeName} binds it. Prefer
     * {@link #replace(long, String, String)} with the new host's token: until that registration any
     * worker token with room under its node limit (a stolen one too) could take the id.
     */
    public WorkerRecord replace(long workerId, String newNodeName) {
        return replace(workerId, newNodeName, null);
    }

    /**
     * Hands worker {@code workerId}, whose host is lost, to node {@code newNodeName}: the record keeps
     * the id, range and epoch, names the new node and is bound to token {@code tokenId} (the caller
     * checked it is a valid worker token), so only that token registers {@code newNodeName}, and gets
     * the epoch one higher. With {@code tokenId} null or empty it is bound to no token and the next
     * worker token that registers {@code newNodeName} binds it (within its node limit). The old node's
     * name is unknown from then on: should it come back it registers as a new worker (new id and range,
     * epoch 1) and starts its index over. The record is stored (synced) before this returns.
     *
     * @return the record as stored now
     * @throws UnknownWorkerException if no such worker is registered
     * @throws WorkerConnectedException while the master holds a connection of the worker, even a
     *         silent one (it closes that after {@code lost-after}): that process could still answer
     *         dedup calls under this id
     * @throws RegistrationRefusedException {@code INVALID_NODE_NAME} for a malformed name,
     *         {@code NODE_CONFLICT} for the worker's own node name or one another worker holds,
     *         {@code TOO_MANY_NODES} if {@code tokenId} is at its node limit
     */
    public synchronized WorkerRecord replace(long workerId, String newNodeName, String tokenId) {
        checkNodeName(newNodeName);
        Member m = members.require(workerId);
        if (m.connected()) {
            throw new WorkerConnectedException(m.record(), m.address(), "only a lost worker is replaced: stop that process, or wait until"
                    + " the master drops its silent connection (holdfast.cluster.lost-after), then replace it");
        }
        refusals.refuseReplacement(m, newNodeName);
        String to = tokenId == null ? "" : tokenId;
        if (!to.isEmpty() && !to.equals(m.record().tokenId())) {
            refusals.refuseOverCap(to, newNodeName);
        }
        WorkerRecord r = m.record().replacedBy(newNodeName, to);
        store.put(r); // durable first; if this throws nothing changed
        members.rename(m, newNodeName);
        // the guard's "last heard" stays: the new host takes the range over, which waits until the lost host's delete lease ran out
        m.replacedBy(r);
        return r;
    }

    /**
     * Notes a heartbeat of worker {@code workerId}'s connection of {@code epoch}. False (nothing
     * noted) if that connection is not the worker's current one: the caller closes it.
     */
    public synchronized boolean heartbeat(long workerId, long epoch, WorkerLoad load) {
        Member m = members.current(workerId, epoch);
        if (m == null) {
            return false;
        }
        m.heard(clock.millis(), nanoTime.getAsLong(), load);
        guard.heard(workerId);
        return true;
    }

    /** The connection of {@code epoch} closed; the worker is lost unless a newer registration took over. */
    public synchronized void disconnected(long workerId, long epoch) {
        Member m = members.current(workerId, epoch);
        if (m != null) {
            m.disconnected();
        }
    }

    /** The state of worker {@code workerId} now, or null if no such worker was ever registered. */
    public synchronized MemberState state(long workerId) {
        Member m = members.get(workerId);
        return m == null ? null : m.state(settings, nanoTime.getAsLong());
    }

    /** Every worker ever registered, by id, with its state now. */
    public synchronized List<WorkerView> workers() {
        long now = nanoTime.getAsLong();
        List<WorkerView> out = new ArrayList<>();
        for (Member m : members.all()) {
            out.add(m.view(settings, now));
        }
        out.sort(Comparator.comparingLong(WorkerView::workerId));
        return out;
    }
}
