// dataset.js: the analyses' sentences. The built-in sample is the first N held-out sentences of
// build/data/brown_pos.jsonl (scripts/build_corpus.py; served at data/), read as a stream so only
// the lines needed are downloaded. Each line: {"words": [...], "tags": [...], ...}; the universal
// tags come from "utags" / "upos" / "universal_tags" when present, else "tags" (build_corpus.py
// writes universal tags there and the Brown ones in "brown_tags"). Rows with a "split" field count
// only when it is "heldout" (or "test"); rows without one all count. Deterministic: file order.

const cache = new Map();

function tagsOf(row) {
  const t = row.utags ?? row.upos ?? row.universal_tags ?? row.tags;
  return Array.isArray(t) && t.length === row.words.length ? t.map(String) : null;
}

function usable(row) {
  if (!row || !Array.isArray(row.words) || !row.words.length) return false;
  if (row.split !== undefined && row.split !== 'heldout' && row.split !== 'test') return false;
  return row.words.every((w) => typeof w === 'string');
}

export function loadBrownSample(size, url = new URL('data/brown_pos.jsonl', document.baseURI).href) {
  const key = `${url}#${size}`;
  if (!cache.has(key)) {
    const p = readSample(url, size);
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return cache.get(key);
}

async function readSample(url, size) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`The Brown sample could not be read (${e.message}).`);
  }
  if (!res.ok) {
    throw new Error(`The Brown sample is not available (data/brown_pos.jsonl: HTTP ${res.status}); build it with ` +
                    '"python3 scripts/build_corpus.py", or analyse your own sentences.');
  }
  const out = [];
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  const take = (line) => {
    if (!line.trim() || out.length >= size) return;
    let row;
    try {
      row = JSON.parse(line);
    } catch {
      return; // a broken line is skipped
    }
    if (!usable(row)) return;
    out.push({ words: row.words, tags: tagsOf(row), text: row.words.join(' '), genre: row.genre });
  };
  while (out.length < size) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
    const lines = rest.split('\n');
    rest = lines.pop();
    for (const line of lines) take(line);
  }
  if (out.length < size) take(rest);
  reader.cancel().catch(() => {});
  return out;
}

// One sentence a line. A line whose every token is word/TAG (e.g. "The/DET cat/NOUN") is tagged.
export function parseOwnSentences(text) {
  const out = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const parts = line.split(/\s+/);
    const tagged = parts.map((p) => /^(.+)\/([A-Za-z.$\-]+)$/.exec(p));
    if (tagged.every(Boolean)) {
      const words = tagged.map((m) => m[1]);
      out.push({ words, tags: tagged.map((m) => m[2].toUpperCase()), text: words.join(' ') });
    } else {
      out.push({ words: parts, tags: null, text: line });
    }
  }
  return out;
}
