// corpus_files.js: a file picker beside each text box of lm_corpus.js's controls (`${p}-text`, `${p}-ctext`): a text or
// JSONL file is read into its box's state key (and so into the link, which carries it compressed), shown and hidden
// with its box. Both panels on a causal model's texts call it (panel_lm_need.js, panel_importance.js).
import { el } from './dom.js';
import { setState, state } from './state.js';

// api: the compute panel's (its controls are restored after a file is read); clear(): the state patch a new text
// makes besides the text (the panel's result, which no longer describes it).
export function attachTextFiles(api, p, clear) {
  for (const [key, id] of [[`${p}_text`, `${p}-text`], [`${p}_ctext`, `${p}-ctext`]]) {
    const box = document.getElementById(id);
    const file = el('input', { id: `${id}-file`, type: 'file', accept: '.txt,.jsonl,.json,text/plain', 'aria-label': `${box.getAttribute('aria-label')} (file)` });
    file.addEventListener('change', async () => {
      const f = file.files?.[0];
      if (!f) return;
      setState({ [key]: await f.text(), ...clear() });
      api.controls.restore();
    });
    box.after(file);
    const sync = () => { file.hidden = box.hidden; };
    new MutationObserver(sync).observe(box, { attributes: true, attributeFilter: ['hidden'] });
    sync();
  }
}
