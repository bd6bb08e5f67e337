/**
 * The backup flow of protocol v1 on the agent's side: changed blocks are grouped into ENTRIES runs
 * ({@link org.holdfast.client.upload.RunAssembler}), their payloads wait in a bounded
 * {@link org.holdfast.client.upload.PayloadWindow} until the server's NEED says which it lacks,
 * and {@link org.holdfast.client.upload.BlockUploader} compresses and sends those as BLOCKS.
 * {@link org.holdfast.client.upload.BackupSession} runs the whole backup.
 */
package org.holdfast.client.upload;
