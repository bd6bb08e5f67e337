/**
 * The GC metadata array (GMA): per PBN a reference count (RC), an expiry time (ET, epoch
 * milliseconds), a pin count (holds) and flags (USED, FREED), in fixed 16-byte slots grouped into
 * 128 KiB chunks. A chunk is the unit of caching, locking, I/O and BOSC queuing.
 */
package org.holdfast.gc.gma;
