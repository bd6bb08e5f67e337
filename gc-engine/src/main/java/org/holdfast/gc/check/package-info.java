/**
 * The independent checker: a mark-and-sweep over the catalog compared with the GMA and the data
 * store. It shares no logic with the bookkeeping, so it can serve as the oracle for it.
 */
package org.holdfast.gc.check;
