/**
 * Identifiers shared by every module. A {@link org.holdfast.common.id.Fingerprint} is the SHA-256
 * of one block's bytes; a {@link org.holdfast.common.id.Pbn} names a stored unique block (0 is the
 * zero block, which is never stored); a volume is named by {@link org.holdfast.common.id.VolumeId};
 * a snapshot by its volume and its per-volume sequence number {@link org.holdfast.common.id.SnapshotId}.
 */
package org.holdfast.common.id;
