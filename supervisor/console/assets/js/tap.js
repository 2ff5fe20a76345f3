// The live tap pane: GET /{sinks,sources}/{key}/tap as a stream of sampled messages, with a
// point selector, pause and clear. Nothing is tapped until the operator starts it.

import {h, replace, when} from './dom.js';
import {request, connectorPath, HTTPError} from './api.js';
import {events} from './sse.js';
import {bytes, count} from './format.js';

const POINTS = {sink: ['polled', 'delivered', 'dead_lettered'], source: ['produced', 'sent', 'dead_lettered']};
const DEFAULT = {sink: 'delivered', source: 'sent'};
const KEEP = 200; // events shown at most; older ones leave the list
const RATE = 20; // events a second asked of the tap: what a person can read

export function tapPane(kind, key, signal) {
  let controller = null;
  let dropped = 0;
  let shown = 0;
  const boxes = POINTS[kind].map(p => h('input', {type: 'checkbox', name: 'tap-point', value: p, id: 'tap-point-' + p,
    checked: p === DEFAULT[kind], onchange: () => { if (controller) { stop(); start(); } }}));
  const toggle = h('button', {type: 'button', id: 'tap-toggle', 'aria-pressed': 'false', onclick: () => controller ? stop('paused') : start()}, 'Start tap');
  const clear = h('button.quiet', {type: 'button', id: 'tap-clear', onclick: () => { list.replaceChildren(); shown = 0; dropped = 0; say(); }}, 'Clear');
  const status = h('p.pane-status', {id: 'tap-status', role: 'status', dataset: {state: 'idle'}}, 'Not tapping. Start shows sampled messages as they pass (at most ' + RATE + ' a second).');
  const list = h('ol.events', {id: 'tap-events', 'aria-label': 'Tapped messages, newest first'});

  signal.addEventListener('abort', () => stop());

  // say sets the status line; state (idle, connecting, tapping, paused, ended) is kept on the
  // element for styles and tests.
  function say(text, state) {
    if (text !== undefined) status.dataset.text = text;
    if (state) status.dataset.state = state;
    const extra = [count(shown, shown === 1 ? 'message' : 'messages') + ' shown'];
    if (dropped) extra.push(count(dropped, '') + ' dropped by the tap (the client fell behind)');
    replace(status, status.dataset.text || '', ' · ', extra.join(' · '));
  }

  function points() {
    return boxes.filter(b => b.checked).map(b => b.value);
  }

  async function start() {
    const chosen = points();
    if (!chosen.length) {
      say('Choose at least one point.', 'idle');
      return;
    }
    controller = new AbortController();
    const mine = controller;
    toggle.textContent = 'Pause';
    toggle.setAttribute('aria-pressed', 'true');
    say('Connecting…', 'connecting');
    const q = new URLSearchParams();
    for (const p of chosen) q.append('point', p);
    q.set('rate', String(RATE));
    try {
      const resp = await request('GET', connectorPath(kind, key, 'tap') + '?' + q, {signal: mine.signal, accept: 'text/event-stream'});
      say('Tapping ' + chosen.join(', ') + '.', 'tapping');
      for await (const ev of events(resp)) {
        if (ev.event === 'message') add(JSON.parse(ev.data));
        else if (ev.event === 'dropped') { dropped += JSON.parse(ev.data).dropped || 0; say(); }
        else if (ev.event === 'end') {
          const reason = JSON.parse(ev.data).reason;
          finish('The tap ended (' + reason + '). Start taps again.');
          return;
        }
      }
      finish('The tap stream closed. Start taps again.');
    } catch (err) {
      if (err.name === 'AbortError') return;
      const why = err instanceof HTTPError && err.status === 404 && !err.reason
        ? 'This supervisor has no tap route (an older version).'
        : 'The tap failed: ' + err.message;
      finish(why);
    }
    function finish(text) {
      if (controller === mine) {
        controller = null;
        toggle.textContent = 'Start tap';
        toggle.setAttribute('aria-pressed', 'false');
      }
      say(text, 'ended');
    }
  }

  function stop(why) {
    if (!controller) return;
    controller.abort();
    controller = null;
    toggle.textContent = 'Start tap';
    toggle.setAttribute('aria-pressed', 'false');
    if (why) say('Paused: nothing is tapped until Start.', 'paused');
  }

  function add(e) {
    shown++;
    list.prepend(eventItem(e));
    while (list.children.length > KEEP) list.lastElementChild.remove();
    say();
  }

  return h('div.pane',
    h('div.pane-controls',
      h('fieldset.points', h('legend', 'Points'), boxes.map(b => h('label', b, ' ', b.value.replace('_', ' ')))),
      toggle, clear),
    status, list);
}

function payloadText(e) {
  if (e.encoding === 'base64') return e.payload + '  (base64)';
  if (typeof e.payload === 'string') return e.payload;
  return JSON.stringify(e.payload, null, 2);
}

function eventItem(e) {
  const ts = e.timestamp ? {us: e.timestamp} : null;
  return h('li.event', {dataset: {point: e.point, offset: String(e.offset), id: e.id}},
    h('div.event-head',
      h('span.badge', {dataset: {point: e.point}}, e.point.replace('_', ' ')),
      ` ${e.stream}/${e.topic} · partition ${e.partition} · offset ${count(e.offset, '')} · ${bytes(e.size)} · ${e.schema}`,
      e.replica ? ` · replica ${e.replica}` : null, ' · ', when(ts)),
    e.error ? h('p.bad', e.error) : null,
    e.headers && e.headers.length
      ? h('p.event-headers', 'headers: ', e.headers.map(x => `${typeof x.key === 'string' ? x.key : JSON.stringify(x.key)}=${JSON.stringify(x.value)}`).join(', '))
      : null,
    h('pre.payload', payloadText(e)));
}
