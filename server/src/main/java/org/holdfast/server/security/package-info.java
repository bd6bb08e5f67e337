/**
 * Who may do what: roles, principals, volume scopes, token authentication as the ingest port and
 * the REST edge both need it, and the audit log's port.
 *
 * <p>Nouns: a <em>principal</em> is an authenticated user or API token; its <em>role</em> is one
 * of admin, operator, viewer, agent; an agent token's <em>volume scope</em> names the volumes (or
 * name patterns) it may back up, restore and list. This package is free of Spring and RocksDB:
 * Spring Security is wired in {@code app}, records are kept by {@code catalog}.
 */
package org.holdfast.server.security;
