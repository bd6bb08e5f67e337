/**
 * Fingerprint containers of the Sungem engine (thesis 5.4.3, 5.7, 5.8).
 *
 * <p>A <em>container</em> holds up to U_container related fingerprints with their PBNs, in the
 * order they were appended (the <em>offset</em> of a fingerprint never changes). Its structures:
 * the fingerprint index FI (fingerprint to offset), the reverse index RFI (offset to fingerprint:
 * the offset-ordered arrays themselves), the segment index SI (offset to the up to K stored
 * segments holding it) and an LRU stamp per stored segment. A <em>stored segment</em> is a run of
 * consecutive offsets of one container. The {@code ContainerStore} caches containers in memory,
 * buffers dirty ones for a background writer, and keeps them as checksummed files. Nothing here
 * imports Spring.
 */
package org.holdfast.server.container;
