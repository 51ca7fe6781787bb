#!/usr/bin/env python3
"""fuzz_corpus.py OUT_DIR: assembles the seed corpora of the libFuzzer harnesses (tests/fuzz/fuzz_<name>.c) from
the repository's fixtures, one directory per harness: OUT_DIR/<name>/<seed>. Seeds are small (at most 64 KB) and
are never committed: scripts/fuzz.sh rebuilds them into build/fuzz/corpus. docs/fuzzing.md describes each
harness's input format; the packed ones (bpe_files, encode, model_load, vocab_learn) are built here."""
import hashlib
import json
import io
import os
import pickle
import struct
import sys
import zipfile

import spm_fixture

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MAX_SEED = 64 * 1024

WORDPIECE_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "a", "##a", "b", "##b", "ab", "##ab",
                   "e", "##e", ".", ",", "!", "the", "##s", "cat", "sat", "on", "mat", "hello", "world", "na", "##ive",
                   "你", "好"]

TEXTS = ["Hello, world!", "the cat sat on the mat.", "naïve café, déjà vu", "你好世界", "[CLS] a [SEP] b [MASK]",
         "<s>x</s> <mask>", "  spaces\tand\nnewlines  ", "e\u0301 \u00e9 \u200b\ufeff zero-width", "emoji 😀👍🏽",
         "ab ab ab abab ##ab", "don't stop, it's 3.14!", "ÀÉÎÕÜ ß ǅ İ", "\u0915\u094d\u0937 \u0e01\u0e33",
         "", "a", "DON'T 'LL it'S\r\n\r\n  x 12345 \u017fs", "<|endoftext|>x<s> </s><unk>", "\u2581 <0x41> \U0001f999"]


def rel(*parts):
    return os.path.join(ROOT, *parts)


def files_under(top, predicate, max_size=MAX_SEED):
    for dirpath, _, names in sorted(os.walk(rel(top))):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            if predicate(path) and os.path.getsize(path) <= max_size:
                yield path


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Corpus:
    def __init__(self, out):
        self.out = out
        self.counts = {}

    def add(self, harness, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        if len(data) > MAX_SEED:
            return
        d = os.path.join(self.out, harness)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
        self.counts[harness] = self.counts.get(harness, 0) + 1


# The legacy torch.save stream (docs/checkpoints.md): magic number, protocol version, sys_info, the state_dict
# pickle, the storage keys, then each storage as an int64 element count and its bytes.
LEGACY_MAGIC = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
LEGACY_HEAD = pickle.dumps(1001, protocol=2) + pickle.dumps(
    {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 4}}, protocol=2)
ELEMENT_SIZE = {"FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2, "DoubleStorage": 8, "LongStorage": 8,
                "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1, "ByteStorage": 1, "BoolStorage": 1}


def storage_types(pkl):
    """key -> (storage type name, numel) of the persistent ids of a torch data.pkl, read without torch: every
    global becomes a stub that records its name."""
    found = {}

    class Stub:
        def __init__(self, name):
            self.name = name

        def __call__(self, *args):
            return self

    class Reader(pickle.Unpickler):
        def find_class(self, module, name):
            return Stub(name)

        def persistent_load(self, pid):
            found[pid[2]] = (pid[1].name, pid[4])
            return pid[2]

    Reader(io.BytesIO(pkl)).load()
    return found


def legacy_from_zip(z, pkl_name):
    """The legacy twin (magic number stripped) of a zip torch.save file, or None."""
    prefix = pkl_name[:-len("data.pkl")]
    pkl = z.read(pkl_name)
    try:
        types = storage_types(pkl)
    except Exception:
        return None
    keys = sorted(types)
    tail = b""
    for k in keys:
        name, numel = types[k]
        tail += struct.pack("<q", numel) + z.read(prefix + "data/" + k)[:numel * ELEMENT_SIZE[name]]
    return LEGACY_HEAD + pkl + pickle.dumps(keys, protocol=2) + tail


def pack_files(files):
    """model_load's format: [name length][name][size, 4 bytes little-endian][bytes] per file."""
    out = b""
    for name, data in files:
        n = name.encode()
        out += bytes([len(n)]) + n + struct.pack("<I", len(data)) + data
    return out


def tokenizer_jsons():
    vocab = {t: i for i, t in enumerate(WORDPIECE_VOCAB)}
    special = {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
               "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}
    added = [{"id": i, "content": t, "single_word": False, "lstrip": t == "[MASK]", "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(WORDPIECE_VOCAB[:5])]
    wp = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
          "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                         "strip_accents": None, "lowercase": True},
          "pre_tokenizer": {"type": "BertPreTokenizer"},
          "post_processor": {"type": "TemplateProcessing",
                             "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                        {"Sequence": {"id": "A", "type_id": 0}},
                                        {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                             "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                                      {"Sequence": {"id": "B", "type_id": 1}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                             "special_tokens": special},
          "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
          "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                    "max_input_chars_per_word": 100, "vocab": vocab}}
    yield wp
    bert = dict(wp, post_processor={"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]})
    yield bert
    yield dict(wp, normalizer=None, post_processor=None)
    bpe_vocab = json.loads(read(rel("tests", "fixtures", "tokenizers", "bpe_small", "vocab.json")))
    merges = [line for line in read(rel("tests", "fixtures", "tokenizers", "bpe_small", "merges.txt")).decode().split("\n")
              if line and not line.startswith("#version")]
    bpe_added = [{"id": bpe_vocab[t], "content": t, "single_word": False, "lstrip": t == "<mask>", "rstrip": False,
                  "normalized": False, "special": True} for t in ("<s>", "<pad>", "</s>", "<unk>") if t in bpe_vocab]
    bpe = {"version": "1.0", "added_tokens": bpe_added, "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
           "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                              "trim_offsets": True, "add_prefix_space": False},
           "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                     "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": bpe_vocab,
                     "merges": merges[:200]}}
    yield bpe
    yield dict(bpe, model=dict(bpe["model"], merges=[m.split(" ") for m in merges[:200]]),
               pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True, "use_regex": True})
    # Qwen2's pattern by a Split regex, behind NFC, adding nothing
    qwen2 = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
             "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
    yield dict(bpe, normalizer={"type": "NFC"}, post_processor=None,
               pre_tokenizer={"type": "Sequence", "pretokenizers": [
                   {"type": "Split", "pattern": {"Regex": qwen2}, "behavior": "Isolated", "invert": False},
                   {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]})
    # SentencePiece BPE (Llama's shape): byte pieces, Prepend + Replace, no pre-tokenizer, <s> $A
    spm_vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    spm_vocab.update({"<0x%02X>" % b: 3 + b for b in range(256)})
    spm_merges = [["\u2581", "t"], ["h", "e"], ["\u2581t", "he"], ["a", "t"], ["\u2581", "c"], ["\u2581c", "at"]]
    for t in ["\u2581"] + list("abcdefghijklmnopqrstuvwxyz") + [a + b for a, b in spm_merges]:
        spm_vocab.setdefault(t, len(spm_vocab))
    yield {"version": "1.0", "added_tokens": [{"id": i, "content": t, "special": True, "normalized": False}
                                              for t, i in list(spm_vocab.items())[:3]],
           "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                              {"type": "Replace", "pattern": {"String": " "},
                                                               "content": "\u2581"}]},
           "pre_tokenizer": None,
           "post_processor": {"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                              "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                       {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                              "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
           "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True, "vocab": spm_vocab,
                     "merges": spm_merges}}


REQUESTS = [
    {"op": "version"}, {"op": "models"}, {"op": "info", "model": "m"},
    {"op": "tokenize", "model": "m", "text": "the cat sat", "text_pair": "on the mat", "max_length": 6},
    {"op": "tokenize", "model": "m", "text": "hello world", "add_special_tokens": False},
    {"op": "attention", "model": "m", "text": "the cat sat on the mat", "outputs": ["attentions", "hidden_states",
                                                                                   "values", "mlm_logits"]},
    {"op": "forward", "model": "m", "texts": ["the cat", "a b ab"], "text_pairs": ["sat", "e"], "pad_to": 8},
    {"op": "attention", "model": "m", "input_ids": [[2, 20, 21, 3], [2, 18, 3, 0]], "max_length": 4},
    {"op": "attention", "model": "m", "text": "the cat", "policies": [{"layer": 0, "mode": "constant", "constant": "C"}]},
    {"op": "attention", "model": "m", "text": "the cat",
     "policies": [{"layer": 1, "head": 0, "mode": "mix", "lambda": 0.5, "constant": "C4"}, {"head": 1, "mode": "zero"}]},
    {"op": "effective_attention", "model": "m", "text": "the cat sat", "mode": "paper", "pad_to": 8,
     "outputs": ["effective", "attentions", "values", "abs_diff"]},
    {"op": "attention_diff", "model": "m", "texts": ["the cat", "hello world"]},
    {"op": "attention_stats", "model": "m", "texts": ["the cat sat.", "hello, world!"], "average": "paper",
     "batch_size": 1},
    {"op": "attention_patterns", "model": "m", "text": "the cat", "text_pair": "sat on the mat"},
    {"op": "attention_by_pos", "model": "m", "words": [["the", "cat", "sat", "."]], "tags": [["DET", "NOUN", "VERB", "PUNCT"]],
     "layer": -1, "query": "cls", "reduce": "mean"},
    {"op": "attention_similarity", "model": "m", "model_b": "m2", "texts": ["the cat", "a b"], "mode": "exact",
     "average": "exact"},
    {"op": "head_steps", "model": "m", "text": "the cat sat", "layer": 1, "head": 0, "query": 2, "pad_to": 8},
]

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else rel("build", "fuzz", "corpus")
    c = Corpus(out)
    for path in files_under("tests", lambda p: p.endswith(".safetensors")):
        c.add("safetensors", read(path))
    for path in files_under("tests", lambda p: p.endswith(".bin")):
        data = read(path)
        c.add("torch_bin", data)
        if data.startswith(LEGACY_MAGIC):
            c.add("torch_legacy", data[len(LEGACY_MAGIC):])  # fuzz_torch_legacy puts the magic number back
        try:
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():
                    if name.endswith("data.pkl"):
                        pkl = z.read(name)
                        c.add("torch_pickle", pkl)
                        c.add("torch_bin", pkl)  # a pickle without the magic number: refused by name
                        legacy = legacy_from_zip(z, name)
                        if legacy:
                            c.add("torch_legacy", legacy)
                            c.add("torch_bin", LEGACY_MAGIC + legacy)
        except zipfile.BadZipFile:
            pass
    for path in files_under(".", lambda p: os.path.basename(p) == "config.json" and "/node_modules/" not in p
                            and "/build/" not in p):
        c.add("config", read(path))
    for path in files_under("models", lambda p: p.endswith("train_config.json")):
        c.add("pretrain_config", read(path))
    c.add("pretrain_config", '{"steps": 20, "lr": 0.001, "seed": "18446744073709551615", "short_len": 8, '
                             '"short_steps": 5, "shards": 2, "position_init": "sinusoidal"}')

    # tokenizers
    vocab_txt = "\n".join(WORDPIECE_VOCAB) + "\n"
    c.add("vocab_txt", vocab_txt)
    c.add("vocab_txt", vocab_txt.replace("\n", "\r\n"))
    for path in files_under("models", lambda p: p.endswith("vocab.txt"), 1 << 30):  # their head: small seeds run fast
        c.add("vocab_txt", b"".join(read(path).splitlines(keepends=True)[:400]))
    for tj in tokenizer_jsons():
        c.add("tokenizer_json", json.dumps(tj, ensure_ascii=False))
    bpe_v = read(rel("tests", "fixtures", "tokenizers", "bpe_small", "vocab.json"))
    bpe_m = read(rel("tests", "fixtures", "tokenizers", "bpe_small", "merges.txt"))
    c.add("bpe_files", bpe_v + b"\0" + bpe_m)
    c.add("bpe_files", bpe_v + b"\0" + b"\n".join(bpe_m.split(b"\n")[:20]))
    pieces = spm_fixture.small_pieces()
    c.add("spm_model", spm_fixture.spm_model(pieces, spm_fixture.RULES))
    c.add("spm_model", spm_fixture.spm_model(pieces[:4] + pieces[260:], spm_fixture.RULES, byte_fallback=False))
    c.add("spm_model", spm_fixture.spm_model(pieces, None, flags=(0, 0, 0)))
    c.add("spm_model", spm_fixture.spm_model(pieces, None, flags=(1, 0, 1), model_type=2))  # SentencePiece BPE (Llama)
    c.add("spm_model", spm_fixture.spm_model(pieces, spm_fixture.RULES, model_type=2))
    for cfg in [{"do_lower_case": False}, {"do_lower_case": True, "strip_accents": None, "tokenize_chinese_chars": False},
                {"add_prefix_space": True, "model_max_length": 512},
                {"cls_token": {"content": "<s>", "lstrip": False}, "sep_token": "</s>", "mask_token": "<mask>",
                 "pad_token": "<pad>", "unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}]:
        c.add("tokenizer_config", json.dumps(cfg))
    for m in [{"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "mask_token": "[MASK]", "unk_token": "[UNK]"},
              {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>", "pad_token": "<pad>",
               "cls_token": "<s>", "mask_token": {"content": "<mask>", "lstrip": True}}]:
        c.add("special_tokens_map", json.dumps(m))
    for i, t in enumerate(TEXTS):
        # bit 6 picks fuzz_encode's decoder tokenizers: 0x42 Qwen2's pattern, 0x43 SentencePiece BPE
        for flags in (0x02, 0x00, 0x06, 0x0B, 0x12, 0x23, 0x2F, 0x42, 0x43, 0x4B, 0x61):
            pair = TEXTS[(i + 3) % len(TEXTS)]
            c.add("encode", bytes([flags, 5 + i]) + t.encode() + b"\0" + pair.encode())

    # whole models: each fixture directory, with a tokenizer where it has none
    fixtures = rel("tests", "fixtures")
    for d in sorted(os.listdir(fixtures)):
        path = os.path.join(fixtures, d)
        if not os.path.isdir(path) or not os.path.exists(os.path.join(path, "config.json")):
            continue
        files = [(n, read(os.path.join(path, n))) for n in sorted(os.listdir(path))
                 if os.path.isfile(os.path.join(path, n))]
        c.add("model_load", pack_files(files))
        tok = [("vocab.json", bpe_v), ("merges.txt", bpe_m)] if "roberta" in d else [("vocab.txt", vocab_txt.encode())]
        c.add("model_load", pack_files(files + tok))

    for r in REQUESTS:
        c.add("api", json.dumps(r, ensure_ascii=False))
    # check_config reads a config.json given as text: every config seed, as the page sends it
    for path in files_under("tests/fixtures", lambda p: os.path.basename(p) == "config.json", 1 << 20):
        c.add("api", json.dumps({"op": "check_config", "config": read(path).decode("utf-8", "replace")}))

    # vocabulary learning: [vocab_size - 5][min_frequency - 1 | (alphabet_limit - 1) << 2] text
    texts = ["\n".join(TEXTS)]
    train = rel("build", "data", "train.txt")
    if os.path.exists(train):
        with open(train, "rb") as f:
            texts.append(f.read(2000).decode("utf-8", "ignore"))
    for t in texts:
        for params in ((60, 1 | (40 << 2)), (200, 0 | (63 << 2)), (0, 1)):
            c.add("vocab_learn", bytes(params) + t.encode())
    for h in sorted(c.counts):
        print(f"{h}: {c.counts[h]} seeds")


if __name__ == "__main__":
    main()
