/**
 * BOSC (batching operations with sequential commit, thesis 5.6): every GMA update is first
 * appended to a write-ahead {@link org.holdfast.gc.bosc.UpdateLog} (group commit), then queued per
 * GMA chunk ({@link org.holdfast.gc.bosc.ChunkQueues}), and applied by background
 * {@link org.holdfast.gc.bosc.Committer} threads chunk by chunk in disk order. The oldest
 * uncommitted LSN, written to a checkpoint file after each commit pass, is where replay starts
 * after a crash. {@link org.holdfast.gc.bosc.BoscPipeline} ties the pieces together.
 */
package org.holdfast.gc.bosc;
