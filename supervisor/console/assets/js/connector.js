// A connector's page: status and actions, figures, replicas (attach mode), per-partition lag and
// offsets, config versions with a diff and activation, plugin config, transforms, the live tap
// and the log pane. Every figure comes from the public API routes.

import {h, replace, section, when} from './dom.js';
import * as api from './api.js';
import * as poll from './poll.js';
import {count, rate, bytes, percent, duration} from './format.js';
import {sparkline} from './spark.js';
import {statusBadge, staleBanner} from './overview.js';
import {confirm} from './dialog.js';
import {diffRows, diffTable} from './diff.js';
import {tapPane} from './tap.js';
import {logPane} from './logs.js';

const OFFSETS_EVERY_MS = 15000; // the offsets route logs in to Iggy: read it less often

// The actions and when each makes sense (the API answers 409 otherwise).
const ACTIONS = [
  {op: 'pause', label: 'Pause', when: s => ['running', 'starting', 'error'].includes(s),
    text: 'It stops taking new batches once the one in flight settled (its offset or state saved); the runner stays up.'},
  {op: 'resume', label: 'Resume', when: s => s === 'paused', text: 'It polls (or produces) again from where it stopped.'},
  {op: 'stop', label: 'Stop', when: s => s !== 'stopped', spawnOnly: true,
    text: 'Its runner drains and exits, and is not restarted until Start.'},
  {op: 'start', label: 'Start', when: s => s === 'stopped', spawnOnly: true, text: 'A new runner starts with the running config.'},
  {op: 'restart', label: 'Restart', when: () => true, spawnOnly: true,
    text: 'Its runner drains and a new one starts with the active config version.'},
];

export function render(main, kind, key, signal) {
  const path = (...rest) => api.connectorPath(kind, key, ...rest);
  const banner = h('div.banner', {id: 'banner', role: 'alert', hidden: true});
  const notice = h('div.notice', {id: 'action-result', role: 'status', 'aria-live': 'polite'});
  const head = h('div.conn-head');
  const actions = h('div.actions', {role: 'group', 'aria-label': 'Actions'});
  const figures = h('dl.figures', {id: 'figures'});
  const errorBox = h('div', {id: 'last-error'});
  const replicas = h('div', {id: 'replicas-body'});
  const replicasCard = section('replicas', 'Replicas', replicas);
  replicasCard.hidden = true;
  const streams = h('div', {id: 'streams-body'}, h('p.muted', 'Loading…'));
  const offsets = h('div', {id: 'offsets-body'}, h('p.muted', 'Loading…'));
  const versions = h('div', {id: 'versions-body'}, h('p.muted', 'Loading…'));
  const diffBox = h('div', {id: 'diff-body'});
  const pluginBox = h('div', {id: 'plugin-body'}, h('p.muted', 'Loading…'));
  const transforms = h('div', {id: 'transforms-body'}, h('p.muted', 'Loading…'));

  replace(main,
    h('nav.crumbs', {'aria-label': 'Breadcrumb'}, h('a', {href: '#/'}, 'Connectors'), ' / ', kind + 's', ' / ', key),
    banner,
    h('section.card.wide', {id: 'status', 'aria-labelledby': 'conn-title'}, head, actions, notice, figures, errorBox),
    replicasCard,
    h('div.grid',
      wide(section('lag', kind === 'sink' ? 'Lag and offsets' : 'Source state', offsets)),
      section('streams', 'Streams', streams),
      wide(section('configs', 'Config versions', versions, diffBox)),
      section('plugin-config', 'Plugin config', pluginBox),
      section('transforms', 'Transforms', transforms)),
    section('tap', 'Live tap', tapPane(kind, key, signal)),
    section('logs', 'Logs', logPane(kind, key, signal)));

  let missing = false;
  let versionList = []; // the last GET .../configs
  let offsetsBusy = false;
  let actionsFor = ''; // the status the action buttons were drawn for
  const unsubscribe = poll.subscribe(st => update(st));
  signal.addEventListener('abort', unsubscribe);
  loadDetails();
  loadOffsets();
  const offsetsTimer = setInterval(() => { if (!document.hidden && poll.state.connection === 'live') loadOffsets(true); }, OFFSETS_EVERY_MS);
  signal.addEventListener('abort', () => clearInterval(offsetsTimer));

  function current() {
    return poll.connector(kind, key);
  }

  function update(st) {
    staleBanner(banner, st);
    main.classList.toggle('stale', st.connection !== 'live');
    if (!st.stats) return;
    const c = current();
    if (!c) {
      missing = true;
      replace(head, h('h1', {id: 'conn-title'}, `${kind} ${key}`), h('p.bad', `No ${kind} with key “${key}” on this supervisor.`));
      actions.replaceChildren();
      actionsFor = '';
      figures.replaceChildren();
      return;
    }
    missing = false;
    const k = poll.id(c);
    replace(head,
      h('h1', {id: 'conn-title'}, h('span.kind', kind), ' ', key, ' ', statusBadge(c.status, c.enabled)),
      h('p.muted', c.name || '', c.version ? ` · plugin version ${c.version}` : '',
        c.pid ? ` · pid ${c.pid}` : '', c.start_time ? [' · started ', when({us: c.start_time})] : '',
        c.run_time ? ` · up ${duration(c.run_time)}` : ''));
    renderActions(c, st);
    const fig = [];
    const add = (label, value, id) => fig.push(h('div', {dataset: {figure: id || label}}, h('dt', label), h('dd', value)));
    add('Messages (10 min)', [sparkline(k, {width: 240, height: 40}), h('span.rate-now', rate(poll.currentRate(k)))], 'rate');
    if (kind === 'sink') {
      add('Consumed', count(c.messages_consumed), 'consumed');
      add('Processed', count(c.messages_processed), 'processed');
      add('Lag', c.lag !== undefined ? count(c.lag) : '–', 'lag');
    } else {
      add('Produced', count(c.messages_produced), 'produced');
      add('Sent', count(c.messages_sent), 'sent');
    }
    if (c.messages_filtered !== undefined) add('Filtered', count(c.messages_filtered), 'filtered');
    add('Errors', count(c.errors, ''), 'errors');
    if (c.messages_dead_lettered !== undefined) add('Dead-lettered', count(c.messages_dead_lettered), 'dead');
    add('Restarts', count(c.restarts, ''), 'restarts');
    if (c.log_lines_dropped !== undefined) add('Log lines dropped', count(c.log_lines_dropped, 'lines'), 'log-dropped');
    add('Memory', bytes(c.memory_usage), 'memory');
    add('CPU', percent(c.cpu_usage), 'cpu');
    replace(figures, fig);
    const err = c.last_error || poll.lastError(k);
    replace(errorBox, err
      ? h('div', {class: c.last_error ? 'error-box' : 'error-box resolved'},
        h('strong', c.last_error ? 'Last error ' : 'Earlier error '), when({us: err.timestamp}), h('pre', err.message))
      : null);
    if (st.fleet) renderReplicas(poll.listed(kind, key));
  }

  // The buttons are rebuilt only when what they depend on changed (actionsFor), so a poll never
  // swaps a button under a click.
  function renderActions(c, st) {
    const now = `${c.status}|${c.enabled}|${st.fleet}`;
    if (now === actionsFor) return;
    actionsFor = now;
    const focusedOp = actions.contains(document.activeElement) ? document.activeElement.dataset.op : null;
    replace(actions, ACTIONS.map(a => {
      const ownedElsewhere = st.fleet && a.spawnOnly;
      // A disabled connector takes only restart (which reloads its config).
      const disabled = ownedElsewhere || (!c.enabled && a.op !== 'restart') || !a.when(c.status);
      return h('button', {type: 'button', id: 'action-' + a.op, dataset: {op: a.op}, disabled,
        title: ownedElsewhere ? 'attach mode: the orchestrator owns the runners' : null,
        onclick: () => act(a)}, a.label);
    }));
    if (focusedOp) actions.querySelector(`[data-op="${focusedOp}"]`)?.focus();
  }

  async function act(a) {
    if (!await confirm(`${a.label} ${kind} ${key}?`, a.text, a.label)) return;
    say(`${a.label}: sent…`);
    try {
      await api.post(path(a.op));
      say(`${a.label}: done.`);
    } catch (err) {
      say(`${a.label} failed: ${err.message}`, true);
    }
    await poll.refresh();
    loadDetails();
    loadOffsets();
    // The dialog gave focus back to a button a poll may have rebuilt since: keep the operator's place.
    if (document.activeElement === document.body) (actions.querySelector(`[data-op="${a.op}"]:not(:disabled)`) || actions.querySelector('button:not(:disabled)'))?.focus();
  }

  function say(text, bad = false) {
    replace(notice, h('span', {class: bad ? 'bad' : null}, text));
  }

  function renderReplicas(l) {
    replicasCard.hidden = false;
    const reps = l?.replicas || [];
    replace(replicas, reps.length ? h('div.table-wrap', h('table', {id: 'replicas-table'},
      h('thead', h('tr', ['Endpoint', 'Status', 'Role', 'PID', 'Last seen', 'Last error'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', reps.map(r => h('tr', {dataset: {endpoint: r.endpoint}},
        h('td', {'data-label': 'Endpoint'}, r.endpoint),
        h('td', {'data-label': 'Status'}, statusBadge(r.status)),
        h('td', {'data-label': 'Role'}, r.role || '–'),
        h('td', {'data-label': 'PID'}, r.pid || '–'),
        h('td', {'data-label': 'Last seen'}, when(r.last_seen ? {us: r.last_seen} : 0)),
        h('td', {'data-label': 'Last error'}, r.last_error ? r.last_error.message : h('span.muted', 'none')))))))
      : h('p.muted', 'No replica seen yet.'));
  }

  async function loadDetails() {
    const [detail, vers, tr] = await Promise.allSettled([
      api.getJSON(path()), api.getJSON(path('configs')), api.getJSON(path('transforms'))]);
    if (signal.aborted) return;
    if (detail.status === 'fulfilled') renderStreams(detail.value.data.streams || []);
    else replace(streams, failure(detail.reason));
    if (vers.status === 'fulfilled') renderVersions(vers.value.data);
    else replace(versions, failure(vers.reason));
    if (tr.status === 'fulfilled') renderTransforms(tr.value.data);
    else replace(transforms, failure(tr.reason));
    loadPlugin();
  }

  function renderStreams(list) {
    replace(streams, list.length ? h('ul.plain', list.map(s => h('li',
      h('code', `${s.stream}/${s.topic || (s.topics || []).join(', ')}`), ` · ${s.schema || 'json'}`,
      s.consumer_group ? ` · group ${s.consumer_group}` : '',
      s.batch_length ? ` · batches of ${count(s.batch_length, '')}` : '')))
      : h('p.muted', 'No streams (the config did not load).'));
  }

  function renderTransforms(list) {
    replace(transforms, list.length
      ? h('ol.plain', list.map(t => h('li', h('strong', t.type), h('pre', JSON.stringify(t.config, null, 2)))))
      : h('p.muted', 'No transforms: messages pass as they are.'));
  }

  async function loadPlugin(format) {
    const select = pluginBox.querySelector('select');
    const fmt = format || select?.value || '';
    try {
      const text = await api.getText(path('configs', 'plugin') + (fmt ? '?format=' + fmt : ''));
      if (signal.aborted) return;
      const chooser = h('select', {id: 'plugin-format', onchange: e => loadPlugin(e.target.value)},
        ['', 'json', 'yaml', 'toml', 'text'].map(f => h('option', {value: f, selected: f === fmt}, f || 'as configured')));
      replace(pluginBox, h('label', 'Format ', chooser),
        h('p.muted', 'Secret values are masked by the server (http.secret_keys).'),
        h('pre', {id: 'plugin-config-text'}, text || '(none)'));
    } catch (err) {
      replace(pluginBox, failure(err));
    }
  }

  // Versions: a table with two radio columns choosing the diff's sides, and Activate.
  function renderVersions(list) {
    versionList = list;
    if (!list.length) {
      replace(versions, h('p.muted', 'No stored versions.'));
      diffBox.replaceChildren();
      return;
    }
    const running = list.find(v => v.active);
    const byVersion = [...list].sort((a, b) => a.version - b.version);
    const leftDefault = running ? running.version : byVersion[0].version;
    const rightDefault = (byVersion.find(v => v.version !== leftDefault) || byVersion[0]).version;
    const radio = (side, v, checked) => h('input', {type: 'radio', name: 'diff-' + side, value: v.version, id: `diff-${side}-${v.version}`,
      checked, 'aria-label': `version ${v.version} on the ${side}`, onchange: showDiff});
    replace(versions, h('div.table-wrap', h('table', {id: 'versions-table'},
      h('thead', h('tr', h('th', {scope: 'col'}, 'Version'), h('th', {scope: 'col'}, 'Name'),
        h('th', {scope: 'col'}, 'Diff left'), h('th', {scope: 'col'}, 'Diff right'), h('th', {scope: 'col'}, 'Activate'))),
      h('tbody', byVersion.map(v => h('tr', {dataset: {version: String(v.version)}},
        h('td', {'data-label': 'Version'}, String(v.version), v.active ? h('span.badge', {dataset: {status: 'running'}}, 'running') : null),
        h('td', {'data-label': 'Name'}, v.name || ''),
        h('td', {'data-label': 'Diff left'}, radio('left', v, v.version === leftDefault)),
        h('td', {'data-label': 'Diff right'}, radio('right', v, v.version === rightDefault)),
        h('td', {'data-label': 'Activate'}, v.active ? null : h('button', {type: 'button', id: 'activate-' + v.version, disabled: poll.state.fleet,
          title: poll.state.fleet ? 'attach mode: the orchestrator owns the configs' : null,
          onclick: () => activate(v)}, 'Activate'))))))));
    showDiff();
  }

  function showDiff() {
    const pick = side => Number(versions.querySelector(`input[name=diff-${side}]:checked`)?.value);
    const l = versionList.find(v => v.version === pick('left'));
    const r = versionList.find(v => v.version === pick('right'));
    if (!l || !r) return;
    if (l === r) {
      replace(diffBox, h('p.muted', versionList.length > 1 ? 'Choose two different versions to compare them.' : 'One version: nothing to compare yet.'));
      return;
    }
    const text = v => { const {active, ...rest} = v; return JSON.stringify(rest, null, 2); };
    replace(diffBox, diffTable(`version ${l.version}${l.active ? ' (running)' : ''}`, `version ${r.version}${r.active ? ' (running)' : ''}`,
      diffRows(text(l), text(r))));
  }

  async function activate(v) {
    if (!await confirm(`Activate version ${v.version} of ${kind} ${key}?`,
      'The version becomes the active one and the runner restarts on it (draining the current one first).', 'Activate and restart')) return;
    say(`Activating version ${v.version}…`);
    try {
      await api.put(path('configs', 'active'), {version: v.version});
    } catch (err) {
      say(`Activating version ${v.version} failed: ${err.message}`, true);
      return;
    }
    try {
      await api.post(path('restart'));
      say(`Version ${v.version} is active; the runner restarted on it.`);
    } catch (err) {
      say(`Version ${v.version} is active, but the restart failed: ${err.message}`, true);
    }
    await poll.refresh();
    loadDetails();
  }

  // Offsets: a sink's per-partition lag, editable while it is stopped; a source's state.
  async function loadOffsets(background = false) {
    if (offsetsBusy || missing) return;
    offsetsBusy = true;
    try {
      const {data} = await api.getJSON(path('offsets'), {quiet: background});
      if (signal.aborted) return;
      if (kind === 'sink') renderSinkOffsets(data.offsets || []);
      else renderSourceState(data);
    } catch (err) {
      if (!signal.aborted && !(background && offsets.querySelector('input:focus, textarea:focus'))) replace(offsets, failure(err));
    } finally {
      offsetsBusy = false;
    }
  }

  function editable() {
    const c = current();
    return c && c.status === 'stopped' && !poll.state.fleet;
  }

  function renderSinkOffsets(list) {
    if (offsets.querySelector('input:focus')) return; // do not pull the field from under the operator
    const canEdit = editable();
    const total = list.reduce((n, o) => n + (o.lag || 0), 0);
    const inputs = [];
    replace(offsets,
      h('p', 'Total lag ', h('strong', {id: 'total-lag'}, count(total)), ' · read ', when(Date.now()),
        ' ', h('button.quiet', {type: 'button', id: 'offsets-refresh', onclick: () => loadOffsets()}, 'Refresh')),
      list.length ? h('div.table-wrap', h('table', {id: 'offsets-table'},
        h('thead', h('tr', ['Stream / topic', 'Partition', 'Group', 'Stored offset', 'Current offset', 'Lag']
          .map(t => h('th', {scope: 'col', class: ['Partition', 'Stored offset', 'Current offset', 'Lag'].includes(t) ? 'num' : null}, t)))),
        h('tbody', list.map(o => {
          const input = canEdit ? h('input', {type: 'number', min: 0, step: 1, value: o.stored_offset ?? '', placeholder: 'none',
            'aria-label': `stored offset of ${o.stream}/${o.topic} partition ${o.partition_id}`}) : null;
          if (input) inputs.push({o, input});
          return h('tr',
            h('td', {'data-label': 'Stream / topic'}, `${o.stream}/${o.topic}`),
            h('td.num', {'data-label': 'Partition'}, String(o.partition_id)),
            h('td', {'data-label': 'Group'}, o.consumer_group),
            h('td.num', {'data-label': 'Stored offset'}, input || (o.stored_offset ?? h('span.muted', 'none'))),
            h('td.num', {'data-label': 'Current offset'}, o.current_offset ?? h('span.muted', 'empty')),
            h('td.num', {'data-label': 'Lag'}, count(o.lag)));
        }))))
        : h('p.muted', 'No partitions.'),
      canEdit
        ? h('button', {type: 'button', id: 'offsets-save', onclick: () => saveOffsets(inputs)}, 'Save offsets')
        : h('p.muted', poll.state.fleet ? 'Offsets are changed where the runners are deployed (attach mode).'
          : 'Offsets can be changed while the connector is stopped (Stop above).'));
  }

  async function saveOffsets(inputs) {
    const changed = inputs.filter(({o, input}) => input.value !== '' && Number(input.value) !== o.stored_offset);
    if (!changed.length) { say('No offset changed.'); return; }
    const body = {offsets: changed.map(({o, input}) => ({stream: o.stream, topic: o.topic, partition_id: o.partition_id, offset: Number(input.value)}))};
    if (!await confirm(`Store new offsets for ${kind} ${key}?`,
      `${changed.length} partition(s): the next start reads from the message after each stored offset.`, 'Store offsets')) return;
    try {
      await api.put(path('offsets'), body);
      say('Offsets stored.');
    } catch (err) {
      say('Storing offsets failed: ' + err.message, true);
    }
    loadOffsets();
  }

  function renderSourceState(data) {
    if (offsets.querySelector('textarea:focus')) return;
    const canEdit = editable();
    const json = data.state_json !== null && data.state_json !== undefined ? JSON.stringify(data.state_json, null, 2) : null;
    const area = canEdit && json !== null ? h('textarea', {id: 'state-json', rows: 8, 'aria-label': 'source state as JSON'}, json) : null;
    replace(offsets,
      h('p', 'State saved ', data.updated_at ? when(Date.parse(data.updated_at)) : h('span.muted', 'never'),
        ' ', h('button.quiet', {type: 'button', id: 'offsets-refresh', onclick: () => loadOffsets()}, 'Refresh')),
      area || (json !== null ? h('pre', {id: 'state-view'}, json)
        : data.state ? h('pre', {id: 'state-view'}, data.state + '  (base64, not MessagePack)') : h('p.muted', 'No state saved.')),
      area ? h('button', {type: 'button', id: 'state-save', onclick: () => saveState(area)}, 'Save state')
        : h('p.muted', poll.state.fleet ? 'The state lives with the runners’ backend (attach mode).'
          : 'The state can be changed while the source is stopped (Stop above).'));
  }

  async function saveState(area) {
    let value;
    try { value = JSON.parse(area.value); } catch (err) { say('The state is not JSON: ' + err.message, true); return; }
    if (!await confirm(`Replace the state of ${kind} ${key}?`, 'The source starts from this state at its next start.', 'Replace state')) return;
    try {
      await api.put(path('offsets'), {state_json: value});
      say('State stored.');
    } catch (err) {
      say('Storing the state failed: ' + err.message, true);
    }
    loadOffsets();
  }
}

function wide(el) {
  el.classList.add('wide');
  return el;
}

function failure(err) {
  if (err instanceof api.HTTPError && err.status === 401) return h('p.muted', 'The API key is needed.');
  return h('p.bad', err.message);
}
