/**
 * The sweep: finds PBNs with RC = 0, ET in the past, no pin and no grace protection, and hands
 * them to the server's {@link org.holdfast.gc.sweep.BlockReclaimer}. {@link org.holdfast.gc.sweep.GraceGuard}
 * closes the race with backups in progress. Reclaim-now's free step,
 * {@link org.holdfast.gc.sweep.Sweeper#sweepUnmarked}, frees instead every PBN outside an exact mark
 * ({@link org.holdfast.gc.sweep.LivePbns}) and outside the in-flight {@link org.holdfast.gc.sweep.GraceGuard.Watch},
 * whatever its ET.
 */
package org.holdfast.gc.sweep;
