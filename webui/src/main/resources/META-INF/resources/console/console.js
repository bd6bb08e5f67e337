// Read-only overview of volumes and snapshots from the REST API (/api/v1).
'use strict';

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
  const res = await fetch(path, { headers: { Accept: 'application/json' } });
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

loadHealth();
loadVolumes();
