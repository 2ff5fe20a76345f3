// The messages-per-second sparkline: an inline SVG of the rates kept by poll.js over the last
// 10 minutes, drawn in the page's own colours by console.css.

import {s} from './dom.js';
import {rates, since} from './poll.js';
import {rate as fmtRate} from './format.js';

export function sparkline(k, {width = 120, height = 24, now = Date.now()} = {}) {
  const points = rates(k);
  const max = Math.max(0, ...points.map(p => p.rate ?? 0));
  const top = max > 0 ? max : 1;
  // The x axis spans the history kept so far, up to the last 10 minutes.
  const from = since(k, now);
  const span = Math.max(now - from, 1);
  const x = t => ((t - from) / span) * (width - 2) + 1;
  const y = r => height - 1 - (r / top) * (height - 2);
  const segments = [];
  let current = [];
  for (const p of points) {
    if (p.rate === null || x(p.t) < 0) {
      if (current.length) segments.push(current);
      current = [];
      continue;
    }
    current.push(x(p.t).toFixed(1) + ',' + y(p.rate).toFixed(1));
  }
  if (current.length) segments.push(current);
  const label = points.length
    ? `messages per second over the last ${Math.max(1, Math.round(span / 60000))} min, at most ${fmtRate(max)}`
    : 'no rate yet: two polls are needed';
  return s('svg.spark', {viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label},
    s('title', label),
    s('line.spark-base', {x1: 0, x2: width, y1: height - 0.5, y2: height - 0.5}),
    segments.map(seg => seg.length === 1
      ? s('circle.spark-dot', {cx: seg[0].split(',')[0], cy: seg[0].split(',')[1], r: 1.5})
      : s('polyline.spark-line', {points: seg.join(' ')})));
}
