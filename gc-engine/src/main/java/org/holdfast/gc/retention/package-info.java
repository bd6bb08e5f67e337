/**
 * Retention arithmetic: policies ({@link org.holdfast.gc.retention.RetentionPolicy}), the expiry a
 * snapshot gets when it is taken ({@link org.holdfast.gc.retention.ExpiryCalculator}), the
 * range-maximum of expiries used for correction 2 ({@link org.holdfast.gc.retention.RangeMaxExpiry})
 * and the periodic decision of what to delete, hold or release
 * ({@link org.holdfast.gc.retention.RetentionPlanner}); and, for people, which rule keeps a snapshot
 * and until when ({@link org.holdfast.gc.retention.RetentionExplainer}, also the prune simulator).
 * Times are epoch milliseconds, UTC calendar.
 */
package org.holdfast.gc.retention;
