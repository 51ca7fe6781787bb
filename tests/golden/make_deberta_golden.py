#!/usr/bin/python3
"""Writes tests/golden/deberta_v3/ (and deberta_v3_lmhead/): a small random DeBERTa-v3-shaped encoder in
Hugging Face layout and the outputs of an independent float64 reference, for tests/c/test_golden.c and
tests/c/test_deberta.c.

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it): /usr/bin/python3 tests/golden/make_deberta_golden.py

The model is microsoft/deberta-v3-base's config shrunk (hidden 32, 4 heads, 2 layers, vocabulary 100,
position_buckets 8, 32 positions): relative_attention with pos_att_type "p2c|c2p", share_att_key,
norm_rel_ebd "layer_norm", position_biased_input false, type_vocab_size 0. The reference follows the
disentangled attention as the DeBERTa paper states it and docs/families.md ("DeBERTa") spells out, written here
from those rules alone:

  S[i][j] = (q_i . k_j + q_i . kr[r(i,j)] + k_j . qr[r(i,j)]) / sqrt(dh * 3)

qr, kr the layer's query and key projections of LayerNorm(rel_embeddings); r(i,j) the embedding row of the
log-bucketed distance i - j, clamped to the table. The softmax runs over the real keys; a pad query's row is 0.
Everything is float64 and stored float32. The buckets are computed twice, in float64 here and in float32 as
Hugging Face's make_log_bucket_position does, and must agree.

golden.safetensors holds input_ids, attention_mask, hidden_states [NL+1,B,L,D], attentions [NL,B,H,L,L],
values [NL,B,H,L,dh], mlm_logits [B,L,V]; hooks.safetensors the same outputs with per-head policies (a
CONSTANT, a MIX and a ZERO head, rules as tests/golden/make_goldens.py's hooked_probs) plus the policies.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_goldens as mg  # noqa: E402  (safetensors writing only)

torch.set_default_dtype(torch.float64)

VOCAB, D, H, INTER, MAXPOS, BUCKETS, NL = 100, 32, 4, 64, 32, 8, 2
B, L = 3, 24
LENGTHS = [24, 17, 6]
EPS = 1e-7
STANDARD, CONSTANT, MIX, ZERO = 0, 1, 2, 3


def bucket64(rel, buckets, max_pos):
    """The log bucket of distance rel (float64)."""
    mid = buckets // 2
    a = abs(rel)
    if a <= mid:
        return rel
    v = math.ceil(math.log(a / mid) / math.log((max_pos - 1) / mid) * (mid - 1)) + mid
    return int(math.copysign(v, rel))


def bucket32_table(n, buckets, max_pos):
    """The same in float32 tensor arithmetic (how Hugging Face computes it), for all |rel| < n."""
    rel = torch.arange(-(n - 1), n, dtype=torch.long)
    mid = buckets // 2
    sign = torch.sign(rel)
    a = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1), rel.abs())
    num = torch.log(a.to(torch.float32) / mid)
    den = torch.log(torch.tensor((max_pos - 1) / mid, dtype=torch.float32))
    log_pos = torch.ceil(num / den * (mid - 1)) + mid
    return torch.where(a <= mid, rel.to(torch.float32), log_pos * sign).long()


def rel_rows(n, buckets, max_pos):
    """r(i, j) for i, j < n: bucket(i - j) + buckets, clamped to [0, 2 buckets)."""
    t32 = bucket32_table(n, buckets, max_pos)
    t64 = [bucket64(d, buckets, max_pos) for d in range(-(n - 1), n)]
    assert t32.tolist() == t64, "float32 and float64 buckets differ"
    i = torch.arange(n)
    d = i[:, None] - i[None, :]
    return torch.clamp(torch.tensor(t64)[d + n - 1] + buckets, 0, 2 * buckets - 1)


def make_params(gen):
    def normal(*shape, std=0.3):
        return torch.randn(*shape, generator=gen) * std

    def gain(n):
        return 1.0 + torch.randn(n, generator=gen) * 0.2

    p = {"word": normal(VOCAB, D, std=0.5), "emb_ln_g": gain(D), "emb_ln_b": normal(D, std=0.1),
         "rel": normal(2 * BUCKETS, D, std=0.5), "rel_ln_g": gain(D), "rel_ln_b": normal(D, std=0.1), "layers": []}
    for _ in range(NL):
        lw = {}
        for n in ("q", "k", "v", "o"):
            lw[n + "_w"] = normal(D, D, std=0.3 if n in "qk" else 0.25)
            lw[n + "_b"] = normal(D, std=0.1)
        lw["ln1_g"], lw["ln1_b"] = gain(D), normal(D, std=0.1)
        lw["ff1_w"], lw["ff1_b"] = normal(INTER, D, std=0.25), normal(INTER, std=0.1)
        lw["ff2_w"], lw["ff2_b"] = normal(D, INTER, std=0.2), normal(D, std=0.1)
        lw["ln2_g"], lw["ln2_b"] = gain(D), normal(D, std=0.1)
        p["layers"].append(lw)
    p["mlm_w"], p["mlm_b"] = normal(D, D, std=0.3), normal(D, std=0.1)
    p["mlm_ln_g"], p["mlm_ln_b"] = gain(D), normal(D, std=0.1)
    p["mlm_bias"] = normal(VOCAB, std=0.1)
    # as loaded in C: float32 values
    for k, v in list(p.items()):
        if k == "layers":
            p[k] = [{n: t.float().double() for n, t in lw.items()} for lw in v]
        else:
            p[k] = v.float().double()
    return p


def hf_names(p, lm_predictions=False):
    t = [("deberta.embeddings.word_embeddings.weight", p["word"]),
         ("deberta.embeddings.LayerNorm.weight", p["emb_ln_g"]), ("deberta.embeddings.LayerNorm.bias", p["emb_ln_b"]),
         ("deberta.encoder.rel_embeddings.weight", p["rel"]),
         ("deberta.encoder.LayerNorm.weight", p["rel_ln_g"]), ("deberta.encoder.LayerNorm.bias", p["rel_ln_b"])]
    for i, lw in enumerate(p["layers"]):
        pre = f"deberta.encoder.layer.{i}."
        for n, hf in (("q", "attention.self.query_proj"), ("k", "attention.self.key_proj"),
                      ("v", "attention.self.value_proj"), ("o", "attention.output.dense"),
                      ("ff1", "intermediate.dense"), ("ff2", "output.dense")):
            t += [(pre + hf + ".weight", lw[n + "_w"]), (pre + hf + ".bias", lw[n + "_b"])]
        t += [(pre + "attention.output.LayerNorm.weight", lw["ln1_g"]),
              (pre + "attention.output.LayerNorm.bias", lw["ln1_b"]),
              (pre + "output.LayerNorm.weight", lw["ln2_g"]), (pre + "output.LayerNorm.bias", lw["ln2_b"])]
    if lm_predictions:  # DebertaV2ForMaskedLM with legacy false: the decoder is the word embeddings
        h = "lm_predictions.lm_head."
        t += [(h + "dense.weight", p["mlm_w"]), (h + "dense.bias", p["mlm_b"]), (h + "LayerNorm.weight", p["mlm_ln_g"]),
              (h + "LayerNorm.bias", p["mlm_ln_b"]), (h + "bias", p["mlm_bias"])]
    else:  # the legacy head, decoder tied and omitted
        h = "cls.predictions."
        t += [(h + "transform.dense.weight", p["mlm_w"]), (h + "transform.dense.bias", p["mlm_b"]),
              (h + "transform.LayerNorm.weight", p["mlm_ln_g"]), (h + "transform.LayerNorm.bias", p["mlm_ln_b"]),
              (h + "bias", p["mlm_bias"])]
    return t


def config():
    """deberta-v3-base's config.json with the sizes shrunk."""
    return {"model_type": "deberta-v2", "architectures": ["DebertaV2ForMaskedLM"], "attention_probs_dropout_prob": 0.1,
            "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": D, "initializer_range": 0.02,
            "intermediate_size": INTER, "max_position_embeddings": MAXPOS, "relative_attention": True,
            "position_buckets": BUCKETS, "norm_rel_ebd": "layer_norm", "share_att_key": True,
            "pos_att_type": "p2c|c2p", "layer_norm_eps": EPS, "max_relative_positions": -1,
            "position_biased_input": False, "num_attention_heads": H, "num_hidden_layers": NL,
            "type_vocab_size": 0, "vocab_size": VOCAB}


def mask_and_normalize(P, m):
    M = m[:, None, :, None] * m[:, None, None, :]
    return F.normalize(P * M, p=1.0, dim=-1, eps=1e-12)


def hooked(raw, policies, consts, m):
    out = raw.clone()
    static = any(mode in (CONSTANT, ZERO) for mode, _ in policies)
    for h, (mode, lam) in enumerate(policies):
        c_hat = mask_and_normalize(consts[h].expand(B, 1, L, L), m)[:, 0]
        if mode == CONSTANT:
            out[:, h] = c_hat
        elif mode == ZERO:
            out[:, h] = 0.0
        elif mode == MIX:
            out[:, h] = lam * raw[:, h] + (1.0 - lam) * c_hat
    return mask_and_normalize(out, m) if static else out


def reference(p, ids, mask, policies=None, consts=None):
    dh = D // H
    m = mask.double()
    ln = lambda x, g, b: F.layer_norm(x, (D,), g, b, EPS)  # noqa: E731
    x = ln(p["word"][ids], p["emb_ln_g"], p["emb_ln_b"]) * m[:, :, None]
    rel = ln(p["rel"], p["rel_ln_g"], p["rel_ln_b"])
    r = rel_rows(L, BUCKETS, MAXPOS)  # [L, L]
    valid = (m[:, :, None] * m[:, None, :])[:, None] > 0  # [B,1,L,L]
    hidden, attns, values = [x], [], []
    for li, lw in enumerate(p["layers"]):
        heads = lambda t: t.view(B, L, H, dh).transpose(1, 2)  # noqa: E731
        q, k, v = (heads(x @ lw[n + "_w"].T + lw[n + "_b"]) for n in ("q", "k", "v"))
        qr = (rel @ lw["q_w"].T + lw["q_b"]).view(2 * BUCKETS, H, dh).transpose(0, 1)  # [H, 2S, dh]
        kr = (rel @ lw["k_w"].T + lw["k_b"]).view(2 * BUCKETS, H, dh).transpose(0, 1)
        c2c = q @ k.transpose(-1, -2)
        c2p = torch.einsum("bhid,hijd->bhij", q, kr[:, r])  # q_i . kr[r(i,j)]
        p2c = torch.einsum("bhjd,hijd->bhij", k, qr[:, r])  # k_j . qr[r(i,j)]
        s = (c2c + c2p + p2c) / math.sqrt(dh * 3)
        s = s.masked_fill(~valid, float("-inf"))
        probs = torch.softmax(s, dim=-1)
        probs = torch.nan_to_num(probs, nan=0.0)  # pad queries: every key masked, row 0
        if policies is not None:
            probs = hooked(probs, policies[li], consts[li], m)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, D)
        attns.append(probs)
        values.append(v)
        x = ln(x + ctx @ lw["o_w"].T + lw["o_b"], lw["ln1_g"], lw["ln1_b"])
        f = F.gelu(x @ lw["ff1_w"].T + lw["ff1_b"]) @ lw["ff2_w"].T + lw["ff2_b"]
        x = ln(x + f, lw["ln2_g"], lw["ln2_b"])
        hidden.append(x)
    t = ln(F.gelu(x @ p["mlm_w"].T + p["mlm_b"]), p["mlm_ln_g"], p["mlm_ln_b"])
    logits = t @ p["word"].T + p["mlm_bias"]
    return torch.stack(hidden), torch.stack(attns), torch.stack(values), logits


def main():
    gen = torch.Generator().manual_seed(2026)
    p = make_params(gen)
    ids = torch.zeros((B, L), dtype=torch.long)  # pad id 0
    mask = torch.zeros((B, L), dtype=torch.long)
    for b, n in enumerate(LENGTHS):
        ids[b, :n] = torch.randint(3, VOCAB, (n,), generator=gen)
        mask[b, :n] = 1
    for name, lm in (("deberta_v3", False), ("deberta_v3_lmhead", True)):
        out = os.path.join(HERE, name)
        os.makedirs(out, exist_ok=True)
        cfg = config()
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        mg.write_safetensors(os.path.join(out, "model.safetensors"), hf_names(p, lm), "F32", {"format": "pt"})
    out = os.path.join(HERE, "deberta_v3")
    hidden, attns, values, logits = reference(p, ids, mask)
    mg.save_golden(os.path.join(out, "golden.safetensors"), ids, None, mask, hidden, attns, values, logits)
    # per-head policies: layer 0 head 1 CONSTANT, head 2 MIX 0.3; layer 1 head 3 ZERO
    policies = [[(STANDARD, 0.0)] * H for _ in range(NL)]
    policies[0][1], policies[0][2], policies[1][3] = (CONSTANT, 0.0), (MIX, 0.3), (ZERO, 0.0)
    consts = torch.rand(NL, H, L, L, generator=gen).float().double()
    hidden, attns, values, logits = reference(p, ids, mask, policies, consts)
    modes = torch.tensor([[mode for mode, _ in lp] for lp in policies], dtype=torch.float64)
    lams = torch.tensor([[lam for _, lam in lp] for lp in policies], dtype=torch.float64)
    mg.save_golden(os.path.join(out, "hooks.safetensors"), ids, None, mask, hidden, attns, values, logits,
                   extra=[("modes", modes), ("lambdas", lams), ("constants", consts)])
    print("wrote", out, "max bucket row", int(rel_rows(L, BUCKETS, MAXPOS).max()))
    # the real v3 shape's buckets: float32 (Hugging Face) and float64 agree at every distance below 512
    rel_rows(512, 256, 512)


if __name__ == "__main__":
    main()
