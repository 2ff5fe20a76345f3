// The confirmation asked before every action that changes a connector: a modal <dialog>
// (focus stays inside it; Escape cancels).

const dialog = () => document.getElementById('confirm');

// confirm shows title and text and resolves true when the operator confirms.
export function confirm(title, text, okLabel = 'Confirm') {
  const d = dialog();
  d.querySelector('#confirm-title').textContent = title;
  d.querySelector('#confirm-text').textContent = text;
  const ok = d.querySelector('#confirm-ok');
  const cancel = d.querySelector('#confirm-cancel');
  ok.textContent = okLabel;
  return new Promise(resolve => {
    const done = result => {
      ok.removeEventListener('click', yes);
      cancel.removeEventListener('click', no);
      d.removeEventListener('cancel', no);
      if (d.open) d.close();
      resolve(result);
    };
    const yes = () => done(true);
    const no = e => { e?.preventDefault?.(); done(false); };
    ok.addEventListener('click', yes);
    cancel.addEventListener('click', no);
    d.addEventListener('cancel', no);
    d.showModal();
    cancel.focus();
  });
}
