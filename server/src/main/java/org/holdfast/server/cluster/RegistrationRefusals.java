package org.holdfast.server.cluster;

import java.util.regex.Pattern;
import org.holdfast.common.id.PbnRange;

/**
 * The refusals a registration, a rebind or a replacement meets before anything changes, each a
 * {@link RegistrationRefusedException} whose message says what to do: a malformed node name, a node
 * bound to another token, a token at its node limit, a second live connection of one node, a new
 * range that would overlap a stored one or lie past the PBN space, and a replacement's name clash.
 * Reads the {@link Members} and the {@link MembershipSettings}, changes nothing. Not thread-safe:
 * {@link WorkerRegistry} asks it under its lock, so a check and the change it allows are one step.
 * The takeover refusals are the {@link TakeoverGuard}'s, the older copy's the {@link NodeGenerations}'.
 */
final class RegistrationRefusals {
    /** A node name: what {@code holdfast.store.s3.node} allows in object keys, 1 to 64 characters. */
    static final Pattern NODE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    private final Members members;
    private final MembershipSettings settings;

    RegistrationRefusals(Members members, MembershipSettings settings) {
        this.members = members;
        this.settings = settings;
    }

    /** Refuses (invalid node name) unless {@code nodeName} matches {@link #NODE_NAME}. */
    static void checkNodeName(String nodeName) {
        if (nodeName == null || !NODE_NAME.matcher(nodeName).matches()) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.INVALID_NODE_NAME, "node name '" + nodeName
                    + "' is not 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter or digit); set"
                    + " holdfast.store.s3.node on the worker");
        }
    }

    /**
     * Refuses token {@code tokenId} registering node {@code nodeName}, known as {@code m} (null: a new
     * node), before anything about the node's connection is said: bound to another token, or (when the
     * registration would bind it) the token at its node limit.
     */
    void refuseToken(Member m, String nodeName, String tokenId) {
        if (m != null && m.record().bound() && !m.record().tokenId().equals(tokenId)) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.TOKEN_MISMATCH, "node " + nodeName
                    + " is bound to another worker token; use the token it first registered with, or remove the worker (DELETE"
                    + " /api/v1/cluster/workers/" + m.record().workerId() + ") to re-register it, or have an admin bind it to this"
                    + " token (PUT /api/v1/cluster/workers/" + m.record().workerId() + "/token)");
        }
        if (m == null || !m.record().bound()) {
            refuseOverCap(tokenId, nodeName);
        }
    }

    /** Refuses binding one more node ({@code nodeName}) to {@code tokenId} once it holds the maximum; removed workers no longer count. */
    void refuseOverCap(String tokenId, String nodeName) {
        long held = members.heldBy(tokenId);
        if (held >= settings.maxNodesPerToken()) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.TOO_MANY_NODES, "worker token " + tokenId
                    + " has registered " + held + " node names already, the most holdfast.cluster.max-nodes-per-token allows; node "
                    + nodeName + " needs a token of its own (one per worker), or remove a retired worker (DELETE"
                    + " /api/v1/cluster/workers/{id})");
        }
    }

    /**
     * Refuses a second connection of node {@code nodeName}, known as {@code m}, while the first is
     * connected and not lost at {@code nowNanos}: two processes with one node name would write into one range.
     */
    void refuseLive(Member m, String nodeName, long nowNanos) {
        if (m.connected() && m.state(settings, nowNanos) != MemberState.LOST) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.NODE_CONFLICT, "node '" + nodeName
                    + "' is registered already as worker " + m.record().workerId() + " from " + m.address()
                    + " and still sending heartbeats; give every worker its own holdfast.store.s3.node, or stop the other process");
        }
    }

    /**
     * The PBN range of worker {@code workerId} by the settings: {@code [firstPbn + (id-1) * size, firstPbn + id * size)}.
     *
     * @throws RegistrationRefusedException (no range left) if it lies past the PBN space
     */
    PbnRange rangeOf(long workerId) {
        try {
            return settings.rangeOf(workerId);
        } catch (ArithmeticException e) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.NO_RANGE_LEFT, "no PBN range is left for worker "
                    + workerId + " with holdfast.cluster.pbn-range-size=" + settings.rangeSize() + "; reuse node names of retired workers");
        }
    }

    /** Refuses new worker {@code r} whose range overlaps a stored one: a lowered range size (or moved first PBN) would cut it out of that. */
    void refuseOverlap(WorkerRecord r) {
        for (Member o : members.all()) {
            if (o.record().range().overlaps(r.range())) {
                throw new RegistrationRefusedException(RegistrationRefusedException.Reason.NO_RANGE_LEFT, "the PBN range " + r.range()
                        + " of new worker " + r.workerId() + " (" + r.nodeName() + ") overlaps worker " + o.record().workerId() + " ("
                        + o.record().nodeName() + ", " + o.record().range() + "): holdfast.cluster.pbn-range-size was changed after"
                        + " workers registered; set it back to " + o.record().range().size());
            }
        }
    }

    /** Refuses handing worker {@code m} to node {@code newNodeName} if that is its own node name or another worker's. */
    void refuseReplacement(Member m, String newNodeName) {
        long workerId = m.record().workerId();
        if (m.record().nodeName().equals(newNodeName)) {
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.NODE_CONFLICT, "worker " + workerId
                    + " is node " + newNodeName + " already; a replacement names the new host's node (holdfast.store.s3.node there),"
                    + " and the same node with another token needs a rebind (PUT /api/v1/cluster/workers/" + workerId + "/token)");
        }
        Member holder = members.byNode(newNodeName);
        if (holder != null) {
            long h = holder.record().workerId();
            throw new RegistrationRefusedException(RegistrationRefusedException.Reason.NODE_CONFLICT, "node " + newNodeName
                    + " is worker " + h + " already; give the new host a node name no worker has (GET /api/v1/cluster/workers lists"
                    + " them). If worker " + h + " is the new host itself, started before a replacement named it, it joined as a new"
                    + " worker: stop it, remove worker " + h + " (DELETE /api/v1/cluster/workers/" + h + "), replace again and start it");
        }
    }
}
