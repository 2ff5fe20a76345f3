// Numbers with their units and times both relative and absolute.

const nf = new Intl.NumberFormat(undefined);
const nf1 = new Intl.NumberFormat(undefined, {maximumFractionDigits: 1});
const nf2 = new Intl.NumberFormat(undefined, {maximumFractionDigits: 2});

export function count(n, unit = 'msgs') {
  if (n === null || n === undefined) return '–';
  return nf.format(n) + (unit ? ' ' + unit : '');
}

export function rate(perSecond) {
  if (perSecond === null || perSecond === undefined || Number.isNaN(perSecond)) return '–';
  const v = perSecond >= 100 ? nf.format(Math.round(perSecond)) : perSecond >= 10 ? nf1.format(perSecond) : nf2.format(perSecond);
  return v + ' msg/s';
}

export function bytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? nf.format(n) : nf1.format(n)) + ' ' + units[i];
}

export function percent(p) {
  if (p === null || p === undefined) return '–';
  return nf1.format(p) + ' %';
}

// duration renders a span in microseconds as "3 h 12 min", "41 s".
export function duration(us) {
  if (!us) return '–';
  let s = Math.floor(us / 1e6);
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['min', 60], ['s', 1]]) {
    if (s >= size || (unit === 's' && parts.length === 0)) {
      parts.push(Math.floor(s / size) + ' ' + unit);
      s %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

// ago renders a time (a Date, or µs / ms since the epoch) relative to now: "12 s ago".
export function ago(t, now = Date.now()) {
  const ms = toMillis(t);
  if (!ms) return '–';
  let d = Math.round((now - ms) / 1000);
  if (d < 0) d = 0;
  if (d < 60) return d + ' s ago';
  if (d < 3600) return Math.floor(d / 60) + ' min ago';
  if (d < 86400) return Math.floor(d / 3600) + ' h ' + Math.floor((d % 3600) / 60) + ' min ago';
  return Math.floor(d / 86400) + ' d ago';
}

// absolute renders a time as the browser's local date and time, with its zone.
export function absolute(t) {
  const ms = toMillis(t);
  if (!ms) return '';
  return new Date(ms).toLocaleString(undefined, {dateStyle: 'medium', timeStyle: 'long'});
}

// micros marks a number as microseconds since the epoch (the API's unit for times).
export function micros(us) { return {us}; }

function toMillis(t) {
  if (t === null || t === undefined || t === 0) return 0;
  if (t instanceof Date) return t.getTime();
  if (typeof t === 'object' && 'us' in t) return t.us / 1000;
  if (typeof t === 'string') return Date.parse(t);
  return t;
}
