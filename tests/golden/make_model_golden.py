#!/usr/bin/python3
"""Writes tests/golden/<model>_mlm.safetensors: an embedded model's masked-token
predictions computed by the PyTorch reference of make_goldens.py (nn.MultiheadAttention per layer,
embeddings by hand, float64), so a C test can check that attnlab and PyTorch load the same weights from
models/<name>/ and predict the same tokens.

Run by hand after (re)training an embedded model (needs PyTorch 1.13 and numpy; CI does not run it):
    /usr/bin/python3 tests/golden/make_model_golden.py models/attnlab-mini-bert
    /usr/bin/python3 tests/golden/make_model_golden.py models/attnlab-small-bert

The sentences are plain lower-case ASCII, so a minimal BERT tokenizer (whitespace and punctuation
split, greedy longest-match WordPiece) gives the ids; the C test checks attnlab's tokenizer agrees.
One word per sentence is replaced by [MASK]; the golden holds, at each [MASK], the top-5 token ids and
all V logits at that position.
"""
import json
import os
import string
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_goldens as mg  # noqa: E402  (the reference forward pass)

SENTENCES = [
    ("the cat sat on the mat .", 1),
    ("she opened the door and walked into the room .", 6),
    ("a dictionary gives the meaning of a word .", 5),
    ("the president of the united states spoke to the people .", 5),
    ("he was born in a small town in the north .", 3),
    ("water is a clear liquid that has no colour .", 4),
]


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        dt = {"F32": "<f4", "F16": "<f2"}[e["dtype"]]
        arr = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dt).astype(np.float64).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def read_weights(model_dir):
    """model.safetensors, or the shards that model.safetensors.index.json names (float16 or float32)."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(model_dir, "model.safetensors"))
    out = {}
    for shard in sorted(set(json.load(open(index))["weight_map"].values())):
        out.update(read_safetensors(os.path.join(model_dir, shard)))
    return out


def wordpiece(text, vocab):
    ids = [vocab["[CLS]"]]
    for word in text.split():
        assert all(c not in string.punctuation for c in word) or len(word) == 1, word
        start = 0
        while start < len(word):
            end, piece = len(word), None
            while end > start:
                cand = ("##" if start else "") + word[start:end]
                if cand in vocab:
                    piece = cand
                    break
                end -= 1
            if piece is None:
                ids.append(vocab["[UNK]"])
                break
            ids.append(vocab[piece])
            start = end
    ids.append(vocab["[SEP]"])
    return ids


def params_from_hf(w, cfg):
    g = lambda k: w[k] if k in w else w["bert." + k]  # noqa: E731
    p = {"word": g("embeddings.word_embeddings.weight"), "pos": g("embeddings.position_embeddings.weight"),
         "type": g("embeddings.token_type_embeddings.weight"),
         "emb_ln_g": g("embeddings.LayerNorm.weight"), "emb_ln_b": g("embeddings.LayerNorm.bias"),
         "proj_w": None, "proj_b": None, "layers": []}
    for i in range(cfg["num_hidden_layers"]):
        b = "encoder.layer.%d." % i
        lw = {}
        for n, hf in (("q", "query"), ("k", "key"), ("v", "value")):
            lw[n + "_w"], lw[n + "_b"] = g(b + "attention.self.%s.weight" % hf), g(b + "attention.self.%s.bias" % hf)
        lw["o_w"], lw["o_b"] = g(b + "attention.output.dense.weight"), g(b + "attention.output.dense.bias")
        lw["ln1_g"], lw["ln1_b"] = g(b + "attention.output.LayerNorm.weight"), g(b + "attention.output.LayerNorm.bias")
        lw["ff1_w"], lw["ff1_b"] = g(b + "intermediate.dense.weight"), g(b + "intermediate.dense.bias")
        lw["ff2_w"], lw["ff2_b"] = g(b + "output.dense.weight"), g(b + "output.dense.bias")
        lw["ln2_g"], lw["ln2_b"] = g(b + "output.LayerNorm.weight"), g(b + "output.LayerNorm.bias")
        p["layers"].append(lw)
    p["mlm_w"], p["mlm_b"] = w["cls.predictions.transform.dense.weight"], w["cls.predictions.transform.dense.bias"]
    p["mlm_ln_g"] = w["cls.predictions.transform.LayerNorm.weight"]
    p["mlm_ln_b"] = w["cls.predictions.transform.LayerNorm.bias"]
    p["mlm_bias"] = w["cls.predictions.bias"]
    return p


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "models", "attnlab-mini-bert")
    name = os.path.basename(os.path.normpath(model_dir))
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    vocab = {t: i for i, t in enumerate(open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8").read().split("\n")) if t}
    p = params_from_hf(read_weights(model_dir), cfg)

    rows, masked = [], []
    for text, word_index in SENTENCES:
        words = text.split()
        words[word_index] = "[MASK]"
        ids = [vocab["[CLS]"]] + [t for w in words for t in (wordpiece(w, vocab)[1:-1] if w != "[MASK]" else [vocab["[MASK]"]])] + [vocab["[SEP]"]]
        rows.append(ids)
    L = max(len(r) for r in rows)
    ids = torch.tensor([r + [vocab["[PAD]"]] * (L - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (L - len(r)) for r in rows])
    types = torch.zeros_like(ids)
    for b, r in enumerate(rows):
        masked.append((b, r.index(vocab["[MASK]"])))

    mg.HIDDEN, mg.HEADS, mg.B, mg.L = cfg["hidden_size"], cfg["num_attention_heads"], len(rows), L
    _, _, _, logits = mg.reference(p, "bert", ids, types, mask, mg.act_fn(cfg["hidden_act"]), cfg["layer_norm_eps"])
    pos = torch.tensor(masked)
    at_mask = logits[pos[:, 0], pos[:, 1]]                      # [M, V]
    top5 = torch.topk(at_mask, 5, dim=-1).indices
    inv = {i: t for t, i in vocab.items()}
    for (text, wi), t in zip(SENTENCES, top5):
        print("%-60s -> %s (masked: %s)" % (text, [inv[int(i)] for i in t], text.split()[wi]))
    mg.write_safetensors(os.path.join(HERE, name + "_mlm.safetensors"), [
        ("input_ids", ids.to(torch.float64)), ("attention_mask", mask.to(torch.float64)),
        ("mask_positions", pos.to(torch.float64)), ("top5", top5.to(torch.float64)), ("logits", at_mask)],
        metadata={"model": name})


if __name__ == "__main__":
    main()
