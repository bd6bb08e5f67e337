/**
 * Start-up support for the launcher script: {@link org.holdfast.client.launch.ExplodedLayout}
 * unpacks the executable jar into plain jars that a class-data-sharing archive can cover.
 */
package org.holdfast.client.launch;
