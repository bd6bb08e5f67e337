/**
 * The resident agent ({@code holdfast-agent daemon}): a validated YAML configuration
 * ({@link org.holdfast.client.daemon.ConfigReader}), cron schedules
 * ({@link org.holdfast.client.daemon.CronSchedule}), one worker per volume that runs its backup with
 * pre and post hooks and network retries, a run log in the state directory, and a control socket
 * for {@code run-now} and {@code status}. The backup itself is the CLI's
 * ({@link org.holdfast.client.daemon.VolumeBackup}); nothing here speaks the server's protocol.
 */
package org.holdfast.client.daemon;
