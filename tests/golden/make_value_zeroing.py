#!/usr/bin/python3
"""Writes tests/golden/bert_value_zeroing.safetensors: value zeroing (Mohebbi et al. 2023; docs/importance.md)
on the golden BERT model's padded batch, computed in float64 by a layer written out here (softmax attention by
hand, then output projection, residual, LayerNorm, feed-forward, residual, LayerNorm), sharing nothing with
the C code.

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it): /usr/bin/python3 tests/golden/make_value_zeroing.py

For each sequence b, layer l and real token j: token j's value vectors (bias included) are zeroed in every head,
the layer is rerun from its input with the original attention weights, and distances[b, l, i, j] is the cosine
distance between token i's original and altered outputs (0 where i or j is padding). normalized divides each
row by its sum. Stored as F32 (one rounding of the float64 answer)."""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_goldens as mg  # noqa: E402  (safetensors writer, activations)
import make_model_golden as mmg  # noqa: E402  (safetensors reader, HF names)

torch.set_default_dtype(torch.float64)


def layer_tail(lw, x, ctx, act, eps):
    D = x.shape[-1]
    h = F.layer_norm(x + ctx @ lw["o_w"].T + lw["o_b"], (D,), lw["ln1_g"], lw["ln1_b"], eps)
    f = act(h @ lw["ff1_w"].T + lw["ff1_b"]) @ lw["ff2_w"].T + lw["ff2_b"]
    return F.layer_norm(h + f, (D,), lw["ln2_g"], lw["ln2_b"], eps)


def main():
    d = os.path.join(HERE, "bert")
    cfg = json.load(open(os.path.join(d, "config.json")))
    p = mmg.params_from_hf(mmg.read_safetensors(os.path.join(d, "model.safetensors")), cfg)
    g = mmg.read_safetensors(os.path.join(d, "golden.safetensors"))
    ids, mask, types = g["input_ids"].long(), g["attention_mask"].long(), g["token_type_ids"].long()
    B, L = ids.shape
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    dh, NL = D // H, cfg["num_hidden_layers"]
    act = mg.act_fn(cfg["hidden_act"])
    dist = torch.zeros(B, NL, L, L)
    for b in range(B):
        real = [i for i in range(L) if mask[b, i]]
        x = p["word"][ids[b]] + p["pos"][torch.arange(L)] + p["type"][types[b]]
        x = F.layer_norm(x, (D,), p["emb_ln_g"], p["emb_ln_b"], eps)
        for l, lw in enumerate(p["layers"]):
            q = (x @ lw["q_w"].T + lw["q_b"]).view(L, H, dh).transpose(0, 1)
            k = (x @ lw["k_w"].T + lw["k_b"]).view(L, H, dh).transpose(0, 1)
            v = (x @ lw["v_w"].T + lw["v_b"]).view(L, H, dh).transpose(0, 1)  # [H, L, dh]
            z = q @ k.transpose(1, 2) / math.sqrt(dh)
            z = z.masked_fill(mask[b][None, None, :] == 0, float("-inf"))
            a = torch.softmax(z, dim=-1)  # [H, L, L]

            def out(vv):
                return layer_tail(lw, x, (a @ vv).transpose(0, 1).reshape(L, D), act, eps)

            y = out(v)
            for j in real:
                vz = v.clone()
                vz[:, j, :] = 0.0
                yj = out(vz)
                for i in real:
                    dist[b, l, i, j] = 1.0 - F.cosine_similarity(y[i], yj[i], dim=0, eps=0.0)
            x = y
    s = dist.sum(-1, keepdim=True)
    norm = torch.where(s > 0, dist / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(dist))
    mg.write_safetensors(os.path.join(HERE, "bert_value_zeroing.safetensors"), [("distances", dist), ("normalized", norm)],
                         "F32", {"generator": "tests/golden/make_value_zeroing.py"})
    print("distances: max %.4g, mean over real pairs %.4g" % (dist.max().item(), dist[dist > 0].mean().item()))


if __name__ == "__main__":
    main()
