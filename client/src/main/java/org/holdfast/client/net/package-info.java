/**
 * The agent's side of a connection to the server's ingest port: a Netty channel with the protocol
 * codecs, turned into blocking send/receive calls for the backup, restore and listing flows.
 */
package org.holdfast.client.net;
