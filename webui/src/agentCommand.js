// The agent command lines the console shows with a new agent token (flags as in docs/agent.md).

/** Where the token file goes on the agent's host; the operator may change it. */
export const TOKEN_FILE = '/etc/holdfast/agent.token';
/** Stands for the block device or image to back up. */
export const SOURCE = '/dev/DEVICE';

/** `host:port` of the agent port: the bound address, else the host this console was reached by. */
export function agentAddress(server) {
  let host = server.agentHost || window.location.hostname;
  if (host.includes(':') && !host.startsWith('[')) host = '[' + host + ']';
  return host + ':' + server.agentPort;
}

/** How the agent trusts this server: pin its certificate, or plain TCP when TLS is off. */
export function trustOption(server) {
  return server.tls ? '--fingerprint ' + server.fingerprint : '--no-tls';
}

/** Single-quotes a shell word unless it is plainly safe. */
function sh(word) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'";
}

/** Writes the token into the token file, readable by its owner only. */
export function saveTokenCommand(token) {
  const dir = TOKEN_FILE.substring(0, TOKEN_FILE.lastIndexOf('/'));
  return "(umask 077; mkdir -p " + dir + "; printf '%s\\n' " + sh(token) + ' > ' + TOKEN_FILE + ')';
}

/** `holdfast-agent backup ...` for `volume` (a name the token may reach). */
export function backupCommand(server, volume) {
  return ['holdfast-agent backup', '--server', agentAddress(server), trustOption(server), '--token-file', TOKEN_FILE,
    '--volume', sh(volume), '--source', SOURCE].join(' ');
}
