#!/usr/bin/python3
"""Writes tests/golden/decoders/<variant>/heads.safetensors: the float64 references of the head statistics on every
decoder golden and of gradient head importance with the language-model loss on the GPT-2 goldens (docs/measures.md
"Causal decoders", docs/importance.md "Causal language models"), from the definitions in those pages.

Run by hand (needs PyTorch 1.13; CI does not run it): /usr/bin/python3 tests/golden/make_decoder_heads.py
Deterministic: two runs give identical bytes.

  stats [B, NL, H, 8]   per example and head: entropy, confidence, cls, sep, first, punct, js, sink over the rows
                        that see k_i >= 2 real keys j <= i (the first row left out); a row's entropy divided by
                        ln k_i; read from the golden's own attentions (its float64 reference pass rounded once to
                        float32). The key classes are the test's: [CLS] the first real token, [SEP] the last,
                        punctuation the real tokens whose id % 7 == 3; the constant is all ones, which a causal head
                        uses as the uniform row over its visible keys (entries after i dropped, masked, normalised)
  grads [B, NL, H]      (every variant) dL_b/dxi at xi = 1, xi the head mask scaling each head's
                        context before the output projection (GPT-2 by gpt2_loss, the others through
                        make_decoder_goldens.py's reference pass), L_b the mean over the predicted positions of example b (i and i + 1 both
                        real) of the next-token cross-entropy -log softmax(logits_i)[ids_{i+1}]
  losses [B]            (the same variants) L_b
Stored as float64 (F64)."""
import math
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as dg  # noqa: E402  (the variants, the weight reader and the hand-written norms)
from make_goldens import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)
CLS, SEP, PUNCT = 1, 2, 4


def classes_of(ids, n):
    c = [0] * ids.shape[0]
    for j in range(n):
        if int(ids[j]) % 7 == 3:
            c[j] |= PUNCT
    c[0] |= CLS
    c[n - 1] |= SEP
    return c


def row_stats(a, n, cls):
    """One head's [L, L] map of one example with n real tokens (right padding): the 8 means over rows 1..n-1."""
    s = [0.0] * 8
    rows = 0
    for i in range(1, n):
        k = i + 1
        r = a[i, :k]
        ent = -sum(float(v) * math.log(float(v)) for v in r if v > 0)
        u = torch.full((k,), 1.0 / k)  # the all-ones constant on a causal row: uniform over j <= i
        m = 0.5 * (r + u)
        js = 0.5 * sum(float(x) * math.log(float(x) / float(y)) for x, y in zip(r, m) if x > 0) \
            + 0.5 * sum(float(x) * math.log(float(x) / float(y)) for x, y in zip(u, m) if x > 0)
        vals = [ent / math.log(k), float(r.max()),
                sum(float(r[j]) for j in range(k) if cls[j] & CLS),
                sum(float(r[j]) for j in range(k) if cls[j] & SEP),
                float(r[0]),
                sum(float(r[j]) for j in range(k) if cls[j] & PUNCT),
                js,
                sum(float(r[j]) for j in range(k) if cls[j] or j == 0)]
        s = [x + y for x, y in zip(s, vals)]
        rows += 1
    return [x / rows for x in s] if rows else [float("nan")] * 8


def gpt2_loss(v, w, ids, mask, xi):
    """Per example: the mean next-token cross-entropy of GPT-2 with head mask xi [NL, H] (docs/decoders.md)."""
    p0 = v.get("prefix", "")
    D, H, NL = v["hidden"], v["heads"], v["layers"]
    dh = D // H
    Bn, Ln = ids.shape
    x = w[p0 + "wte.weight"][ids] + w[p0 + "wpe.weight"][torch.arange(Ln)][None]
    ok = dg.allowed_keys(mask)
    for l in range(NL):
        p = p0 + "h.%d." % l
        a = dg.layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, val = (dg.split_heads(qkv[..., s * D:(s + 1) * D], H, dh) for s in range(3))
        probs, vh, _ = dg.attend(q, k, val, ok, 1.0 / math.sqrt(dh))
        ctx = (probs @ vh) * xi[l][None, :, None, None]  # [B, H, L, dh]: head h's context scaled by xi_h
        ctx = ctx.transpose(1, 2).reshape(Bn, Ln, D)
        x = x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = dg.layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        x = x + dg.gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
            + w[p + "mlp.c_proj.bias"]
    x = dg.layer_norm(x, w[p0 + "ln_f.weight"], w[p0 + "ln_f.bias"], 1e-5)
    logits = x @ w[p0 + "wte.weight"].T
    logp = torch.log_softmax(logits, dim=-1)
    losses = []
    for b in range(Bn):
        n = int(mask[b].sum())
        nll = [-logp[b, i, ids[b, i + 1]] for i in range(n - 1)]
        losses.append(torch.stack(nll).mean())
    return losses, logits


def example_loss(v, w, ids, mask, xi):
    """gpt2_loss's per-example loss for the other families, through make_decoder_goldens.py's reference pass."""
    weights = [(n, t) for n, t in w.items() if not n.endswith("rotary_emb.inv_freq")]
    pos = torch.arange(ids.shape[1])[None].expand_as(ids)
    _, _, _, logits = dg.forward(v, weights, ids, mask, pos, xi=xi.to(torch.float64))
    logp = torch.log_softmax(logits, dim=-1)
    losses = []
    for b in range(ids.shape[0]):
        n = int(mask[b].sum())
        nll = [-logp[b, i, ids[b, i + 1]] for i in range(n - 1)]
        losses.append(torch.stack(nll).mean())
    return losses, logits


def run(v):
    d = os.path.join(dg.OUT, v["name"])
    g = dg.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    ids, mask, attns = g["input_ids"].long(), g["attention_mask"].long(), g["attentions"]
    NL, B, H, L, _ = attns.shape
    stats = torch.zeros(B, NL, H, 8)
    for b in range(B):
        n = int(mask[b].sum())
        cls = classes_of(ids[b], n)
        for l in range(NL):
            for h in range(H):
                stats[b, l, h] = torch.tensor(row_stats(attns[l, b, h], n, cls))
    out = [("stats", stats)]
    note = "%-18s stats: entropy in [%.3f, %.3f]" % (v["name"], float(stats[..., 0].min()), float(stats[..., 0].max()))
    w = dg.read_back(v, d)
    if v.get("prefix") and (v["prefix"] + "wte.weight") not in w:
        w = {v["prefix"] + n: t for n, t in w.items()}
    grads = torch.zeros(B, NL, H)
    losses = torch.zeros(B)
    for b in range(B):
        xi = torch.ones(NL, H, requires_grad=True)
        loss = gpt2_loss if v["family"] == "gpt2" else example_loss
        lb, logits = loss(v, w, ids[b:b + 1], mask[b:b + 1], xi)
        lb[0].backward()
        grads[b] = xi.grad
        losses[b] = lb[0].detach()
        n = int(mask[b].sum())
        err = float((logits[0, :n].detach() - g["logits"][b, :n]).abs().max())
        assert err < 1e-5, (v["name"], err)  # the gated pass at xi = 1 is the golden's
    out += [("grads", grads), ("losses", losses)]
    note += ", losses %s, max |dL/dxi| %.4f" % (["%.4f" % float(x) for x in losses], float(grads.abs().max()))
    write_safetensors(os.path.join(d, "heads.safetensors"), out, "F64",
                      {"generator": "tests/golden/make_decoder_heads.py", "variant": v["name"]})
    return note


def main():
    torch.set_num_threads(1)
    for v in dg.VARIANTS:
        print(run(v))


if __name__ == "__main__":
    main()
