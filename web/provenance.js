// provenance.js: what every export carries, one rule for the PAPA panel's and the explorer's JSON, CSV and
// PNG exports (docs/papa-page.md, "Exports"): the engine version, the model (name, reference, content hash
// when known), the link that reopens the result, the time, then the export's own facts.
//   provenance({engine, model, link, made, ...facts}) -> the object an export stores (field order fixed)
//   pngWithProvenance(blob, title, p) -> a PNG Blob with tEXt chunks Title, Software, Source and
//                                         attnlab:provenance (JSON), so a figure names its origin
//   shortFloat(x)     a float32 setting as the shortest decimal that reads back as the same float32: the
//                     engine keeps lr 0.0005 as float32, which JSON prints as 0.0005000000237487257
//   plainSettings(o)  o with every non-integer number through shortFloat (settings are typed by people)
// No DOM access beyond Blob: node tests import it.
import { withText } from './png_text.js';

export function shortFloat(x) {
  if (typeof x !== 'number' || !Number.isFinite(x) || Number.isInteger(x)) return x;
  const f = Math.fround(x);
  for (let p = 1; p <= 17; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === f) return y;
  }
  return x;
}

export function plainSettings(o) {
  if (Array.isArray(o)) return o.map(plainSettings);
  if (o && typeof o === 'object') return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, plainSettings(v)]));
  return shortFloat(o);
}

export function provenance({ engine, model, link, made, ...facts }) {
  return { engine: engine ?? null, model: model ?? null, link: link ?? null, made: made ?? new Date().toISOString(), ...facts };
}

export async function pngWithProvenance(blob, title, p) {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  return new Blob([withText(bytes, {
    Title: title, Software: `attnlab engine ${p.engine ?? '?'}`, Source: p.model?.name ?? '',
    'attnlab:provenance': JSON.stringify(p),
  })], { type: 'image/png' });
}
