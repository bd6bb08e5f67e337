package org.holdfast.server.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an endpoint (or a controller's every endpoint) that acts through the GC's bookkeeping: GC
 * runs, fsck, retention, holds, deletions. On a store created with bookkeeping off the app refuses
 * them before they run, since nothing there was counted.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface NeedsGcBookkeeping {
}
