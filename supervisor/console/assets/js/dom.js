// Small DOM helpers: elements are built with h(), never from HTML strings, so no text from the
// API is ever parsed as markup.

import {ago, absolute} from './format.js';

const SVG = 'http://www.w3.org/2000/svg';

// h builds an element: h('a.link#id', {href: '#/'}, 'text', child, [more children]).
// Attributes: class, on<event> handlers (onclick: fn), boolean attributes (true/false), and
// anything else as an attribute; null and undefined values are skipped.
export function h(tag, attrs, ...children) {
  return build(document.createElement(parseTag(tag).name), tag, attrs, children);
}

// s builds an SVG element the same way.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, parseTag(tag).name), tag, attrs, children);
}

function parseTag(tag) {
  const m = /^([a-z0-9-]+)((?:[.#][\w-]+)*)$/i.exec(tag);
  if (!m) throw new Error('bad tag ' + tag);
  return {name: m[1], rest: m[2]};
}

function build(el, tag, attrs, children) {
  const {rest} = parseTag(tag);
  for (const part of rest.match(/[.#][\w-]+/g) || []) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') for (const c of String(v).split(/\s+/).filter(Boolean)) el.classList.add(c);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace swaps el's children for the given ones.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// section is a titled block of the connector page.
export function section(id, title, ...children) {
  return h('section.card', {id, 'aria-labelledby': id + '-title'}, h('h2', {id: id + '-title'}, title), ...children);
}

// when is a relative time ("12 s ago") with the absolute time on hover; refreshTimes keeps every
// one on the page current.
export function when(t) {
  const ms = t && typeof t === 'object' && 'us' in t ? t.us / 1000 : t instanceof Date ? t.getTime() : t;
  if (!ms) return h('span.muted', '–');
  return h('time', {datetime: new Date(ms).toISOString(), title: absolute(ms), dataset: {ms: String(ms)}}, ago(ms));
}

export function refreshTimes(root = document) {
  const now = Date.now();
  for (const el of root.querySelectorAll('time[data-ms]')) {
    const text = ago(Number(el.dataset.ms), now);
    if (el.textContent !== text) el.textContent = text;
  }
}
