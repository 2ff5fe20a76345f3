// The one poll of the page: GET /stats every few seconds (and, in attach mode, /sinks and
// /sources for the replicas), shared by whichever page is shown. It keeps, client-side, each
// connector's message counts over the last 10 minutes (for the sparklines) and the last error
// seen of each, which the API forgets once the connector runs again.

import {getJSON, HTTPError, Unreachable} from './api.js';

export const WINDOW_MS = 10 * 60 * 1000;

// refreshSeconds: ?refresh=N on the page's address (1 to 60), default 5.
export const refreshSeconds = (() => {
  const n = Number(new URLSearchParams(location.search).get('refresh'));
  return Number.isFinite(n) && n >= 1 ? Math.min(n, 60) : 5;
})();

// state is what the pages render from.
export const state = {
  connection: 'connecting', // live | disconnected | unauthorized | error | connecting
  error: '',
  stats: null, // the last /stats answer
  fleet: false, // attach mode: the answers carry Iggy-Fleet-Age-Ms
  lists: {sink: [], source: []}, // attach mode: the connector lists with their replicas
  takenAt: 0, // Date.now() of the last answer
  lostAt: 0, // Date.now() of the first failed poll since then
};

const history = new Map(); // "sink/key" -> [{t, total}]
const lastErrors = new Map(); // "sink/key" -> {message, timestamp}
const subscribers = new Set();
let timer = 0;
let running = false;
let inflight = null;

export function id(c) {
  return c.connector_type + '/' + c.key;
}

// subscribe calls fn with state after every poll (and now, when there is one); it returns the
// function that unsubscribes.
export function subscribe(fn) {
  subscribers.add(fn);
  if (state.takenAt || state.connection !== 'connecting') fn(state);
  return () => subscribers.delete(fn);
}

export function start() {
  running = true;
  refresh();
}

export function stop() {
  running = false;
  clearTimeout(timer);
}

// refresh polls now (after an action), then on the usual interval.
export function refresh() {
  clearTimeout(timer);
  if (!running) return Promise.resolve();
  if (!inflight) inflight = tick().finally(() => { inflight = null; schedule(); });
  return inflight;
}

function schedule() {
  clearTimeout(timer);
  if (running && !document.hidden) timer = setTimeout(refresh, refreshSeconds * 1000);
}

// A hidden tab polls nothing; it catches up at once when shown again.
document.addEventListener('visibilitychange', () => {
  if (document.hidden) clearTimeout(timer);
  else refresh();
});

async function tick() {
  try {
    const {data, headers} = await getJSON('/stats');
    state.fleet = headers.has('Iggy-Fleet-Age-Ms');
    if (state.fleet) {
      const [sinks, sources] = await Promise.all([getJSON('/sinks'), getJSON('/sources')]);
      state.lists = {sink: sinks.data, source: sources.data};
    }
    state.stats = data;
    state.takenAt = Date.now();
    state.lostAt = 0;
    state.connection = 'live';
    state.error = '';
    record(data, state.takenAt);
  } catch (err) {
    if (err instanceof HTTPError && err.status === 401) {
      state.connection = 'unauthorized';
      running = false;
    } else if (err instanceof Unreachable) {
      state.connection = 'disconnected';
      state.lostAt = state.lostAt || Date.now();
    } else {
      state.connection = 'error';
      state.error = err.message;
      state.lostAt = state.lostAt || Date.now();
    }
  }
  for (const fn of subscribers) fn(state);
}

// counted is the connector's running total of messages through it: processed for a sink,
// sent for a source.
function counted(c) {
  if (c.connector_type === 'sink') return c.messages_processed ?? c.messages_consumed;
  return c.messages_sent ?? c.messages_produced;
}

function record(stats, now) {
  const seen = new Set();
  for (const c of stats.connectors || []) {
    const k = id(c);
    seen.add(k);
    const total = counted(c);
    if (total !== undefined && total !== null) {
      const h = history.get(k) || [];
      h.push({t: now, total});
      while (h.length > 2 && h[1].t < now - WINDOW_MS) h.shift();
      history.set(k, h);
    }
    if (c.last_error && c.last_error.message) {
      const prev = lastErrors.get(k);
      if (!prev || prev.timestamp !== c.last_error.timestamp || prev.message !== c.last_error.message) {
        lastErrors.set(k, {message: c.last_error.message, timestamp: c.last_error.timestamp});
      }
    }
  }
  for (const k of history.keys()) if (!seen.has(k)) history.delete(k);
}

// rates is a connector's messages per second over the window, each over at least 10 s of polls
// (a source that sends a batch a second reads as its rate, not as a comb): [{t, rate}], rate null
// where the count went back (a supervisor restart) or polls were missed (a hidden tab, a lost
// connection), so the sparkline breaks there.
export function rates(k) {
  const h = history.get(k) || [];
  const out = [];
  const span = Math.max(10000, refreshSeconds * 1000);
  let a = h[0];
  for (let i = 1; i < h.length; i++) {
    const b = h[i];
    const dt = (b.t - a.t) / 1000;
    const gap = (b.t - h[i - 1].t) / 1000 > refreshSeconds * 3 + 2;
    if (b.total < h[i - 1].total || gap) {
      out.push({t: b.t, rate: null});
      a = b;
      continue;
    }
    if (b.t - a.t >= span || (i === h.length - 1 && out.length === 0 && dt > 0)) {
      out.push({t: b.t, rate: (b.total - a.total) / dt});
      a = b;
    }
  }
  return out;
}

// since is when the connector's kept history starts (at most WINDOW_MS ago), or now.
export function since(k, now = Date.now()) {
  const h = history.get(k);
  return h && h.length ? Math.max(h[0].t, now - WINDOW_MS) : now;
}

// currentRate is the rate over the last 30 s of polls (null before two polls).
export function currentRate(k) {
  const h = history.get(k) || [];
  if (h.length < 2) return null;
  const last = h[h.length - 1];
  let first = h.length - 2;
  while (first > 0 && h[first - 1].t >= last.t - 30000 && h[first - 1].total <= h[first].total) first--;
  const a = h[first];
  const dt = (last.t - a.t) / 1000;
  return dt > 0 && last.total >= a.total ? (last.total - a.total) / dt : null;
}

// lastError is the newest error seen of a connector (kept after it recovered), or null.
export function lastError(k) {
  return lastErrors.get(k) || null;
}

// connector is the /stats object of a connector, or undefined.
export function connector(kind, key) {
  return (state.stats?.connectors || []).find(c => c.connector_type === kind && c.key === key);
}

// listed is a connector's element of GET /sinks or /sources in attach mode (with replicas).
export function listed(kind, key) {
  return (state.lists[kind] || []).find(c => c.key === key);
}
