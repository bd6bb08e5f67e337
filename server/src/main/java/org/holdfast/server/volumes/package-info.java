/**
 * Volumes as an operator manages them, without Spring: creating one before its first backup
 * ({@link org.holdfast.server.volumes.VolumeAdmin}), its quota and the backup results the ingest
 * reports ({@link org.holdfast.server.volumes.QuotaAdmission}), and what it costs in storage
 * ({@link org.holdfast.server.volumes.VolumeUsage}).
 *
 * <p>A <em>quota</em> bounds a volume's logical size: the size of the image a backup describes
 * (BACKUP_BEGIN's volume size). A backup over it is refused before anything is stored.
 */
package org.holdfast.server.volumes;
