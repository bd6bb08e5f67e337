package org.holdfast.server.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks an endpoint (or a controller's every endpoint) that reads the blocks through the master's
 * own data store: verify and the image API. With {@code holdfast.cluster.data=workers} the blocks
 * live on the workers, where these do not reach yet, so the app refuses them before they run: a
 * verify there would read nothing and call the store clean.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface NeedsLocalBlocks {
}
