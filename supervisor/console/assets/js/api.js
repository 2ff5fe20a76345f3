// The REST client: every call goes to the supervisor's public API (the routes a script uses),
// relative to the page, with the API key of this tab as Authorization: Bearer.

const KEY = 'iggy-connectors.api-key';

// The API is the page's parent path: /ui/ -> /, and /prefix/ui/ -> /prefix/ behind a proxy.
const base = new URL('../', document.baseURI);

export function url(path) {
  return new URL(path.replace(/^\//, ''), base).toString();
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || '';
}

export function setKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

// HTTPError is an answer other than 2xx; reason is the API's reason (or its text body).
export class HTTPError extends Error {
  constructor(status, reason, code) {
    super(reason || 'HTTP ' + status);
    this.status = status;
    this.reason = reason;
    this.code = code;
  }
}

// Unreachable is a request that got no answer (the supervisor is down or the network is).
export class Unreachable extends Error {}

const listeners = {unauthorized: [], reachable: [], unreachable: []};

export function on(event, fn) {
  listeners[event].push(fn);
}

function emit(event, arg) {
  for (const fn of listeners[event]) fn(arg);
}

// request sends one call and returns the Response (2xx only); options: body (sent as JSON),
// signal, key (instead of the stored one), quiet (no events).
export async function request(method, path, options = {}) {
  const headers = {};
  const key = options.key !== undefined ? options.key : apiKey();
  if (key) headers.Authorization = 'Bearer ' + key;
  let body;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  if (options.accept) headers.Accept = options.accept;
  let resp;
  try {
    resp = await fetch(url(path), {method, headers, body, signal: options.signal, cache: 'no-store',
      credentials: 'omit', redirect: 'error', referrerPolicy: 'no-referrer'});
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    if (!options.quiet) emit('unreachable', err);
    throw new Unreachable('the supervisor does not answer: ' + err.message);
  }
  if (!options.quiet) emit('reachable');
  if (resp.ok) return resp;
  const text = await resp.text().catch(() => '');
  let reason = text, code;
  try {
    const obj = JSON.parse(text);
    if (obj && typeof obj.reason === 'string') {
      reason = obj.reason;
      code = obj.code;
    }
  } catch (_) { /* a plain-text answer */ }
  const err = new HTTPError(resp.status, reason.trim(), code);
  if (resp.status === 401 && !options.quiet) emit('unauthorized', err);
  throw err;
}

export async function getJSON(path, options) {
  const resp = await request('GET', path, options);
  return {data: await resp.json(), headers: resp.headers};
}

export async function getText(path, options) {
  const resp = await request('GET', path, options);
  return resp.text();
}

export function post(path, body, options = {}) {
  return request('POST', path, {...options, body});
}

export function put(path, body, options = {}) {
  return request('PUT', path, {...options, body});
}

// connectorPath is a connector's route: connectorPath('sink', 'pg', 'offsets') -> /sinks/pg/offsets.
export function connectorPath(kind, key, ...rest) {
  return ['', kind + 's', encodeURIComponent(key), ...rest].join('/');
}
