/**
 * The agent-facing Netty server: one {@link org.holdfast.server.ingest.IngestServer}, one
 * connection handler per agent connection, one {@link org.holdfast.server.ingest.BackupSession}
 * per backup.
 *
 * <p>Threading: the event loop only decodes and encodes frames. Everything that blocks (disk,
 * fsync, RocksDB, hashing) runs on a shared pool of session threads, through a
 * {@link org.holdfast.server.ingest.SerialExecutor} per connection so that the frames of one
 * connection are handled in order, one at a time. Reading from a connection pauses (autoRead off)
 * while too many of its frames wait, so a fast agent cannot fill the heap.
 */
package org.holdfast.server.ingest;
