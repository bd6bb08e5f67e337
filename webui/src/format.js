// Numbers, sizes, rates and times as an operator reads them.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

export function bytes(n) {
  if (n === undefined || n === null || Number.isNaN(Number(n))) return '—';
  let v = Number(n);
  let i = 0;
  while (Math.abs(v) >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + ' ' + UNITS[i];
}

export function rate(bytesPerSecond) {
  if (bytesPerSecond === undefined || bytesPerSecond === null) return '—';
  return bytes(Math.round(bytesPerSecond)) + '/s';
}

export function ratio(r) {
  if (r === undefined || r === null || !Number.isFinite(Number(r))) return '—';
  return Number(r).toFixed(2) + '×';
}

export function percent(part, whole) {
  if (!whole) return '—';
  return ((100 * part) / whole).toFixed(1) + ' %';
}

export function count(n) {
  if (n === undefined || n === null) return '—';
  return Number(n).toLocaleString('en-US');
}

/** Seconds (or an ISO-8601 duration like PT1M30S) as "1 h 2 min", "35 s". */
export function duration(seconds) {
  if (seconds === undefined || seconds === null) return '—';
  let s = Math.max(0, Math.round(Number(seconds)));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) return d + ' d ' + h + ' h';
  if (h) return h + ' h ' + m + ' min';
  if (m) return m + ' min ' + s + ' s';
  return s + ' s';
}

/** An ISO-8601 instant (or epoch millis) as local date and time, to the second. */
export function dateTime(t) {
  if (t === undefined || t === null || t === '') return '—';
  const d = typeof t === 'number' ? new Date(t) : new Date(String(t));
  if (Number.isNaN(d.getTime())) return String(t);
  const pad = (n) => String(n).padStart(2, '0');
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

/** "3 min ago", "in 2 d": how far an instant is from now. */
export function relative(t) {
  if (t === undefined || t === null || t === '') return '—';
  const ms = new Date(typeof t === 'number' ? t : String(t)).getTime() - Date.now();
  if (Number.isNaN(ms)) return String(t);
  const text = duration(Math.abs(ms) / 1000);
  return ms < 0 ? text + ' ago' : 'in ' + text;
}
