/**
 * File steps every module repeats: {@link org.holdfast.common.io.DurableReplace} is the one
 * synced, atomic replace of a small file (checkpoints, owner and generation records, outbox parts).
 * Plain JDK only; callers translate {@code IOException} into their own layer's exception.
 */
package org.holdfast.common.io;
