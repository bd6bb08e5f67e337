// What the volume pages read besides the volume itself: who last backed a volume up, its named policy.
import { get, seg } from './api.js';
import { can } from './session.js';

/** Runs `fn` over `items` with at most `limit` calls in flight; answers the results in order. */
export async function mapLimited(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * volume name -> {agent, result, at, message}: the agent whose backup of it ended last. Empty for
 * a viewer (the agents list shows addresses and token names: operators only).
 */
export async function lastAgents() {
  if (!can('operator')) return {};
  const agents = await get('agents');
  const byVolume = {};
  for (const a of agents) {
    for (const r of a.volumes || []) {
      const seen = byVolume[r.volume];
      if (!seen || seen.at < r.at) {
        byVolume[r.volume] = { agent: a.agentName || a.tokenName, token: a.tokenName, address: a.remoteAddress, result: r.result, at: r.at, message: r.message };
      }
    }
  }
  return byVolume;
}

/** volume name -> the named policy it follows (none when its policy was set as text). */
export async function namedPolicyOf() {
  const policies = await get('retention/policies');
  const byVolume = {};
  for (const p of policies) for (const v of p.volumes || []) byVolume[v] = p.name;
  return { byVolume, policies };
}

/** A volume's details (settings, usage, last backup, damage). */
export const volumeDetails = (name) => get('volumes/' + seg(name));
