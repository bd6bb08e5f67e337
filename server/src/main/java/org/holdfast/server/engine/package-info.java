/**
 * The dedup engine: the {@link org.holdfast.server.engine.FingerprintIndex} contract, its Sungem
 * implementation (thesis 5.3, 5.4, 5.7) and the master/worker one over Sungem workers (7.2).
 *
 * <p>Nouns: an <em>input segment</em> is a run of at most U_segment fingerprints of consecutive LBNs;
 * a <em>stored segment</em> a run of fingerprints kept together in a container; a <em>sample</em> a
 * fingerprint the SFI maps to the containers holding it; the <em>BFC</em> the chain of per-period
 * Bloom filters; a <em>stale mark</em> a PBN freed by GC that no lookup may return. In the
 * master/worker engine (thesis 7.2) a <em>worker</em> is one Sungem engine answering the
 * <em>master</em>'s broadcast lookups; a stream's <em>home worker</em> takes its new data that
 * matched nothing. Nothing here imports Spring.
 */
package org.holdfast.server.engine;
