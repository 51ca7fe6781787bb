#!/usr/bin/python3
"""Random-weight decoders for bench/decoder_compare.mjs: GPT-2-small and SmolLM2-135M shapes, each twice, as attnlab
reads it (config.json + model.safetensors with Hugging Face names, docs/decoders.md) and as onnxruntime reads it
(two graphs exported by PyTorch from a plain module below holding the same float32 weights):

  prefill.onnx   input_ids [1, L]                                -> logits [1, L, V], present_{k,v}_<i> [1, KV, L, hd]
  decode.onnx    input_ids [1, n], past_{k,v}_<i> [1, KV, P, hd] -> logits [1, n, V], present_{k,v}_<i> [1, KV, P+n, hd]

The keys in the cache are turned (rotary families), as in attnlab's cache; positions run on from P.

  /usr/bin/python3 bench/decoder_export.py OUT_DIR [gpt2-small,smollm2-135m]

Writes OUT_DIR/<shape>/hf/{config.json, model.safetensors} and OUT_DIR/<shape>/{prefill,decode}.onnx; run by the
bench script into build/ (never committed). Needs Debian's PyTorch (python3-torch 1.13; no transformers, no onnx
package); the safetensors writer is tests/golden/make_goldens.py's and the configs are
tests/golden/make_decoder_goldens.py's, so the files are the layouts the goldens check.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
import make_decoder_goldens as dg  # noqa: E402
import make_goldens as mg  # noqa: E402  (sets float64 as the default dtype: put back below)

torch.set_default_dtype(torch.float32)

# The shapes of the Hub's gpt2 and HuggingFaceTB/SmolLM2-135M (their config.json), random weights.
SHAPES = {
    "gpt2-small": dict(family="gpt2", vocab=50257, hidden=768, heads=12, layers=12, positions=1024, inner=None,
                       dtype="F32"),
    "smollm2-135m": dict(family="llama", vocab=49152, hidden=576, heads=9, kv_heads=3, head_dim=64, inter=1536,
                         layers=30, theta=100000.0, eps=1e-5, tied=True, dtype="F32", positions=8192),
    # seconds-long smoke shapes for the export and the check (decoder_compare.mjs --shapes gpt2-tiny,llama-tiny
    # --lengths 16 --prompt 16 --new 4); the vocabulary covers the prompt's ids (up to 20999)
    "gpt2-tiny": dict(family="gpt2", vocab=21000, hidden=64, heads=4, layers=2, positions=64, inner=None,
                      dtype="F32"),
    "llama-tiny": dict(family="llama", vocab=21000, hidden=64, heads=4, kv_heads=2, head_dim=16, inter=128,
                       layers=2, theta=100000.0, eps=1e-5, tied=True, dtype="F32", positions=64),
}
ROPE_TABLE = 2048  # rows of the cos/sin tables in the rotary graphs: the longest text the benchmark runs


def make_weights(v, gen):
    """(name, float32 tensor) in Hugging Face's names and shapes (docs/decoders.md, "Tensors"); std 0.02 as the
    families initialise, norm gains near 1, so 30 layers keep their activations in range."""
    D, V, NL = v["hidden"], v["vocab"], v["layers"]

    def normal(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std

    def gain(n):
        return 1.0 + torch.randn(n, generator=gen) * 0.05

    w = []
    if v["family"] == "gpt2":
        inner = v["inner"] or 4 * D
        w += [("wte.weight", normal(V, D)), ("wpe.weight", normal(v["positions"], D, std=0.01))]
        for i in range(NL):
            p = "h.%d." % i
            w += [(p + "ln_1.weight", gain(D)), (p + "ln_1.bias", normal(D)),
                  (p + "attn.c_attn.weight", normal(D, 3 * D)), (p + "attn.c_attn.bias", normal(3 * D)),
                  (p + "attn.c_proj.weight", normal(D, D)), (p + "attn.c_proj.bias", normal(D)),
                  (p + "ln_2.weight", gain(D)), (p + "ln_2.bias", normal(D)),
                  (p + "mlp.c_fc.weight", normal(D, inner)), (p + "mlp.c_fc.bias", normal(inner)),
                  (p + "mlp.c_proj.weight", normal(inner, D)), (p + "mlp.c_proj.bias", normal(D))]
        w += [("ln_f.weight", gain(D)), ("ln_f.bias", normal(D))]
    else:
        H, KV, dh, I = v["heads"], v["kv_heads"], v["head_dim"], v["inter"]
        w += [("model.embed_tokens.weight", normal(V, D))]
        for i in range(NL):
            p = "model.layers.%d." % i
            w += [(p + "input_layernorm.weight", gain(D)),
                  (p + "self_attn.q_proj.weight", normal(H * dh, D)),
                  (p + "self_attn.k_proj.weight", normal(KV * dh, D)),
                  (p + "self_attn.v_proj.weight", normal(KV * dh, D)),
                  (p + "self_attn.o_proj.weight", normal(D, H * dh)),
                  (p + "post_attention_layernorm.weight", gain(D)),
                  (p + "mlp.gate_proj.weight", normal(I, D)), (p + "mlp.up_proj.weight", normal(I, D)),
                  (p + "mlp.down_proj.weight", normal(D, I))]
        w += [("model.norm.weight", gain(D))]
        assert v["tied"]
    return w


def config(v):
    c = dg.config(v)
    if v["family"] == "llama":
        c["max_position_embeddings"] = v["positions"]  # the goldens' tiny models write 64
    return c


class Decoder(torch.nn.Module):
    """The function attnlab's decoders compute (docs/decoders.md), for one sequence and a cache of P positions
    (P = 0 in the prefill graph). Rotary cos/sin come from tables computed in float64 and rounded once, as
    src/model/rotary.c does, gathered by position."""

    def __init__(self, v, weights, with_past):
        super().__init__()
        self.v, self.with_past = v, with_past
        self.p = torch.nn.ParameterDict()
        for n, t in weights:
            self.p[n.replace(".", "_")] = torch.nn.Parameter(t, requires_grad=False)
        self.H = v["heads"]
        self.KV = v.get("kv_heads", v["heads"])
        self.dh = v.get("head_dim", v["hidden"] // v["heads"])
        if v["family"] == "llama":
            half = self.dh // 2
            inv = torch.tensor([v["theta"] ** (-2.0 * i / self.dh) for i in range(half)], dtype=torch.float64)
            ang = torch.arange(ROPE_TABLE, dtype=torch.float64)[:, None] * inv[None, :]
            self.register_buffer("cos", torch.cos(ang).to(torch.float32))
            self.register_buffer("sin", torch.sin(ang).to(torch.float32))

    def w(self, name):
        return self.p[name.replace(".", "_")]

    def turn(self, x, pos):  # [1, heads, L, dh], rotate-half
        half = self.dh // 2
        c, s = self.cos[pos][None, None], self.sin[pos][None, None]
        a, b = x[..., :half], x[..., half:]
        return torch.cat((a * c - b * s, b * c + a * s), dim=-1)

    def attend(self, q, k, v, qpos, T):  # q [1,H,L,dh], k/v [1,KV,T,dh]
        g = self.H // self.KV
        if g > 1:
            k = k[:, :, None].expand(1, self.KV, g, T, self.dh).reshape(1, self.H, T, self.dh)
            v = v[:, :, None].expand(1, self.KV, g, T, self.dh).reshape(1, self.H, T, self.dh)
        s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.dh))
        hidden = torch.arange(T)[None, :] > qpos[:, None]
        s = s.masked_fill(hidden, float("-inf"))
        return torch.matmul(torch.softmax(s, dim=-1), v)

    def forward(self, ids, *past):
        v = self.v
        L = ids.shape[1]
        P = past[0].shape[2] if self.with_past else 0
        pos = torch.arange(L) + P
        T = P + L
        D, H, KV, dh = v["hidden"], self.H, self.KV, self.dh
        heads = lambda t, n: t.view(1, L, n, dh).transpose(1, 2)  # noqa: E731
        presents = []
        if v["family"] == "gpt2":
            x = self.w("wte.weight")[ids] + self.w("wpe.weight")[pos][None]
            for i in range(v["layers"]):
                g = lambda n: self.w("h.%d.%s" % (i, n))  # noqa: E731,B023
                h = F.layer_norm(x, (D,), g("ln_1.weight"), g("ln_1.bias"), 1e-5)
                qkv = torch.matmul(h, g("attn.c_attn.weight")) + g("attn.c_attn.bias")
                q, k, val = heads(qkv[..., :D], H), heads(qkv[..., D:2 * D], H), heads(qkv[..., 2 * D:], H)
                if self.with_past:
                    k, val = torch.cat((past[2 * i], k), 2), torch.cat((past[2 * i + 1], val), 2)
                presents += [k, val]
                ctx = self.attend(q, k, val, pos, T).transpose(1, 2).reshape(1, L, D)
                x = x + torch.matmul(ctx, g("attn.c_proj.weight")) + g("attn.c_proj.bias")
                h = F.layer_norm(x, (D,), g("ln_2.weight"), g("ln_2.bias"), 1e-5)
                h = F.gelu(torch.matmul(h, g("mlp.c_fc.weight")) + g("mlp.c_fc.bias"), approximate="tanh")
                x = x + torch.matmul(h, g("mlp.c_proj.weight")) + g("mlp.c_proj.bias")
            x = F.layer_norm(x, (D,), self.w("ln_f.weight"), self.w("ln_f.bias"), 1e-5)
            logits = torch.matmul(x, self.w("wte.weight").t())
        else:
            eps = v["eps"]

            def rms(t, gw):
                return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * gw

            x = self.w("model.embed_tokens.weight")[ids]
            for i in range(v["layers"]):
                g = lambda n: self.w("model.layers.%d.%s" % (i, n))  # noqa: E731,B023
                h = rms(x, g("input_layernorm.weight"))
                q = self.turn(heads(F.linear(h, g("self_attn.q_proj.weight")), H), pos)
                k = self.turn(heads(F.linear(h, g("self_attn.k_proj.weight")), KV), pos)
                val = heads(F.linear(h, g("self_attn.v_proj.weight")), KV)
                if self.with_past:
                    k, val = torch.cat((past[2 * i], k), 2), torch.cat((past[2 * i + 1], val), 2)
                presents += [k, val]
                ctx = self.attend(q, k, val, pos, T).transpose(1, 2).reshape(1, L, H * dh)
                x = x + F.linear(ctx, g("self_attn.o_proj.weight"))
                h = rms(x, g("post_attention_layernorm.weight"))
                h = F.silu(F.linear(h, g("mlp.gate_proj.weight"))) * F.linear(h, g("mlp.up_proj.weight"))
                x = x + F.linear(h, g("mlp.down_proj.weight"))
            x = rms(x, self.w("model.norm.weight"))
            logits = F.linear(x, self.w("model.embed_tokens.weight"))
        return (logits, *presents)


def export(out_dir, name, seed):
    v = SHAPES[name]
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "hf"), exist_ok=True)
    weights = make_weights(v, torch.Generator().manual_seed(seed))
    with open(os.path.join(d, "hf", "config.json"), "w") as f:
        json.dump(config(v), f, indent=2)
    mg.write_safetensors(os.path.join(d, "hf", "model.safetensors"), weights, "F32", {"format": "pt"})
    NL = v["layers"]
    KV = v.get("kv_heads", v["heads"])
    dh = v.get("head_dim", v["hidden"] // v["heads"])
    kv_names = lambda kind: [n for i in range(NL) for n in ("%s_k_%d" % (kind, i), "%s_v_%d" % (kind, i))]  # noqa
    ids = torch.randint(1000, 20000, (1, 8), generator=torch.Generator().manual_seed(1))
    dyn = {"input_ids": {1: "n"}, "logits": {1: "n"}}
    with torch.no_grad():
        prefill = Decoder(v, weights, with_past=False).eval()
        torch.onnx.export(prefill, (ids,), os.path.join(d, "prefill.onnx"), input_names=["input_ids"],
                          output_names=["logits"] + kv_names("present"), opset_version=14,
                          dynamic_axes={**dyn, **{n: {2: "total"} for n in kv_names("present")}})
        decode = Decoder(v, weights, with_past=True).eval()
        past = [torch.randn(1, KV, 5, dh) for _ in range(2 * NL)]
        torch.onnx.export(decode, (ids[:, :1], *past), os.path.join(d, "decode.onnx"),
                          input_names=["input_ids"] + kv_names("past"),
                          output_names=["logits"] + kv_names("present"), opset_version=14,
                          dynamic_axes={**dyn, **{n: {2: "past"} for n in kv_names("past")},
                                        **{n: {2: "total"} for n in kv_names("present")}})
    print("wrote", d)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "build/bench/decoders"
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else ["gpt2-small", "smollm2-135m"]
    for name in names:
        if name not in SHAPES:
            sys.exit("decoder_export: unknown shape '%s' (%s)" % (name, ", ".join(SHAPES)))
        export(out_dir, name, 200 + list(SHAPES).index(name))


if __name__ == "__main__":
    main()
