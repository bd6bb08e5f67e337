/**
 * Statistics of the appliance for the REST API, the metrics and the console's charts: the data
 * directory's {@link org.holdfast.server.stats.Capacity}, what is stored and protected and how well
 * it deduplicates ({@link org.holdfast.server.stats.Statistics}, one {@link org.holdfast.server.stats.StatsReport}),
 * recent transfer rates ({@link org.holdfast.server.stats.TransferRates}), the daily series kept in the
 * catalog ({@link org.holdfast.server.stats.DailySeries}) and the record of agent connections
 * ({@link org.holdfast.server.stats.AgentLedger}). Free of Spring; wired in {@code app}.
 */
package org.holdfast.server.stats;
