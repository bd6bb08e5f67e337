// One way to call the REST API: bearer token, JSON, RFC 9457 problem details as ApiError.
import { session, forget } from './session.js';
import { router } from './router.js';

/** A failed call: HTTP status plus the server's problem detail (title, detail, type). */
export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || 'HTTP ' + status);
    this.status = status;
    this.problem = problem || {};
  }
}

async function problemOf(res) {
  try {
    const text = await res.text();
    return text ? JSON.parse(text) : { title: res.statusText };
  } catch (e) {
    return { title: res.statusText || 'HTTP ' + res.status };
  }
}

/**
 * Calls `path` (below /api/v1 when it does not start with "/") and answers the parsed JSON, or
 * the Response itself with {raw: true}. A 401 on any call but the login ends the session.
 */
export async function api(method, path, body, options = {}) {
  const url = path.startsWith('/') ? path : '/api/v1/' + path;
  const headers = { Accept: 'application/json, application/problem+json' };
  if (session.current) headers.Authorization = 'Bearer ' + session.current.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, { title: 'The server cannot be reached', detail: 'The server did not answer (' + e.message + '). Check that it is running and reachable.' });
  }
  if (res.status === 401 && url !== '/api/v1/auth/login') {
    const problem = await problemOf(res);
    // the server says why (expired, ended by a logout or a change to the user, a server restart)
    const why = problem && problem.detail ? ': ' + problem.detail.replace(/;? ?log in again\.?$/i, '') : '';
    forget('Your session has ended' + why + '. Log in again.');
    router.replace({ name: 'login', query: { next: router.currentRoute.value.fullPath } });
    throw new ApiError(401, problem);
  }
  if (!res.ok) throw new ApiError(res.status, await problemOf(res));
  if (options.raw) return res;
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

export const get = (path, options) => api('GET', path, undefined, options);
export const post = (path, body, options) => api('POST', path, body, options);
export const put = (path, body, options) => api('PUT', path, body, options);
export const patch = (path, body, options) => api('PATCH', path, body, options);
export const del = (path, options) => api('DELETE', path, undefined, options);

/** Encodes one path segment (volume names may hold characters that URLs reserve). */
export const seg = (s) => encodeURIComponent(String(s));
