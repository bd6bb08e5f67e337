package org.holdfast.common.protocol;

/**
 * REGISTER (0x40), worker to master on the cluster port: the first frame of a worker's connection.
 * Names the worker's node, carries its {@code worker} token, its software version and what it can
 * offer (CPUs, heap, disk); the master answers REGISTERED or ERROR (docs/protocol.md, "Cluster
 * messages").
 */
public record Register(int clusterVersion, String nodeName, String token, String softwareVersion, int cpus,
                       long heapMaxBytes, long diskBytes) implements Message {
    /**
     * The newest cluster protocol version this build speaks; a worker offers it, and the next older
     * one again to a master that refused it as UNSUPPORTED_VERSION (a master before version 2
     * accepts only 1, one before version 3 only 1 and 2, one before version 4 only 1 to 3). Version 2:
     * DEDUP_DONE may report an index start-over. Version 3: HEARTBEAT may carry a range-data report.
     * Version 4: the worker takes the GC frames (GC_DELTA, GC_PROTECT, GC_SWEEP and their kin).
     */
    public static final int CLUSTER_VERSION = 4;
    /** The oldest version a master of this build accepts. */
    public static final int MIN_CLUSTER_VERSION = 1;
    /** The first version whose DEDUP_DONE may carry an index start-over report. */
    public static final int START_OVER_REPORT_VERSION = 2;
    /** The first version whose HEARTBEAT may carry a range-data report ({@link Heartbeat.RangeData}). */
    public static final int RANGE_DATA_REPORT_VERSION = 3;
    /**
     * The first version whose worker takes the GC frames (0x54-0x5D): a worker before it closes its
     * link on them, so a master sends them only on a link of this version or newer, and a master
     * keeping its blocks on the workers registers no worker below it.
     */
    public static final int GC_FRAMES_VERSION = 4;

    public Register {
        Hello.checkU16("clusterVersion", clusterVersion);
        WireStrings.check("nodeName", nodeName, ProtocolLimits.MAX_NODE_NAME);
        WireStrings.check("token", token, ProtocolLimits.MAX_TOKEN);
        WireStrings.check("softwareVersion", softwareVersion, ProtocolLimits.MAX_SERVER_VERSION);
        Hello.checkU16("cpus", cpus);
        Heartbeat.checkNotNegative("heapMaxBytes", heapMaxBytes);
        Heartbeat.checkNotNegative("diskBytes", diskBytes);
    }

    @Override
    public MessageType type() {
        return MessageType.REGISTER;
    }

    @Override
    public String toString() {
        return "Register[clusterVersion=" + clusterVersion + ", nodeName=" + nodeName + ", token="
                + (token.isEmpty() ? "none" : "***") + ", softwareVersion=" + softwareVersion + ", cpus=" + cpus
                + ", heapMaxBytes=" + heapMaxBytes + ", diskBytes=" + diskBytes + "]";
    }
}
