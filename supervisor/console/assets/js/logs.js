// The log pane: a connector's recent log records (its runner's lines and the supervisor's own
// about it) from GET /{sinks,sources}/{key}/logs, with a level filter and follow (the same
// route as an event stream).

import {h, replace, when} from './dom.js';
import {request, connectorPath, HTTPError} from './api.js';
import {events, ndjson} from './sse.js';

const LEVELS = ['error', 'warn', 'info', 'debug', 'trace'];
const TAIL = 200;
const KEEP = 500;

export function logPane(kind, key, signal) {
  let controller = null;
  const level = h('select', {id: 'log-level', onchange: () => load()},
    LEVELS.map(l => h('option', {value: l, selected: l === 'info'}, l + (l === 'trace' ? '' : ' and above'))));
  const follow = h('input', {type: 'checkbox', id: 'log-follow', checked: true, onchange: () => load()});
  const status = h('p.pane-status', {id: 'log-status', role: 'status', dataset: {state: 'loading'}}, 'Loading…');
  const say = (text, state) => { status.textContent = text; status.dataset.state = state; };
  const list = h('ol.logs', {id: 'log-lines', 'aria-label': 'Log records, newest last'});
  const scroller = h('div.log-scroll', {tabindex: 0}, list);

  signal.addEventListener('abort', () => controller?.abort());
  load();

  async function load() {
    controller?.abort();
    controller = new AbortController();
    const mine = controller;
    list.replaceChildren();
    const q = new URLSearchParams({tail: String(TAIL), level: level.value});
    if (follow.checked) q.set('follow', 'true');
    say('Loading…', 'loading');
    try {
      const resp = await request('GET', connectorPath(kind, key, 'logs') + '?' + q,
        {signal: mine.signal, accept: follow.checked ? 'text/event-stream' : 'application/x-ndjson'});
      if (follow.checked) say('Following: new records appear below as they are logged.', 'following');
      else say(`The last ${TAIL} records at ${level.value} and above.`, 'loaded');
      if (follow.checked) {
        for await (const ev of events(resp)) if (ev.event === 'log') add(JSON.parse(ev.data));
        if (controller === mine) say('The log stream closed; change a setting to reload.', 'ended');
      } else {
        for await (const rec of ndjson(resp)) add(rec);
        if (!list.children.length) say(`No records at ${level.value} and above.`, 'loaded');
      }
    } catch (err) {
      if (err.name === 'AbortError') return;
      say(err instanceof HTTPError && err.status === 404 && !err.reason
        ? 'This supervisor has no logs route (an older version).'
        : 'The logs failed: ' + err.message, 'failed');
    }
  }

  function add(rec) {
    const stick = scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 4;
    list.append(record(rec));
    while (list.children.length > KEEP) list.firstElementChild.remove();
    if (stick) scroller.scrollTop = scroller.scrollHeight;
  }

  return h('div.pane',
    h('div.pane-controls',
      h('label', 'Level ', level),
      h('label', follow, ' Follow')),
    status, scroller);
}

function record(r) {
  const lvl = String(r.level || '').toLowerCase();
  const fields = Object.entries(r.fields || {}).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
  return h('li.log', {dataset: {level: lvl}},
    when(Date.parse(r.time)), ' ',
    h('span.badge', {dataset: {level: lvl}}, lvl || '?'), ' ',
    r.origin ? h('span.muted', r.origin + (r.replica ? '@' + r.replica : '') + ' ') : null,
    h('span.log-msg', r.message || ''), fields ? h('span.log-fields', ' ' + fields) : null);
}
