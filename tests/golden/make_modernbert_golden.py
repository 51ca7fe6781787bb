#!/usr/bin/python3
"""Writes tests/golden/modernbert/: a small random ModernBERT in Hugging Face's layout (config.json,
model.safetensors with ModernBertForMaskedLM's tensor names, the decoder tied to the embeddings and so not
stored) and golden.safetensors: its forward pass over a padded batch computed here in float64 by an
implementation written from the model's description in docs/families.md (not from any library's code):

  h = norm(E[ids])                                  norms: LayerNorm without bias
  layer l: h = h + Wo attn(l == 0 ? h : norm(h))    Wqkv [3D, D]: query rows, key rows, value rows
           h = h + Wo_mlp(gelu(u) * g)              [u | g] = Wi norm(h), Wi [2I, D]
  attn: rotary queries and keys (pair i, i + dh/2 turned by pos * base^(-2i/dh)), base global_rope_theta on
        layers l % global_attn_every_n_layers == 0, else local_rope_theta and only keys within
        local_attention // 2 positions; pad keys never read; a row with no key left is zeros
  h = norm(h) after the last layer (hidden_states[-1] is after the final norm: docs/families.md)
  logits = E norm(gelu(W_dense h)) + decoder.bias

The batch has three rows of lengths 12, 7 and 3 at L = 12: with local_attention 4 (two positions each
side) the pads at positions 5..11 of the third row see only pads in the local layers (zero rows).

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it):
    /usr/bin/python3 tests/golden/make_modernbert_golden.py
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_goldens import write_safetensors  # noqa: E402  (the safetensors writer only)

V, D, H, NL, I, P = 100, 32, 4, 4, 48, 64
EVERY, WINDOW, G_THETA, L_THETA, EPS, PAD = 3, 4, 160000.0, 10000.0, 1e-5, 3
B, L, LENGTHS = 3, 12, (12, 7, 3)


def config():
    return {
        "architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert", "vocab_size": V,
        "hidden_size": D, "num_hidden_layers": NL, "num_attention_heads": H, "intermediate_size": I,
        "max_position_embeddings": P, "hidden_activation": "gelu", "classifier_activation": "gelu",
        "norm_eps": EPS, "norm_bias": False, "attention_bias": False, "mlp_bias": False,
        "classifier_bias": False, "decoder_bias": True, "global_attn_every_n_layers": EVERY,
        "local_attention": WINDOW, "global_rope_theta": G_THETA, "local_rope_theta": L_THETA,
        "pad_token_id": PAD, "tie_word_embeddings": True, "torch_dtype": "float32",
    }


def weights(gen):
    def normal(*shape, std):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * std

    def gain():
        return 1.0 + normal(D, std=0.2)

    w = {"model.embeddings.tok_embeddings.weight": normal(V, D, std=1.0),
         "model.embeddings.norm.weight": gain()}
    for l in range(NL):
        p = "model.layers.%d." % l
        if l > 0:
            w[p + "attn_norm.weight"] = gain()
        w[p + "attn.Wqkv.weight"] = normal(3 * D, D, std=0.5)
        w[p + "attn.Wo.weight"] = normal(D, D, std=0.2)
        w[p + "mlp_norm.weight"] = gain()
        w[p + "mlp.Wi.weight"] = normal(2 * I, D, std=0.2)
        w[p + "mlp.Wo.weight"] = normal(D, I, std=0.2)
    w["model.final_norm.weight"] = gain()
    w["head.dense.weight"] = normal(D, D, std=0.2)
    w["head.norm.weight"] = gain()
    w["decoder.bias"] = normal(V, std=0.5)
    # float32 values, so the C side loads exactly what is computed with here
    return {k: v.float().double() for k, v in w.items()}


def norm(x, g):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + EPS) * g


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def rotate(x, base):
    """x [B, H, L, dh]: pair (i, i + dh/2) turned by the angle pos * base^(-2i/dh)."""
    dh = x.shape[-1]
    half = dh // 2
    inv = torch.tensor([base ** (-(2.0 * i) / dh) for i in range(half)], dtype=torch.float64)
    ang = torch.arange(x.shape[2], dtype=torch.float64)[:, None] * inv[None, :]  # [L, half]
    c, s = torch.cos(ang), torch.sin(ang)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * c - b * s, b * c + a * s], dim=-1)


def forward(w, ids, mask):
    dh = D // H
    h = norm(w["model.embeddings.tok_embeddings.weight"][ids], w["model.embeddings.norm.weight"])
    hidden, attns, values = [h], [], []
    pos = torch.arange(L)
    near = (pos[:, None] - pos[None, :]).abs() <= WINDOW // 2  # [L, L]
    for l in range(NL):
        p = "model.layers.%d." % l
        glob = l % EVERY == 0
        x = h if l == 0 else norm(h, w[p + "attn_norm.weight"])
        qkv = x @ w[p + "attn.Wqkv.weight"].T  # [B, L, 3D]
        q, k, v = (qkv[..., j * D:(j + 1) * D].reshape(B, L, H, dh).transpose(1, 2) for j in range(3))
        base = G_THETA if glob else L_THETA
        q, k = rotate(q, base), rotate(k, base)
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)  # [B, H, L, L]
        allowed = mask[:, None, None, :].bool().expand(B, H, L, L)
        if not glob:
            allowed = allowed & near[None, None]
        scores = scores.masked_fill(~allowed, -math.inf)
        any_key = allowed.any(-1, keepdim=True)
        probs = torch.softmax(torch.where(any_key, scores, torch.zeros_like(scores)), dim=-1)
        probs = torch.where(allowed, probs, torch.zeros_like(probs))
        attns.append(probs)
        values.append(v)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, D)
        h = h + ctx @ w[p + "attn.Wo.weight"].T
        ug = norm(h, w[p + "mlp_norm.weight"]) @ w[p + "mlp.Wi.weight"].T
        h = h + (gelu(ug[..., :I]) * ug[..., I:]) @ w[p + "mlp.Wo.weight"].T
        if l == NL - 1:
            h = norm(h, w["model.final_norm.weight"])
        hidden.append(h)
    t = norm(gelu(h @ w["head.dense.weight"].T), w["head.norm.weight"])
    logits = t @ w["model.embeddings.tok_embeddings.weight"].T + w["decoder.bias"]
    return torch.stack(hidden), torch.stack(attns), torch.stack(values), logits


def main():
    out_dir = os.path.join(HERE, "modernbert")
    os.makedirs(out_dir, exist_ok=True)
    gen = torch.Generator().manual_seed(2611)
    w = weights(gen)
    ids = torch.full((B, L), PAD, dtype=torch.long)
    mask = torch.zeros((B, L), dtype=torch.long)
    for b, n in enumerate(LENGTHS):
        ids[b, :n] = torch.randint(4, V, (n,), generator=gen)
        mask[b, :n] = 1
    hidden, attns, values, logits = forward(w, ids, mask)
    assert torch.isfinite(hidden).all() and torch.isfinite(logits).all()
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config(), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(out_dir, "model.safetensors"), sorted(w.items()), "F32")
    write_safetensors(os.path.join(out_dir, "golden.safetensors"),
                      [("input_ids", ids.double()), ("attention_mask", mask.double()), ("hidden_states", hidden),
                       ("attentions", attns), ("values", values), ("mlm_logits", logits)],
                      "F32", {"generator": "tests/golden/make_modernbert_golden.py"})


if __name__ == "__main__":
    main()
