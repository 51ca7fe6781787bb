#!/usr/bin/python3
"""BERT encoders for bench/peer_compare.mjs: each shape twice, as attnlab reads it (config.json +
model.safetensors with Hugging Face names) and as onnxruntime reads it (model.onnx, exported by PyTorch from
a plain BertModel-like module holding the same float32 weights). Outputs: the last hidden states.
The shapes hold random weights (normal, std 0.02, as BERT initializes them), except attnlab-small-bert: the
trained weights of models/attnlab-small-bert, whose activations have a trained model's spread (a random
model's GELU inputs are mostly within +-1.2, where erf takes its cheap branch; docs/kernels.md).

  /usr/bin/python3 bench/peer_export.py OUT_DIR [bert-tiny,minilm-l6,bert-base,attnlab-small-bert]

Writes OUT_DIR/<shape>/{config.json, model.safetensors, model.onnx}; run by the bench script into build/
(never committed). Needs PyTorch (Debian's python3-torch); the safetensors writer and Hugging Face names
are tests/golden/make_goldens.py's.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
import make_goldens as mg  # noqa: E402  (sets float64 as the default dtype: put back below)
import make_model_golden as mmg  # noqa: E402  (read_weights: a model directory's safetensors, shards too)

torch.set_default_dtype(torch.float32)

VOCAB, MAXPOS, TYPES = 30522, 512, 2
SHAPES = {  # layers, hidden, heads, intermediate
    "bert-tiny": (2, 128, 2, 512),
    "minilm-l6": (6, 384, 12, 1536),
    "bert-base": (12, 768, 12, 3072),
}
TRAINED = {"attnlab-small-bert": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models",
                                              "attnlab-small-bert")}


def make_params(gen, n_layers, hidden, inter):
    def normal(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std

    def gain(n):
        return 1.0 + torch.randn(n, generator=gen) * 0.05

    p = {"word": normal(VOCAB, hidden), "pos": normal(MAXPOS, hidden), "type": normal(TYPES, hidden),
         "emb_ln_g": gain(hidden), "emb_ln_b": normal(hidden), "layers": []}
    for _ in range(n_layers):
        lw = {}
        for n in ("q", "k", "v", "o"):
            lw[n + "_w"], lw[n + "_b"] = normal(hidden, hidden), normal(hidden)
        lw["ln1_g"], lw["ln1_b"] = gain(hidden), normal(hidden)
        lw["ff1_w"], lw["ff1_b"] = normal(inter, hidden), normal(inter)
        lw["ff2_w"], lw["ff2_b"] = normal(hidden, inter), normal(hidden)
        lw["ln2_g"], lw["ln2_b"] = gain(hidden), normal(hidden)
        p["layers"].append(lw)
    return p


class Encoder(torch.nn.Module):
    """BERT's encoder as Hugging Face computes it (post-LayerNorm, erf GELU, -10000 on pad keys)."""

    def __init__(self, p, heads, eps=1e-12):
        super().__init__()
        self.heads, self.eps = heads, eps
        self.params = torch.nn.ParameterDict()
        for k, v in p.items():
            if k != "layers":
                self.params["g_" + k] = torch.nn.Parameter(v, requires_grad=False)
        for i, lw in enumerate(p["layers"]):
            for k, v in lw.items():
                self.params["l%d_%s" % (i, k)] = torch.nn.Parameter(v, requires_grad=False)
        self.n_layers = len(p["layers"])
        self.dh = p["word"].shape[1] // heads

    def forward(self, input_ids, attention_mask):
        P = self.params
        B, L = input_ids.shape
        D = P["g_word"].shape[1]
        dh = self.dh
        pos = torch.arange(L).unsqueeze(0)
        x = P["g_word"][input_ids] + P["g_pos"][pos] + P["g_type"][torch.zeros_like(input_ids)]
        x = F.layer_norm(x, (D,), P["g_emb_ln_g"], P["g_emb_ln_b"], self.eps)
        add = (1.0 - attention_mask.to(torch.float32))[:, None, None, :] * -10000.0
        for i in range(self.n_layers):
            g = lambda k: P["l%d_%s" % (i, k)]  # noqa: E731
            split = lambda t: t.view(B, L, self.heads, dh).transpose(1, 2)  # noqa: E731
            q, k, v = (split(F.linear(x, g(n + "_w"), g(n + "_b"))) for n in ("q", "k", "v"))
            s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + add
            ctx = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(B, L, D)
            x = F.layer_norm(F.linear(ctx, g("o_w"), g("o_b")) + x, (D,), g("ln1_g"), g("ln1_b"), self.eps)
            h = F.gelu(F.linear(x, g("ff1_w"), g("ff1_b")))
            x = F.layer_norm(F.linear(h, g("ff2_w"), g("ff2_b")) + x, (D,), g("ln2_g"), g("ln2_b"), self.eps)
        return x


def config(n_layers, hidden, heads, inter, maxpos):
    return {"architectures": ["BertModel"], "hidden_act": "gelu", "hidden_size": hidden, "intermediate_size": inter,
            "layer_norm_eps": 1e-12, "max_position_embeddings": maxpos, "model_type": "bert",
            "num_attention_heads": heads, "num_hidden_layers": n_layers, "pad_token_id": 0,
            "position_embedding_type": "absolute", "type_vocab_size": TYPES, "vocab_size": VOCAB}


def trained_params(model_dir):
    """A trained model's encoder weights as make_params lays them out, and its shape and position count."""
    c = json.load(open(os.path.join(model_dir, "config.json")))
    shape = (c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"], c["intermediate_size"])
    assert c["vocab_size"] == VOCAB and c["type_vocab_size"] == TYPES, model_dir
    p = make_params(torch.Generator().manual_seed(0), shape[0], shape[1], shape[3])
    p["pos"] = torch.zeros(c["max_position_embeddings"], shape[1])
    w = mmg.read_weights(model_dir)
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
    for name, t in mg.bert_names(p, prefix, mlm=False):
        t.copy_(w[name].to(torch.float32))  # float16 or float32 on disk: exact in float32
    return p, shape, c["max_position_embeddings"]


def export(out_dir, name, seed):
    if name in TRAINED:
        p, (n_layers, hidden, heads, inter), maxpos = trained_params(TRAINED[name])
    else:
        (n_layers, hidden, heads, inter), maxpos = SHAPES[name], MAXPOS
        p = make_params(torch.Generator().manual_seed(seed), n_layers, hidden, inter)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config(n_layers, hidden, heads, inter, maxpos), f, indent=2)
    mg.write_safetensors(os.path.join(d, "model.safetensors"), mg.bert_names(p, "", mlm=False), "F32")
    model = Encoder(p, heads).eval()
    ids = torch.randint(1000, 20000, (1, 32), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    torch.onnx.export(model, (ids, mask), os.path.join(d, "model.onnx"), input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=14,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                    "last_hidden_state": {0: "batch", 1: "seq"}})
    print("wrote", d)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "build/bench/peer"
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(SHAPES)
    for i, name in enumerate(names):
        if name not in SHAPES and name not in TRAINED:
            sys.exit("peer_export: unknown shape '%s' (%s)" % (name, ", ".join(list(SHAPES) + list(TRAINED))))
        export(out_dir, name, 100 + i)


if __name__ == "__main__":
    main()
