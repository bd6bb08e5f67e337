package org.holdfast.server.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an endpoint (or a controller's every endpoint) that is about the master's own range and data
 * store: reclaim-now (it frees PBNs of the master's range), and removing a worker. With
 * {@code holdfast.cluster.data=workers} the blocks live on the workers, so the app refuses these
 * before they run. Verify and the image API are not marked: they read blocks through the
 * {@code BlockHome}, which reaches the workers; fsck is not either: there it checks the workers'
 * GC counts ({@code ClusterCountsCheck}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface NeedsLocalBlocks {
}
