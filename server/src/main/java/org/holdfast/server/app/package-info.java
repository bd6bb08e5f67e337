/**
 * The Spring Boot appliance: the main class, configuration properties, and the wiring of the core
 * (store, catalog, engine, ingest, restore) with {@code @Bean} methods that call constructors. The
 * only package besides {@code api} that may import Spring.
 */
package org.holdfast.server.app;
