/**
 * The physical storage of unique blocks and the metadata database underneath everything.
 *
 * <p>Nouns: a <em>data log</em> ({@link org.holdfast.server.store.DataLog}) is an append-only file
 * of block records; a <em>PBN</em> names one record forever; the <em>location index</em>
 * ({@link org.holdfast.server.store.LocationIndex}) maps PBN to (log, offset, length, fingerprint);
 * the <em>durable point</em> is the (log, length) up to which every record is fsynced and indexed;
 * the <em>metadata database</em> ({@link org.holdfast.server.store.MetadataDb}) is the single RocksDB
 * that holds the location index, the catalog and the exact fingerprint index in column families.
 * {@link org.holdfast.server.store.DataStore} ties them together. References elsewhere name PBNs,
 * never locations, so compaction can move records without touching any snapshot.
 *
 * <p>Checked {@code IOException}/{@code RocksDBException} never leave this package and
 * {@code catalog}: they become a {@link org.holdfast.server.store.StoreException} naming store, path
 * and key.
 */
package org.holdfast.server.store;
