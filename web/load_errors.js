// load_errors.js: a model load's failure in plain words. The core's messages name the file, the tensor and
// the byte at fault (src/model/safetensors.c), which a reader of the page cannot act on alone; a file cut
// short (an interrupted download or copy) is said as such, with what to do, and the core's message follows
// as the detail. Other messages pass unchanged. No DOM access: node tests can import it.
const bytes = (n) => `${Number(n).toLocaleString('en')} bytes`;

const RULES = [
  // a tensor's data ends past the end of the file
  [/^(.+?): tensor '[^']+' data_offsets \[\d+, (\d+)\] out of range \(data is (\d+) bytes\)/,
    (m) => `${m[1]} is incomplete: its header says its data runs to at least ${bytes(m[2])}, but the file holds ` +
      `${bytes(m[3])} of data`],
  // the header itself is cut
  [/^(.+?): header length (\d+) goes beyond the end of the file \((\d+) bytes\)/,
    (m) => `${m[1]} is incomplete: its header alone should be ${bytes(m[2])}, but the whole file is ${bytes(m[3])}`],
  [/^(.+?): file is truncated \((\d+) bytes/, (m) => `${m[1]} is incomplete: it is only ${bytes(m[2])} long`],
];

// { plain, detail } for a load's error message: plain is null when no rule knows the message.
export function explainLoadError(message) {
  for (const [re, say] of RULES) {
    const m = re.exec(message);
    if (m) {
      return { plain: `${say(m)} (a download or a copy cut short?). Download or copy the file again, then load it.`,
               detail: message };
    }
  }
  return { plain: null, detail: message };
}
