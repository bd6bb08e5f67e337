/**
 * Reading a volume and finding what changed: {@link org.holdfast.client.scan.BlockReader} reads
 * and hashes in a pipeline, {@link org.holdfast.client.scan.ChangeDetector} compares against the
 * {@link org.holdfast.client.scan.StateFile} of the last committed snapshot,
 * {@link org.holdfast.client.scan.ChangedBlockList} restricts reading to externally known changed
 * ranges, and {@link org.holdfast.client.scan.VolumeScanner} ties them together.
 */
package org.holdfast.client.scan;
