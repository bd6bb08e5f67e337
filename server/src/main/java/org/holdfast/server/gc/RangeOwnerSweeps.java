package org.holdfast.server.gc;

import java.util.List;

/**
 * The sweeps of the PBN ranges other nodes own (distributed GC with blocks on workers), which the
 * GC cycle asks for after its own sweep: each owner frees what its own GC metadata finds
 * unreferenced and expired, by its own clock. Implemented where the links are (no Netty here).
 */
public interface RangeOwnerSweeps {
    /** No other owner: a standalone server, or a master that keeps its blocks itself. */
    RangeOwnerSweeps NONE = now -> List.of();

    /** Asks every owner to sweep as of {@code now} (epoch ms); one line per owner saying what became of it, for the job log. */
    List<String> sweep(long now);
}
