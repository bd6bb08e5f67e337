/**
 * The tools Holdfast is compared with: a {@link org.holdfast.bench.peers.PeerTool} backs up each
 * daily image of a volume as successive snapshots of one path and restores the last one (restic
 * with its defaults, borg with {@code -e none}).
 */
package org.holdfast.bench.peers;
