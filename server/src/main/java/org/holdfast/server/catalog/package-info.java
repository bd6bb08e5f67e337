/**
 * The snapshot catalog: volumes, snapshots and the versioned logical-to-physical map, in column
 * families of the metadata database.
 *
 * <p>Nouns: a <em>volume</em> ({@link org.holdfast.server.catalog.VolumeRecord}) has a name, a block
 * size, an internal id (used in keys) and its latest committed sequence; a <em>snapshot</em>
 * ({@link org.holdfast.server.catalog.SnapshotRecord}) is one committed backup; a <em>map entry</em>
 * (volume, LBN, birth sequence) → PBN says that from snapshot <em>birth</em> on, LBN holds PBN, until
 * a newer entry for that LBN; the <em>delta</em> ({@link org.holdfast.server.catalog.SnapshotDelta})
 * of a snapshot is the list of LBNs whose PBN it changed. {@link org.holdfast.server.catalog.SnapshotCommit}
 * writes a delta, its snapshot record and the volume's latest sequence in one synced batch, together
 * with whatever a {@link org.holdfast.server.catalog.CommitHook} adds (GC bookkeeping).
 */
package org.holdfast.server.catalog;
