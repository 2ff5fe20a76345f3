// A side-by-side line diff of two texts (two config versions rendered as JSON): the longest
// common subsequence of their lines, removed and added runs paired up as changed rows.

import {h} from './dom.js';

// rows is [{kind: 'same'|'change'|'del'|'add', left, right, ln, rn}] (line numbers from 1).
export function diffRows(a, b) {
  const A = a.split('\n'), B = b.split('\n');
  const n = A.length, m = B.length;
  if (n * m > 4e6) return positional(A, B);
  // lcs[i][j]: the LCS length of A[i:] and B[j:].
  const lcs = Array.from({length: n + 1}, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = A[i] === B[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && A[i] === B[j]) { ops.push({op: '=', i: i++, j: j++}); }
    else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) ops.push({op: '+', j: j++});
    else ops.push({op: '-', i: i++});
  }
  const rows = [];
  for (let k = 0; k < ops.length;) {
    if (ops[k].op === '=') {
      const o = ops[k++];
      rows.push({kind: 'same', left: A[o.i], right: B[o.j], ln: o.i + 1, rn: o.j + 1});
      continue;
    }
    const dels = [], adds = [];
    while (k < ops.length && ops[k].op !== '=') (ops[k].op === '-' ? dels : adds).push(ops[k++]);
    for (let x = 0; x < Math.max(dels.length, adds.length); x++) {
      const d = dels[x], a2 = adds[x];
      rows.push({kind: d && a2 ? 'change' : d ? 'del' : 'add', left: d ? A[d.i] : null, right: a2 ? B[a2.j] : null,
        ln: d ? d.i + 1 : null, rn: a2 ? a2.j + 1 : null});
    }
  }
  return rows;
}

function positional(A, B) {
  const rows = [];
  for (let i = 0; i < Math.max(A.length, B.length); i++) {
    const l = A[i] ?? null, r = B[i] ?? null;
    rows.push({kind: l === r ? 'same' : l === null ? 'add' : r === null ? 'del' : 'change', left: l, right: r,
      ln: l === null ? null : i + 1, rn: r === null ? null : i + 1});
  }
  return rows;
}

// diffTable renders the rows with the two titles; context unchanged lines around changes are
// kept, longer unchanged runs folded.
export function diffTable(leftTitle, rightTitle, rows, context = 3) {
  const changed = rows.map(r => r.kind !== 'same');
  const near = i => changed.slice(Math.max(0, i - context), i + context + 1).some(Boolean);
  const body = [];
  let folded = 0;
  const flush = () => {
    if (folded) body.push(h('tr.fold', h('td', {colspan: 4}, `… ${folded} unchanged ${folded === 1 ? 'line' : 'lines'}`)));
    folded = 0;
  };
  rows.forEach((r, i) => {
    if (r.kind === 'same' && !near(i)) { folded++; return; }
    flush();
    body.push(h('tr', {class: 'd-' + r.kind},
      h('td.ln', r.ln ?? ''), h('td.code', {class: r.kind === 'del' || r.kind === 'change' ? 'minus' : null}, r.left ?? ''),
      h('td.ln', r.rn ?? ''), h('td.code', {class: r.kind === 'add' || r.kind === 'change' ? 'plus' : null}, r.right ?? '')));
  });
  flush();
  const same = !changed.some(Boolean);
  return h('div.diff-wrap',
    same ? h('p.muted', 'The two versions are the same.') : null,
    h('table.diff', {id: 'config-diff'},
      h('colgroup', h('col.ln'), h('col'), h('col.ln'), h('col')),
      h('thead', h('tr', h('th', {colspan: 2, scope: 'col'}, leftTitle), h('th', {colspan: 2, scope: 'col'}, rightTitle))),
      h('tbody', body)));
}
