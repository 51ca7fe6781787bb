// hard_strings.mjs: texts that stress tokenizers (accents, CJK, emoji, ZWJ sequences, combining marks,
// punctuation runs, control characters, whitespace, long words, numbers, URLs, many scripts, mixed
// case, literal special tokens), plus deterministic random strings from a pool of awkward characters.
// Used by tokenizer_oracle.test.mjs. No NUL characters: the C API takes NUL-terminated text.

const HAND = [
  // empty and whitespace
  '', ' ', '   ', '\t', '\n', '\t\n \r\n', ' leading', 'trailing ', '  both  ', 'a  b   c',
  // accents and case
  'Café', 'naïve', 'Ångström', 'résumé', 'ÉCOLE NORMALE', 'façade', 'Zoë', 'São Paulo', 'crème brûlée',
  'Dvořák', 'Łódź', 'İstanbul', 'ISTANBUL ıi', 'Straße STRASSE ß', 'ﬁnance ﬂow', 'ǅemal Ǆ ǆ', 'ΣΑΣ', 'ΟΔΟΣ ΟΔΟΣ.',
  'ὈΔΥΣΣΕΎΣ', 'Σ', 'aΣ', 'aΣb', 'ΑΣ\'', 'Ǻ', 'Ω Ω K Å', 'ﬀ ﬃ', 'Ⅻ ⅻ', 'Ⓐⓑ', 'ＡＢＣ ａｂｃ', 'Ｈｅｌｌｏ！',
  // combining marks
  'e\u0301', 'a\u0308\u0323', '\u0301alone', 'q\u0307\u0323', 'x\u0323\u0307', 'n\u0303o\u0308', '\u1100\u1161\u11a8',
  'ạ̈', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇', 'e\u20dd', 'क्षि', 'a\u034fb',
  // CJK
  '你好世界', '日本語のテキストです。', '한국어 텍스트', '𠀀𠀁 extension B', '中文English混合text', '漢字かなカナ',
  '「引用」と『二重』', '一二三四五六七八九十', '龍', '豈 更', '㐀㐁', 'ｶﾀｶﾅ', '〇', '가나다라마바사', '안녕하세요!',
  // emoji and ZWJ
  '😀', '😀😃😄', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '❤️', '🇫🇷🇩🇪', '1️⃣', 'I ❤ NY', '👩‍💻 coding', 'smile:) 😊!',
  '🙂\u200d', '#️⃣', '©®™', '♥♦♣♠', '→←↑↓', '∑∏∫√∞', '€$£¥₹', '°C ±5%',
  // punctuation
  '!!!???', '...', '—–-', '«quotes»', '“smart” ‘quotes’', '(a)[b]{c}<d>', '@#$%^&*', '¿Qué?', '¡Hola!', '。、！？',
  'a.b.c', "don't", "I'm", "y'all", "'s 't 're", "we'll they've she'd", "DON'T", "rock 'n' roll", 'a--b', '"quoted"',
  '`backtick`', '~tilde~', '_under_score_', 'a/b\\c', '|pipe|', 'x+y=z', '50%', '#hashtag', '@mention', '§1 ¶2',
  '٪ ، ؛ ؟', '।॥', '•·‧', '…', '‼⁉', '(((nested)))', '*bold* _it_',
  // control characters and odd spaces
  'a\u0001b', '\u0007bell', 'tab\there', 'new\nline', 'cr\r\nlf', 'vt\u000bff\u000c', '\u0085next', '\u200bzero width',
  'zw\u200dj', '\ufeffBOM', 'soft\u00adhyphen', 'line\u2028sep', 'para\u2029sep', 'nb\u00a0sp', 'ideo\u3000space',
  '\ue000 private use', 'repl\ufffdchar', 'arabic\u061cmark', 'en\u2002space', 'thin\u2009space', '\u180emongolian',
  'x\u0000'.slice(0, 1), 'del\u007fchar', 'c1\u0090ctrl', '\u202eright-to-left', 'lrm\u200emark', 'wj\u2060joiner',
  '\u{e0001}tag', '\u{f0000}plane15', '\u{10ffff}max', 'unassigned\u0378x', 'han\u{2ebf0}new',
  // long words
  'a'.repeat(99), 'a'.repeat(100), 'a'.repeat(101), 'supercalifragilistic'.repeat(5), 'x'.repeat(300), 'é'.repeat(100),
  'é'.repeat(101), '😀'.repeat(60), 'ab'.repeat(51), 'antidisestablishmentarianism', 'pneumonoultramicroscopicsilicovolcanoconiosis',
  'Donaudampfschifffahrtsgesellschaftskapitän', 'a'.repeat(50) + '.' + 'b'.repeat(60), '1'.repeat(120), 'word '.repeat(40),
  // numbers
  '12345', '3.14159', '1,000,000', '٣٤٥', '१२३', '½ ¾', '²³', '0x1F', '1e-9', '-42', '$5.99', '2023-10-05', '12:30pm',
  '10⁶', '①②③', '๑๒๓', '𝟙𝟚𝟛', '7th 21st', '+1 (555) 123-4567',
  // URLs and paths
  'https://www.example.com/path?query=1&x=y#frag', 'user@example.com', 'C:\\Windows\\System32', 'file:///tmp/a.txt',
  'www.test.org', 'ftp://a.b/c_d-e.f', '<html><body>hi</body></html>', '{"json": [1, 2]}', 'x = f(y) + 2;',
  // scripts
  'Καλημέρα κόσμε', 'Привет, мир!', 'ЁЖИК ёжик', 'Україна', 'مرحبا بالعالم', 'السَّلَامُ عَلَيْكُمْ', 'نص عربي ١٢٣',
  'नमस्ते दुनिया', 'हिन्दी', 'สวัสดีชาวโลก', 'ภาษาไทย', 'שָׁלוֹם עוֹלָם', 'ქართული', 'Հայերեն', 'தமிழ்', 'বাংলা',
  'ᚠᚢᚦ', 'ꦗꦮ', 'ትግርኛ', 'ພາສາລາວ', 'မြန်မာ', 'ខ្មែរ', 'Tiếng Việt', 'Türkçe ğüşöç', 'Ελληνικά ΆΈΉ', 'ꯃꯤꯇꯩ',
  // mixed case
  'HeLLo WoRLD', 'iPhone', "McDonald's", 'ALLCAPS', 'camelCaseWord', 'snake_case_word', 'PascalCase', 'The Quick Brown Fox',
  // literal special tokens
  '[CLS]', '[SEP] hello [SEP]', '[MASK]', 'the [MASK] is', '[cls]', '[PAD][UNK]', '[CLS][CLS]', '[MASK]ing', 'x[SEP]y',
  '[ MASK ]', '[UNK] unknown', '<s>', '</s>', '<mask>', 'a<mask>b', 'hello <mask> world', '<pad><unk>', '<s>text</s>',
  ' <mask>', '<MASK>',
  // sentences
  'The quick brown fox jumps over the lazy dog.', "It's a test of the tokenizer; we'll see.", 'Attention is all you need.',
  'Hello world! Hello there, how are you doing today?', 'unbelievable tokenization normalization',
];

// A small seeded generator (mulberry32) for the random strings.
function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const POOL = [...'aeiouAEIOU xyzXYZ  .,;:!?\'"-()[]{}<>/\\@#$%^&*_+=~`|0123456789\t\n\r' +
  'éèêëÉàáâãäåçñöøüÿßÆæŒœİıΣσςΑΩαωЖжЯя你好世界日本語한국ابجדהॐกขฃ😀👍🏽\u200d\u0301\u0308\u00ad\u200b\u00a0\u3000' +
  '\u2028\ufeff\u0001\u007f\u0085…—“”«»¿¡。、', '[CLS]', '[SEP]', '[MASK]', '<s>', '</s>', '<mask>', "'s", "'ll", 'ing', 'the'];

function randomStrings(count, seed) {
  const rnd = mulberry32(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rnd() * 24);
    let s = '';
    for (let k = 0; k < n; k++) s += POOL[Math.floor(rnd() * POOL.length)];
    out.push(s);
  }
  return out;
}

export const HARD_STRINGS = [...HAND, ...randomStrings(160, 12345)];

// Pairs: neighbours in the list, plus a few chosen ones.
export const HARD_PAIRS = [
  ['', ''], ['question?', ''], ['', 'answer'], ['[CLS]', '[SEP]'], ['Café', 'CAFÉ'], ['你好', 'world'],
  ...Array.from({ length: 60 }, (_, i) => [HARD_STRINGS[(i * 7) % HARD_STRINGS.length], HARD_STRINGS[(i * 13 + 5) % HARD_STRINGS.length]]),
];
