#!/usr/bin/python3
"""Writes tests/golden/bert/measures.safetensors, the reference for the measures beside PAPA (docs/measures.md).

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it): /usr/bin/python3 tests/golden/make_measures_golden.py

It reads the golden BERT (tests/golden/bert/model.safetensors) and the inputs of golden.safetensors, runs the
encoder in float64 by hand (embeddings, then per layer multi-head attention + residual + LayerNorm + FFN), and
computes from that float64 pass, with nothing shared with the C code:
  norm_attentions [NL,B,H,L,L]  alpha_h[i,j] * ||f_h(x_j)||, f_h(x) = (x W_V + b_V)_h W_O^h  (Kobayashi et al. 2020)
  layer_norms     [NL,B,L,L]    ||sum_h alpha_h[i,j] f_h(x_j)||
  res_ln_norms    [NL,B,L,L]    ||g_i(sum_h alpha_h[i,j] f_h(x_j) + [i==j] x_i)||, g_i(z) = gamma (z - mean z) / s_i,
                                s_i the standard deviation (with eps) of the first LayerNorm's input (Kobayashi et al. 2021)
  rollout_raw, rollout_effective, rollout_norm [NL,B,L,L]  attention rollout (Abnar & Zuidema 2020)
  head_stats      [B,NL,H,8]    entropy, confidence, cls, sep, first, punct, js, sink per example (mean over real
                                queries; sink: the mass on the keys that are any of [CLS], [SEP], first, punctuation)
  constants       [NL,H,L,L]    PAPA's masked average of the three examples' attention (the js reference)
Pads are neither queries nor keys. Stored as float32."""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "bert")
torch.set_default_dtype(torch.float64)
EPS32 = float(np.finfo(np.float32).eps)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        a, b = h["data_offsets"]
        assert h["dtype"] == "F32", name
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype="<f4").astype(np.float64).reshape(h["shape"]))
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {"__metadata__": {"generator": "tests/golden/make_measures_golden.py"}}, [], 0
    for name, t, dtype in tensors:
        b = t.detach().numpy().astype("<f4" if dtype == "F32" else "<f8").tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def forward(w, cfg, ids, types, mask):
    """float64 BERT: per layer x (input), probs [B,H,L,L], v [B,H,L,dh]."""
    B, L = ids.shape
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    dh = D // H
    e = "bert.embeddings."
    x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][torch.arange(L)] \
        + w[e + "token_type_embeddings.weight"][types]
    x = F.layer_norm(x, (D,), w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], eps)
    layers = []
    for l in range(cfg["num_hidden_layers"]):
        p = "bert.encoder.layer.%d." % l
        lin = lambda t, n: t @ w[p + n + ".weight"].T + w[p + n + ".bias"]
        q = lin(x, "attention.self.query").view(B, L, H, dh).transpose(1, 2)
        k = lin(x, "attention.self.key").view(B, L, H, dh).transpose(1, 2)
        v = lin(x, "attention.self.value").view(B, L, H, dh).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + ((1 - mask) * -10000.0)[:, None, None, :]
        probs = torch.softmax(s, dim=-1)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, D)
        a = lin(ctx, "attention.output.dense")
        layers.append((x, probs, v))
        x = F.layer_norm(x + a, (D,), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], eps)
        f = lin(F.gelu(lin(x, "intermediate.dense")), "output.dense")
        x = F.layer_norm(x + f, (D,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return layers


def bert_attention_output(w, l):
    """The golden BERT's layer l: output projection and first LayerNorm's weight."""
    p = "bert.encoder.layer.%d.attention.output." % l
    return w[p + "dense.weight"], w[p + "dense.bias"], w[p + "LayerNorm.weight"]


def norm_measures(Wo, bo, gamma, H, eps, x, probs, v, m):
    """One example: Wo [D,D], bo [D] the output projection (nn.Linear), gamma [D] the first LayerNorm's weight,
    x [L,D], probs [H,L,L], v [H,L,dh], m [L] 0/1."""
    D = x.shape[-1]
    dh = D // H
    L = x.shape[0]
    f = torch.stack([v[h] @ Wo[:, h * dh:(h + 1) * dh].T for h in range(H)])  # [H, L, D]
    f = f * m[None, :, None]
    mm = m[:, None] * m[None, :]
    heads = probs * f.norm(dim=-1)[:, None, :] * mm[None]
    y = torch.einsum("hij,hjd->ijd", probs * mm[None], f)  # [L, L, D]
    layer = y.norm(dim=-1) * mm
    y = y + torch.diag_embed(torch.ones(L))[:, :, None] * x[:, None, :] * m[:, None, None]
    u = y.sum(dim=1) + bo  # the first LayerNorm's input, per query
    s = torch.sqrt(u.var(dim=-1, unbiased=False) + eps)
    g = gamma * (y - y.mean(dim=-1, keepdim=True)) / s[:, None, None]
    res_ln = g.norm(dim=-1) * mm
    return heads, layer, res_ln


def effective(probs, v, m):
    """Exact mode: each head's rows over the real tokens projected onto col(V_real)."""
    H, L, _ = probs.shape
    idx = torch.nonzero(m).flatten()
    out = torch.zeros_like(probs)
    for h in range(H):
        V = v[h][idx]
        U, S, _ = torch.linalg.svd(V, full_matrices=False)
        r = int((S > S[0] * max(V.shape) * EPS32).sum())
        P = U[:, :r] @ U[:, :r].T
        out[h][idx[:, None], idx[None, :]] = probs[h][idx][:, idx] @ P
    return out


def rollout(maps, m, normalise_first):
    idx = torch.nonzero(m).flatten()
    n, L = len(idx), m.shape[0]
    R, out = None, []
    for A in maps:
        a = A[:, idx][:, :, idx].mean(dim=0)
        if normalise_first:
            a = a / a.sum(dim=-1, keepdim=True)
        a = 0.5 * a + 0.5 * torch.eye(n)
        a = a / a.sum(dim=-1, keepdim=True)
        R = a if R is None else a @ R
        full = torch.zeros(L, L)
        full[idx[:, None], idx[None, :]] = R
        out.append(full)
    return torch.stack(out)


def head_stats(probs, m, C):
    """probs [NL,H,L,L] one example; C [NL,H,L,L]; classes by the no-tokenizer rule: first real [CLS], last [SEP]."""
    idx = torch.nonzero(m).flatten()
    first, last = int(idx[0]), int(idx[-1])
    NL, H = probs.shape[:2]
    out = torch.zeros(NL, H, 8)
    sinks = sorted({first, last})
    for l in range(NL):
        for h in range(H):
            a = probs[l, h][idx][:, idx]
            zero = torch.zeros_like(a)  # 0 log 0 = 0: a windowed layer (ModernBERT) holds exact zeros
            ent = -torch.where(a > 0, a * torch.log(a), zero).sum(dim=-1)
            c = C[l, h][idx][:, idx]
            c = c / c.sum(dim=-1, keepdim=True).clamp(min=1e-12)
            mid = 0.5 * (a + c)
            js = 0.5 * torch.where(a > 0, a * torch.log(a / mid), zero).sum(-1) + 0.5 * torch.where(c > 0, c * torch.log(c / mid), torch.zeros_like(c)).sum(-1)
            out[l, h] = torch.tensor([ent.mean(), a.max(dim=-1).values.mean(), probs[l, h][idx, first].mean(),
                                      probs[l, h][idx, last].mean(), probs[l, h][idx, first].mean(), 0.0, js.mean(),
                                      probs[l, h][idx][:, sinks].sum(dim=-1).mean()])
    return out


def main():
    cfg = json.load(open(os.path.join(DIR, "config.json")))
    w = read_safetensors(os.path.join(DIR, "model.safetensors"))
    g = read_safetensors(os.path.join(DIR, "golden.safetensors"))
    ids, mask = g["input_ids"].long(), g["attention_mask"]
    types = g["token_type_ids"].long()
    layers = forward(w, cfg, ids, types, mask)
    probs_all = torch.stack([p for _, p, _ in layers])  # [NL,B,H,L,L]
    print("forward vs golden attentions: max |diff| %.3g" % (probs_all - g["attentions"]).abs().max())
    NL, B = len(layers), ids.shape[0]
    heads, lay, rln, rr, re, rn = [], [], [], [], [], []
    for l, (x, probs, v) in enumerate(layers):
        hb, lb, rb = [], [], []
        for b in range(B):
            h_, l_, r_ = norm_measures(*bert_attention_output(w, l), cfg["num_attention_heads"], cfg["layer_norm_eps"],
                                       x[b], probs[b], v[b], mask[b])
            hb.append(h_), lb.append(l_), rb.append(r_)
        heads.append(torch.stack(hb)), lay.append(torch.stack(lb)), rln.append(torch.stack(rb))
    heads, lay, rln = torch.stack(heads), torch.stack(lay), torch.stack(rln)
    for b in range(B):
        m = mask[b]
        rr.append(rollout([probs[b] for _, probs, _ in layers], m, False))
        re.append(rollout([effective(probs[b], v[b], m) for _, probs, v in layers], m, False))
        rn.append(rollout([heads[l, b] for l in range(NL)], m, True))
    # PAPA's masked average over the three examples: sum A m_i m_j / count of both real
    mm = mask[:, :, None] * mask[:, None, :]
    C = (probs_all * mm[None, :, None]).sum(dim=1) / mm.sum(dim=0).clamp(min=1)[None, None]
    C = C * (mm.sum(dim=0) > 0)[None, None]
    C32 = C.to(torch.float32).to(torch.float64)  # what the C side holds
    stats = torch.stack([head_stats(probs_all[:, b], mask[b], C32) for b in range(B)])
    write_safetensors(os.path.join(DIR, "measures.safetensors"), [
        ("norm_attentions", heads, "F32"), ("layer_norms", lay, "F32"), ("res_ln_norms", rln, "F32"),
        ("rollout_raw", torch.stack(rr, dim=1), "F32"), ("rollout_effective", torch.stack(re, dim=1), "F32"),
        ("rollout_norm", torch.stack(rn, dim=1), "F32"), ("constants", C, "F32"), ("head_stats", stats, "F32")])
    print("wrote", os.path.join(DIR, "measures.safetensors"))


if __name__ == "__main__":
    main()
