/**
 * qcow2 disk images as backup sources: the guest-visible content read through {@code qemu-nbd}
 * with a small NBD client, and change tracking with the image's persistent dirty bitmaps, rotated
 * one per committed snapshot (see docs/agent.md, "qcow2 images and dirty bitmaps").
 */
package org.holdfast.client.qcow2;
