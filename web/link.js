// link.js: the page state in the address, so a link reopens the same result.
//
// Format: #v1.<payload>, payload = base64url (RFC 4648 §5, no padding) of the gzip (RFC 1952) of the
// UTF-8 JSON object of state.js's linkValues() (only keys that differ from their defaults), e.g.
//   {"model":{"kind":"embedded","id":"attnlab-mini-bert"},"text":"The cat sat.","layer":2,"head":5}
// The state lives in the FRAGMENT, which browsers never send to the server: the text stays on the
// user's machine, and a long text cannot make a request line the server refuses (HTTP 431). gzip
// rather than deflate-raw: its CRC-32 and length trailer turn a truncated or altered link into an
// error instead of a silently different state.
//
// A section's short address, #<section> (#papa, panel_nav.js), is the state {"section": "<section>"}.
//
// Old links put each key in the query string (?model=...&text=...&layer=2); readLink still reads
// them (model / repo, rev, hub became one "model" object) and the page rewrites them to the fragment.
//
// Decoding never throws and never returns unchecked values: every value passes state.js's
// checkValues, and every problem comes back as a sentence for the user (shown with textContent).
import { checkValues } from './state.js';

export const LINK_VERSION = 'v1';
// The longest URL Chromium opens: 2 MiB of characters (2,097,152). Measured: page.goto of a
// 2,097,152-character URL reopens it; one more character fails with net::ERR_ABORTED, although
// history.replaceState accepts it, so such a link would look fine and not reopen.
export const LINK_MAX_CHARS = 2 * 1024 * 1024;
// A link's state never needs more than this once decompressed (its longest fields are texts); the
// cap keeps a crafted link from inflating into gigabytes.
export const MAX_STATE_BYTES = 8 * 1024 * 1024;

const PREFIX = `#${LINK_VERSION}.`;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const INDEX = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

export function base64urlEncode(bytes) {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63] + ALPHABET[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63];
  }
  return out;
}

// The bytes, or null when the text is not base64url (a character outside the alphabet, or a length
// no encoder produces).
export function base64urlDecode(text) {
  if (text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? INDEX[c] : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 255;
    }
  }
  return out;
}

async function pipe(bytes, transform) {
  const stream = new Blob([bytes]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// Decompresses at most `limit` bytes; throws a plain message otherwise.
async function gunzip(bytes, limit) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')).getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      reader.cancel().catch(() => {});
      throw new Error(`its content is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

// The fragment ("#v1.…") for some state values.
export async function encodeFragment(values) {
  const json = new TextEncoder().encode(JSON.stringify(values));
  return PREFIX + base64urlEncode(await pipe(json, new CompressionStream('gzip')));
}

// A fragment back into checked values: { values, problems }. Never throws.
export async function decodeFragment(hash) {
  const problems = [];
  const fail = (why) => ({ values: {}, problems: [`This link could not be read: ${why}. The page opened with its defaults.`] });
  try {
    if (typeof hash !== 'string' || hash === '' || hash === '#') return { values: {}, problems };
    const m = /^#v(\d{1,6})\./.exec(hash);
    if (!m) return fail('the part after # is not a page state (it should start with #v1.)');
    if (`v${m[1]}` !== LINK_VERSION) return fail(`it was made by another version of the page (v${m[1]}; this page reads ${LINK_VERSION})`);
    const payload = hash.slice(m[0].length);
    if (!payload) return fail('it is empty after #v1. (cut off?)');
    const bytes = base64urlDecode(payload);
    if (!bytes) {
      return fail(/[^A-Za-z0-9_-]/.test(payload)
        ? 'it contains characters a page link never has (was it edited, or cut and re-joined?)'
        : 'its length is impossible for a page link (cut off?)');
    }
    if (bytes.length < 18 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return fail('it is damaged (no compressed state at its start)');
    let raw;
    try {
      raw = await gunzip(bytes, MAX_STATE_BYTES);
    } catch (e) {
      const msg = String(e?.message ?? e);
      return fail(/unexpected end|incomplete|truncat/i.test(msg) ? 'it is incomplete (cut off when it was copied?)'
        : /larger than/.test(msg) ? msg
        : 'it is damaged (its checksum does not match: some characters were changed)');
    }
    let parsed;
    try {
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    } catch {
      return fail('its content is not a page state (not JSON text)');
    }
    const checked = checkValues(parsed);
    return { values: checked.values, problems: checked.problems.length ? [linkIntro(checked.problems)] : problems };
  } catch (e) {
    return fail(`unexpected error (${String(e?.message ?? e).slice(0, 200)})`);
  }
}

// The sentence that lists a link's refused settings (also for a setting refused later: link_sync.js's addLinkProblem).
export const linkIntro = (list) => `Some of this link's settings were not used: ${list.join('; ')}.`;

// The keys of the old query-string links; model, repo, rev and hub become the "model" object.
const LEGACY_KEYS = ['text', 'pair', 'layer', 'head', 'view', 'merge', 'emode', 'pad', 'analysis', 'ds', 'size',
                     'sents', 'amode', 'apad', 'alayer', 'aquery', 'areduce', 'modelb'];

// An old ?key=value link: { values, problems }, or null when the query holds none of its keys.
export function decodeQuery(search) {
  try {
    const params = new URLSearchParams(search ?? '');
    const raw = {};
    for (const k of LEGACY_KEYS) if (params.has(k)) raw[k] = params.get(k);
    if (params.get('repo')) {
      raw.model = { kind: 'hub', repo: params.get('repo') };
      if (params.get('rev')) raw.model.rev = params.get('rev');
      if (params.get('hub')) raw.model.base = params.get('hub');
    } else if (params.get('model')) {
      raw.model = { kind: 'embedded', id: params.get('model') };
    }
    if (!Object.keys(raw).length) return null;
    const { model, ...strings } = raw;
    const checked = checkValues(strings, { fromStrings: true });
    if (model) {
      const m = checkValues({ model });
      Object.assign(checked.values, m.values);
      checked.problems.push(...m.problems);
    }
    return { values: checked.values, problems: checked.problems.length ? [linkIntro(checked.problems)] : [] };
  } catch (e) {
    return { values: {}, problems: [`This link could not be read: ${String(e?.message ?? e).slice(0, 200)}.`] };
  }
}

// The state a location carries: the fragment when it holds one, else an old query string.
//   { values, problems, kind: 'fragment' | 'section' | 'query' | 'none' }
export async function readLink({ hash = '', search = '' } = {}) {
  const section = /^#([a-z][a-z-]{0,39})$/.exec(hash ?? '');
  if (section) {
    const checked = checkValues({ section: section[1] });
    return { values: checked.values, problems: checked.problems.length ? [linkIntro(checked.problems)] : [], kind: 'section' };
  }
  if (hash && hash !== '#') return { ...(await decodeFragment(hash)), kind: 'fragment' };
  const old = decodeQuery(search);
  if (old) return { ...old, kind: 'query' };
  return { values: {}, problems: [], kind: 'none' };
}

// The link for some values at a page address (origin + path, no query or fragment):
//   { url, length } or { url: null, length, why } when a fresh page could not reopen it: a value
//   the decoder would refuse, more than MAX_STATE_BYTES of state, or more than LINK_MAX_CHARS.
export async function makeLink(pageUrl, values) {
  const refused = checkValues(values).problems;
  if (refused.length) return { url: null, length: 0, why: `a fresh page would refuse it (${refused.join('; ')})` };
  const bytes = new TextEncoder().encode(JSON.stringify(values)).length;
  if (bytes > MAX_STATE_BYTES) {
    return { url: null, length: 0, why: `its state is ${bytes.toLocaleString('en')} bytes, more than the ` +
             `${MAX_STATE_BYTES.toLocaleString('en')} a link may hold: shorten the text` };
  }
  const url = Object.keys(values).length ? pageUrl + (await encodeFragment(values)) : pageUrl;
  if (url.length > LINK_MAX_CHARS) {
    return { url: null, length: url.length,
             why: `the link would be ${url.length.toLocaleString('en')} characters and a browser reopens at most ` +
                  `${LINK_MAX_CHARS.toLocaleString('en')}: shorten the text` };
  }
  return { url, length: url.length };
}
