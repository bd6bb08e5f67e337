/**
 * The Spring Boot appliance: the main class and its command line ({@link org.holdfast.server.app.ServerCli}:
 * {@code start} and the offline tools, the only package that may import picocli), configuration
 * properties, and the wiring of the core (store, catalog, engine, ingest, restore) with {@code @Bean}
 * methods that call constructors. The only package besides {@code api} that may import Spring.
 */
package org.holdfast.server.app;
