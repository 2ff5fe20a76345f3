// Server-Sent Events over fetch(): a browser's EventSource cannot send the Authorization
// header, so the tap and logs routes are read as a stream and parsed here (the event-stream
// format: "event:", "data:" and "id:" fields, a blank line ending each event, ":" comments).

// events yields {event, data} for every event of resp's body until it ends or signal aborts.
export async function* events(resp) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let event = '';
  let data = [];
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += value;
      for (;;) {
        const m = /\r\n|\n|\r/.exec(buf);
        // A lone \r at the end may be the first half of \r\n: wait for more.
        if (!m || (m[0] === '\r' && m.index === buf.length - 1)) break;
        const line = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        if (line === '') {
          if (data.length) yield {event: event || 'message', data: data.join('\n')};
          event = '';
          data = [];
          continue;
        }
        if (line[0] === ':') continue; // a comment: the keep-alive
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? '' : line.slice(colon + 1);
        if (val[0] === ' ') val = val.slice(1);
        if (field === 'event') event = val;
        else if (field === 'data') data.push(val);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// lines yields each line of an application/x-ndjson body parsed as JSON.
export async function* ndjson(resp) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (value) buf += value;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) yield JSON.parse(line);
    }
    if (done) break;
  }
  if (buf.trim()) yield JSON.parse(buf.trim());
}
