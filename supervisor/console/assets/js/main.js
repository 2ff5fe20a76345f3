// The console's entry: the router (#/ the overview, #/sinks/KEY and #/sources/KEY a connector's
// page), the API-key prompt, and the connection indicator.

import {h, replace, refreshTimes} from './dom.js';
import * as api from './api.js';
import * as poll from './poll.js';
import * as overview from './overview.js';
import * as connector from './connector.js';

const main = document.getElementById('main');
const conn = document.getElementById('conn');
const mode = document.getElementById('mode');
const forget = document.getElementById('forget-key');

let view = null; // the AbortController of the page shown
let needKey = null; // the 401 that asked for the key, while the prompt is shown

function show() {
  view?.abort();
  view = new AbortController();
  if (needKey) {
    keyPrompt(needKey);
    return;
  }
  if (poll.state.connection === 'connecting') {
    // Nothing is shown before the server answered: it may want a key first.
    replace(main, h('p.muted', {id: 'connecting'}, 'Connecting to the supervisor…'));
    return;
  }
  const m = /^#\/(sinks|sources)\/(.+)$/.exec(location.hash);
  if (m) {
    const kind = m[1] === 'sinks' ? 'sink' : 'source';
    const key = decodeURIComponent(m[2]);
    document.title = `${kind} ${key} · iggy-connectors console`;
    connector.render(main, kind, key, view.signal);
  } else {
    document.title = 'iggy-connectors console';
    overview.render(main, view.signal);
  }
}

// keyPrompt is all the page shows until a key the server takes is given.
function keyPrompt(err) {
  const input = h('input', {type: 'password', id: 'api-key', name: 'api-key', autocomplete: 'off', required: true, spellcheck: 'false'});
  const problem = h('p.bad', {id: 'key-error', role: 'alert'});
  const button = h('button', {type: 'submit', id: 'key-submit'}, 'Use this key');
  const form = h('form.key-form', {id: 'key-form', onsubmit: async e => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    button.disabled = true;
    problem.textContent = '';
    try {
      await api.request('GET', '/stats', {key, quiet: true});
      api.setKey(key);
      needKey = null;
      forget.hidden = false;
      poll.start();
      show();
      main.focus();
    } catch (err) {
      problem.textContent = err instanceof api.HTTPError && err.status === 401
        ? 'The server refused this key.' : 'The key could not be checked: ' + err.message;
      button.disabled = false;
      input.value = '';
      input.focus();
    }
  }},
  h('label', {for: 'api-key'}, 'API key'), input, button);
  replace(main, h('section.card.key-card', {id: 'key-prompt', 'aria-labelledby': 'key-title'},
    h('h1', {id: 'key-title'}, 'API key needed'),
    h('p', 'This supervisor answers only with its API key (http.api_key). The key stays in this browser tab ',
      '(sessionStorage) and is sent as Authorization: Bearer with every request to this server.'),
    api.apiKey() ? h('p.bad', 'The key this tab held was refused.') : null,
    err && err.reason ? h('p.muted', 'The server said: ', err.reason) : null,
    form, problem));
  input.focus();
}

api.on('unauthorized', err => {
  if (needKey) return;
  needKey = err;
  poll.stop();
  if (api.apiKey()) forget.hidden = false;
  show();
});

forget.addEventListener('click', () => {
  api.setKey('');
  forget.hidden = true;
  needKey = null;
  poll.start();
  show();
});

poll.subscribe(st => {
  if (main.querySelector('#connecting') && st.connection !== 'unauthorized') show();
  conn.dataset.state = st.connection;
  conn.textContent = {live: 'live', disconnected: 'disconnected', unauthorized: 'key needed', error: 'error', connecting: 'connecting…'}[st.connection];
  conn.title = st.takenAt ? 'last answer ' + new Date(st.takenAt).toLocaleString() : '';
  mode.hidden = !st.fleet;
  mode.textContent = st.fleet ? 'fleet view' : '';
  if (st.connection === 'unauthorized' && !needKey) {
    needKey = {reason: ''};
    show();
  }
});

window.addEventListener('hashchange', () => {
  show();
  main.focus({preventScroll: true});
  window.scrollTo(0, 0);
});

setInterval(() => refreshTimes(), 5000);
forget.hidden = !api.apiKey();
show();
poll.start();
