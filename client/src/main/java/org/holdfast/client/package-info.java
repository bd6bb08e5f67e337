/**
 * The Holdfast agent: reads a volume, finds what changed since its last snapshot, uploads only
 * that, and restores snapshots bit for bit. Failures reach the user as an
 * {@link org.holdfast.client.AgentException} with an {@link org.holdfast.client.ExitCode}.
 */
package org.holdfast.client;
