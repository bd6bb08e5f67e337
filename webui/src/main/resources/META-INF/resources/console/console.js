// Read-only overview of volumes and snapshots from the REST API (/api/v1).
// Every /api call carries the session token of a password login (POST /api/v1/auth/login), kept in
// sessionStorage: it lives as long as the tab and is never a cookie, so no CSRF exposure.
'use strict';

const SESSION_KEY = 'holdfast.session';

function sessionToken() {
  return sessionStorage.getItem(SESSION_KEY);
}

function showLogin(message) {
  sessionStorage.removeItem(SESSION_KEY);
  document.getElementById('login-section').hidden = false;
  document.getElementById('volumes-section').hidden = true;
  document.getElementById('snapshots-section').hidden = true;
  document.getElementById('logout').hidden = true;
  document.getElementById('who').textContent = '';
  document.getElementById('login-error').textContent = message || '';
}

document.getElementById('login').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  const res = await fetch('/api/v1/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ username: form.username.value, password: form.password.value })
  });
  form.password.value = '';
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail || detail; } catch (e) { /* not a problem document */ }
    showLogin(detail);
    return;
  }
  const s = await res.json();
  sessionStorage.setItem(SESSION_KEY, s.token);
  start();
});

document.getElementById('logout').addEventListener('click', async () => {
  const token = sessionToken();
  if (token) {
    await fetch('/api/v1/auth/logout', { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
  }
  showLogin('');
});

function bytes(n) {
  if (n === undefined || n === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? v : v.toFixed(1)) + ' ' + units[i];
}

function cell(row, text, numeric) {
  const td = document.createElement('td');
  td.textContent = text;
  if (numeric) td.className = 'num';
  row.appendChild(td);
}

function showError(tbody, cols, message) {
  tbody.innerHTML = '';
  const tr = document.createElement('tr');
  const td = document.createElement('td');
  td.colSpan = cols;
  td.className = 'error';
  td.textContent = message;
  tr.appendChild(td);
  tbody.appendChild(tr);
}

async function getJson(path) {
  const headers = { Accept: 'application/json' };
  if (path.startsWith('/api/') && sessionToken()) headers.Authorization = 'Bearer ' + sessionToken();
  const res = await fetch(path, { headers });
  if (res.status === 401 && path.startsWith('/api/')) {
    showLogin('Please log in.');
    throw new Error('not logged in');
  }
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail || detail; } catch (e) { /* not a problem document */ }
    throw new Error(path + ': ' + res.status + ' ' + detail);
  }
  return res.json();
}

async function loadHealth() {
  const badge = document.getElementById('health');
  try {
    const h = await getJson('/actuator/health');
    badge.textContent = h.status;
    badge.className = 'badge ' + (h.status === 'UP' ? 'up' : 'down');
  } catch (e) {
    badge.textContent = 'unreachable';
    badge.className = 'badge down';
  }
}

async function loadSnapshots(volume) {
  document.getElementById('snapshots-section').hidden = false;
  document.getElementById('snapshots-volume').textContent = volume;
  const tbody = document.querySelector('#snapshots tbody');
  try {
    const snaps = await getJson('/api/v1/volumes/' + encodeURIComponent(volume) + '/snapshots');
    tbody.innerHTML = '';
    for (const s of snaps) {
      const tr = document.createElement('tr');
      cell(tr, s.sequence, true);
      cell(tr, new Date(s.createdAtMillis).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'));
      cell(tr, bytes(s.volumeBytes), true);
      cell(tr, bytes(s.logicalBytes), true);
      cell(tr, s.changedBlocks, true);
      cell(tr, bytes(s.storedBytes), true);
      tbody.appendChild(tr);
    }
  } catch (e) {
    showError(tbody, 6, e.message);
  }
}

async function loadVolumes() {
  const tbody = document.querySelector('#volumes tbody');
  try {
    const vols = await getJson('/api/v1/volumes');
    tbody.innerHTML = '';
    if (vols.length === 0) {
      showError(tbody, 4, 'No volumes yet: run holdfast-agent backup to create one.');
      tbody.querySelector('td').className = '';
      return;
    }
    for (const v of vols) {
      const tr = document.createElement('tr');
      tr.className = 'clickable';
      cell(tr, v.name);
      cell(tr, bytes(v.blockSize), true);
      cell(tr, bytes(v.volumeBytes), true);
      cell(tr, v.latestSequence || '', true);
      tr.addEventListener('click', () => loadSnapshots(v.name));
      tbody.appendChild(tr);
    }
  } catch (e) {
    showError(tbody, 4, e.message);
  }
}

async function start() {
  if (!sessionToken()) {
    showLogin('');
    return;
  }
  try {
    const me = await getJson('/api/v1/auth/me');
    document.getElementById('login-section').hidden = true;
    document.getElementById('volumes-section').hidden = false;
    document.getElementById('logout').hidden = false;
    document.getElementById('who').textContent = me.principal + ' (' + me.role + ')';
    loadVolumes();
  } catch (e) {
    // getJson showed the login form on 401
  }
}

loadHealth();
start();
