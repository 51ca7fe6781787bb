#!/usr/bin/python3
"""Writes tests/golden/decoders/<variant>/papa.safetensors for the GPT-2 goldens: the float64 references of PAPA on
a causal language model (docs/papa.md, "Causal language models"), from the definitions in that page.

Run by hand (needs PyTorch 1.13; CI does not run it): /usr/bin/python3 tests/golden/make_decoder_papa.py
Deterministic: two runs give identical bytes.

The golden's B examples (input_ids, attention_mask of golden.safetensors: right padded, lengths 12, 9, 5) are the
corpus, one window each.
  constants [NL, H, L, L]   C[i, j] = (1 / n_i) sum over the windows longer than i of A[i, j] for j <= i, 0 above the
                            diagonal; n_i the windows reaching i; a row fewer than MIN_WINDOWS windows reach is the
                            uniform prefix 1 / (i + 1) on keys 0 .. i. A from this script's own float64 pass.
  losses_half [B]           each example's mean next-token cross-entropy over its predicted positions (i and i + 1
                            both real) with the heads l * H + h even made constant: their attention C with the entries
                            above the diagonal dropped, masked to the example's real tokens and rows L1-normalised
  losses_all [B]            the same with every head constant
  losses [B]                the same with no head constant (the model's own loss)
Stored as float64 (F64)."""
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as dg  # noqa: E402  (the variants, the weight reader and the hand-written norms)
from make_goldens import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)
MIN_WINDOWS = 2


def constant_hat(C, m):
    """C [L, L] as a causal constant head uses it for one example with mask m [L]: entries above the diagonal
    dropped, rows and columns of pads zeroed, rows L1-normalised with eps 1e-12."""
    L = C.shape[0]
    p = torch.tril(C) * m[:, None] * m[None, :]
    return p / torch.clamp(p.abs().sum(dim=-1, keepdim=True), min=1e-12)


def gpt2_pass(v, w, ids, mask, constant, lam=None):
    """One example [1, L]: per head the attention [NL, H, L, L] and the mean next-token loss; constant maps
    (l, h) to the head's [L, L] constant (None: every head standard). With lam [NL, H] (lambda's stage, PAPA's
    mixture) a head of constant mixes instead: lam[l, h] * its softmax + (1 - lam[l, h]) * its constant."""
    p0 = v.get("prefix", "")
    D, H, NL = v["hidden"], v["heads"], v["layers"]
    dh = D // H
    Ln = ids.shape[1]
    m = mask[0].to(torch.float64)
    x = w[p0 + "wte.weight"][ids] + w[p0 + "wpe.weight"][torch.arange(Ln)][None]
    ok = dg.allowed_keys(mask)
    attns = torch.zeros(NL, H, Ln, Ln)
    for l in range(NL):
        p = p0 + "h.%d." % l
        a = dg.layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, val = (dg.split_heads(qkv[..., s * D:(s + 1) * D], H, dh) for s in range(3))
        probs, vh, _ = dg.attend(q, k, val, ok, 1.0 / math.sqrt(dh))
        heads = []
        for h in range(H):
            ph = probs[0, h]
            if constant and (l, h) in constant:
                ch = constant_hat(constant[(l, h)], m)
                ph = ch if lam is None else lam[l, h] * ph + (1 - lam[l, h]) * ch
            heads.append(ph)
        probs = torch.stack(heads)[None]  # not in place: lam's gradient flows through
        attns[l] = probs[0].detach()
        ctx = (probs @ vh).transpose(1, 2).reshape(1, Ln, D)
        x = x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        mm = dg.layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        x = x + dg.gelu_tanh(mm @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
            + w[p + "mlp.c_proj.bias"]
    x = dg.layer_norm(x, w[p0 + "ln_f.weight"], w[p0 + "ln_f.bias"], 1e-5)
    logp = torch.log_softmax(x @ w[p0 + "wte.weight"].T, dim=-1)
    n = int(mask[0].sum())
    nll = torch.stack([-logp[0, i, ids[0, i + 1]] for i in range(n - 1)])
    return attns, (nll.sum() if lam is not None else nll.mean())


def averaged_constants(v, w, ids, mask):
    """The causal constants [NL, H, L, L] over the B examples (one window each) and each example's own loss [B]."""
    B, L = ids.shape
    NL, H = v["layers"], v["heads"]
    lengths = [int(mask[b].sum()) for b in range(B)]
    S = torch.zeros(NL, H, L, L)
    losses = torch.zeros(B)
    for b in range(B):
        A, losses[b] = gpt2_pass(v, w, ids[b:b + 1], mask[b:b + 1], None)
        n = lengths[b]
        S[:, :, :n, :n] += A[:, :, :n, :n]
    C = torch.zeros(NL, H, L, L)
    for i in range(L):
        reach = sum(1 for n in lengths if n > i)
        if reach < MIN_WINDOWS:
            C[:, :, i, :i + 1] = 1.0 / (i + 1)
        else:
            C[:, :, i, :i + 1] = S[:, :, i, :i + 1] / reach
    return C, losses


def run(v):
    d = os.path.join(dg.OUT, v["name"])
    g = dg.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    ids, mask = g["input_ids"].long(), g["attention_mask"].long()
    B, L = ids.shape
    NL, H = v["layers"], v["heads"]
    w = dg.read_back(v, d)
    if v.get("prefix") and (v["prefix"] + "wte.weight") not in w:
        w = {v["prefix"] + n: t for n, t in w.items()}
    C, losses = averaged_constants(v, w, ids, mask)
    half = {(l, h): C[l, h] for l in range(NL) for h in range(H) if (l * H + h) % 2 == 0}
    every = {(l, h): C[l, h] for l in range(NL) for h in range(H)}
    losses_half = torch.tensor([float(gpt2_pass(v, w, ids[b:b + 1], mask[b:b + 1], half)[1]) for b in range(B)])
    losses_all = torch.tensor([float(gpt2_pass(v, w, ids[b:b + 1], mask[b:b + 1], every)[1]) for b in range(B)])
    write_safetensors(os.path.join(d, "papa.safetensors"),
                      [("constants", C), ("losses", losses), ("losses_half", losses_half), ("losses_all", losses_all)],
                      "F64", {"generator": "tests/golden/make_decoder_papa.py", "variant": v["name"],
                              "min_windows": str(MIN_WINDOWS)})
    return "%-14s losses %s, half constant %s, all constant %s" % (
        v["name"], ["%.4f" % float(x) for x in losses], ["%.4f" % float(x) for x in losses_half],
        ["%.4f" % float(x) for x in losses_all])


def main():
    torch.set_num_threads(1)
    for v in dg.VARIANTS:
        if v["family"] == "gpt2":
            print(run(v))


if __name__ == "__main__":
    main()
