/**
 * Restoring a snapshot: {@link org.holdfast.client.restore.RestoreSession} drives the RESTORE
 * flow and verifies every block against its fingerprint; {@link org.holdfast.client.restore.RestoreWriter}
 * puts the bytes in place (holes in regular files, zeros on devices, atomic rename at the end).
 */
package org.holdfast.client.restore;
