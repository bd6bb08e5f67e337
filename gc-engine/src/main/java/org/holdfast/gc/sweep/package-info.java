/**
 * The sweep: finds PBNs with RC = 0, ET in the past, no pin and no grace protection, and hands
 * them to the server's {@link org.holdfast.gc.sweep.BlockReclaimer}. {@link org.holdfast.gc.sweep.GraceGuard}
 * closes the race with backups in progress.
 */
package org.holdfast.gc.sweep;
