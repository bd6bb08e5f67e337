// Who is logged in: the console session token from POST /api/v1/auth/login, its user and role.
// The token lives in sessionStorage: it survives a reload of the tab, ends with the tab, and is
// never a cookie, so no other site can make the browser send it (no CSRF exposure).
import { reactive } from 'vue';

const KEY = 'holdfast.session';
const RANK = { viewer: 1, operator: 2, admin: 3 };

function load() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY)) || null;
  } catch (e) {
    return null;
  }
}

export const session = reactive({
  current: load(),
  /** Why the user was sent to the login page (an expired session, a logout), shown there once. */
  notice: ''
});

export function loggedIn() {
  return session.current !== null;
}

export function role() {
  return session.current ? session.current.role : null;
}

/** True when the logged-in user's role is at least `needed` (viewer < operator < admin). */
export function can(needed) {
  const mine = RANK[role()] || 0;
  return mine >= (RANK[needed] || Infinity);
}

export function remember(login) {
  session.current = { token: login.token, username: login.username, role: login.role, expiresAt: login.expiresAt };
  session.notice = '';
  sessionStorage.setItem(KEY, JSON.stringify(session.current));
}

export function forget(notice) {
  session.current = null;
  session.notice = notice || '';
  sessionStorage.removeItem(KEY);
}
