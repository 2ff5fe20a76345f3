// The overview: every sink and source, failing ones first, from the shared /stats poll.

import {h, replace, when} from './dom.js';
import * as poll from './poll.js';
import {count, rate, bytes, percent, duration} from './format.js';
import {sparkline} from './spark.js';

// rank orders the rows: what needs a look first.
const rank = {error: 0, failed: 0, unreachable: 1, starting: 2, stopping: 3, paused: 4, standby: 5, stopped: 6, running: 7};

function unreachableReplicas(c) {
  const l = poll.listed(c.connector_type, c.key);
  return (l?.replicas || []).filter(r => r.status === 'unreachable');
}

function order(c) {
  const r = rank[c.status] ?? 1;
  return unreachableReplicas(c).length ? Math.min(r, 1) : r;
}

export function render(main, signal) {
  const summary = h('p.summary', {id: 'summary'});
  const banner = h('div.banner', {id: 'banner', role: 'alert', hidden: true});
  const tbody = h('tbody');
  const replicasHead = h('th', {scope: 'col', class: 'col-replicas', hidden: true}, 'Replicas');
  const table = h('table.overview', {id: 'overview'},
    h('caption.sr-only', 'Connectors, failing first'),
    h('thead', h('tr',
      h('th', {scope: 'col'}, 'Connector'),
      h('th', {scope: 'col'}, 'Status'),
      replicasHead,
      h('th', {scope: 'col', class: 'num'}, 'Messages (10 min)'),
      h('th', {scope: 'col', class: 'num'}, 'Lag'),
      h('th', {scope: 'col', class: 'num'}, 'Restarts'),
      h('th', {scope: 'col', class: 'num'}, 'Dead-lettered'),
      h('th', {scope: 'col'}, 'Last error'))),
    tbody);
  const empty = h('p.muted', {id: 'no-connectors', hidden: true}, 'No connectors are configured.');
  replace(main, h('h1', 'Connectors'), banner, summary, h('div.table-wrap', table), empty);

  const rows = new Map();
  const unsubscribe = poll.subscribe(st => update(st));
  signal.addEventListener('abort', unsubscribe);

  function update(st) {
    staleBanner(banner, st);
    main.classList.toggle('stale', st.connection !== 'live');
    if (!st.stats) return;
    const s = st.stats;
    replicasHead.hidden = !st.fleet;
    const list = [...(s.connectors || [])].sort((a, b) =>
      order(a) - order(b) || a.connector_type.localeCompare(b.connector_type) || a.key.localeCompare(b.key));
    const failing = list.filter(c => order(c) <= 1).length;
    replace(summary,
      `${count(list.length, list.length === 1 ? 'connector' : 'connectors')} · `,
      `${count(s.sources_running + s.sinks_running, 'running')} · `,
      h('span', {class: failing ? 'bad' : null}, count(failing, 'failing')), ' · ',
      `runtime ${s.connectors_runtime_version || '?'}, up ${duration(s.run_time)}, `,
      `memory ${bytes(s.memory_usage)}, CPU ${percent(s.cpu_usage)}`);
    empty.hidden = list.length > 0;
    const now = Date.now();
    const focused = tbody.contains(document.activeElement) ? document.activeElement : null;
    const keep = new Set();
    list.forEach((c, i) => {
      const k = poll.id(c);
      keep.add(k);
      let row = rows.get(k);
      if (!row) {
        row = newRow(c);
        rows.set(k, row);
      }
      fill(row, c, st, now);
      if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
    });
    for (const [k, row] of rows) {
      if (!keep.has(k)) {
        row.tr.remove();
        rows.delete(k);
      }
    }
    if (focused && document.activeElement !== focused && document.contains(focused)) focused.focus();
  }
}

// staleBanner says, while the supervisor does not answer, that the figures are not live.
export function staleBanner(banner, st) {
  if (st.connection === 'live' || st.connection === 'connecting') {
    banner.hidden = true;
    return;
  }
  const since = st.lostAt ? [' since ', when(st.lostAt)] : '';
  const from = st.takenAt ? [' The figures below are from ', when(st.takenAt), ', not live.'] : '';
  const what = st.connection === 'disconnected'
    ? ['Disconnected: the supervisor does not answer', since, '.']
    : ['The supervisor answers with an error', since, ': ', st.error || st.connection, '.'];
  replace(banner, h('strong', st.connection === 'disconnected' ? 'disconnected' : 'error'), ' ', what, from,
    ` Retrying every ${poll.refreshSeconds} s.`);
  banner.hidden = false;
}

function newRow(c) {
  const k = poll.id(c);
  const cell = (label, cls) => h('td', {'data-label': label, class: cls});
  const row = {
    tr: h('tr', {dataset: {key: k}}),
    name: cell('Connector', 'name'),
    status: cell('Status', 'status'),
    replicas: cell('Replicas', 'col-replicas'),
    rate: cell('Messages (10 min)', 'num rate'),
    lag: cell('Lag', 'num lag'),
    restarts: cell('Restarts', 'num restarts'),
    dead: cell('Dead-lettered', 'num dead'),
    error: cell('Last error', 'error'),
  };
  const href = '#/' + c.connector_type + 's/' + encodeURIComponent(c.key);
  replace(row.name, h('span.kind', c.connector_type), ' ', h('a.key', {href}, c.key), h('span.conn-name', c.name || ''));
  row.tr.append(row.name, row.status, row.replicas, row.rate, row.lag, row.restarts, row.dead, row.error);
  return row;
}

export function statusBadge(status, enabled = true) {
  return h('span.badge', {dataset: {status}}, enabled === false ? status + ' (disabled)' : status);
}

function fill(row, c, st, now) {
  const k = poll.id(c);
  replace(row.status, statusBadge(c.status, c.enabled));
  row.replicas.hidden = !st.fleet;
  if (st.fleet) {
    const reps = poll.listed(c.connector_type, c.key)?.replicas || [];
    const down = reps.filter(r => r.status === 'unreachable');
    row.replicas.dataset.replicas = String(reps.length);
    row.replicas.dataset.reachable = String(reps.length - down.length);
    replace(row.replicas, `${reps.length - down.length} of ${reps.length} reachable`,
      down.length ? h('span.bad', {title: down.map(r => r.endpoint).join(', ')}, ` (${down.length} unreachable)`) : null);
  }
  replace(row.rate, h('div.rate-cell', sparkline(k, {now}), h('span.rate-now', rate(poll.currentRate(k)))));
  row.lag.textContent = c.connector_type === 'sink' && c.lag !== undefined ? count(c.lag) : '–';
  row.restarts.textContent = count(c.restarts, '');
  row.dead.textContent = c.messages_dead_lettered !== undefined ? count(c.messages_dead_lettered) : '–';
  const err = c.last_error || poll.lastError(k);
  if (err) {
    const current = !!c.last_error;
    replace(row.error, h('span.err-msg', {class: current ? 'bad' : 'resolved', title: err.message}, err.message),
      ' ', when({us: err.timestamp}), current ? null : h('span.muted', ' (earlier)'));
  } else {
    replace(row.error, h('span.muted', 'none'));
  }
}
