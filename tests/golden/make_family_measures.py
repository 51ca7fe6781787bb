#!/usr/bin/python3
"""Writes tests/golden/FAMILY/measures.safetensors for the golden models of the families beside BERT (RoBERTa,
DistilBERT, ELECTRA, DeBERTa-v2, ModernBERT): the references of docs/measures.md and docs/importance.md (value zeroing).

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it): /usr/bin/python3 tests/golden/make_family_measures.py

The layer inputs are each golden model's own float64 reference pass (tests/golden/make_goldens.py,
make_deberta_golden.py, make_modernbert_golden.py), as its golden.safetensors stores them rounded once to float32: hidden_states (every
layer's input), attentions and values (bias included). From those, in float64 and sharing nothing with the C
code, with the model's own output projection, LayerNorms and feed-forward (its weights read in float64):
  norm_attentions, layer_norms, res_ln_norms, rollout_raw, rollout_effective, rollout_norm, constants,
  head_stats       as tests/golden/make_measures_golden.py computes them for BERT (the same functions)
  vz_distances     [B,NL,L,L]  value zeroing: per layer, token j's values zeroed in every head, the layer's tail
                               (post-LN: output projection, residual, LayerNorm, feed-forward, residual, LayerNorm;
                               ModernBERT: its pre-norm tail, modernbert_layers below) rerun
                               from its input with the same attention weights; 1 - cos(y_i, y_i^(j))
  vz_normalized    [B,NL,L,L]  each row of vz_distances over its sum
Stored as float32."""
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_goldens as mg  # noqa: E402  (activations)
import make_measures_golden as mm  # noqa: E402  (the measures' float64 references)
import make_model_golden as mmg  # noqa: E402  (safetensors reader for F32 / F16)
import make_modernbert_golden as mbg  # noqa: E402  (ModernBERT's norm and GELU)
from make_value_zeroing import layer_tail  # noqa: E402  (the layer's tail after attention)

torch.set_default_dtype(torch.float64)

BERT_LIKE = {"o": "attention.output.dense", "ln1": "attention.output.LayerNorm", "ff1": "intermediate.dense",
             "ff2": "output.dense", "ln2": "output.LayerNorm"}
DISTILBERT = {"o": "attention.out_lin", "ln1": "sa_layer_norm", "ff1": "ffn.lin1", "ff2": "ffn.lin2",
              "ln2": "output_layer_norm"}
FAMILIES = [("roberta", "roberta.encoder.layer.%d.", BERT_LIKE), ("distilbert", "distilbert.transformer.layer.%d.", DISTILBERT),
            ("electra", "electra.encoder.layer.%d.", BERT_LIKE), ("deberta_v3", "deberta.encoder.layer.%d.", BERT_LIKE),
            ("modernbert", None, None)]


def read_any(path):
    """make_model_golden's reader, with bfloat16 (the top half of a float32) added."""
    import numpy as np
    import struct
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        buf = raw[8 + n + a:8 + n + b]
        if e["dtype"] == "BF16":
            arr = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            arr = np.frombuffer(buf, dtype={"F32": "<f4", "F16": "<f2"}[e["dtype"]]).astype(np.float64)
        out[name] = torch.from_numpy(arr.reshape(e["shape"]).copy())
    return out


def layer_weights(w, prefix, names):
    g = lambda k, t: w[prefix + names[k] + "." + t]  # noqa: E731
    return {"o_w": g("o", "weight"), "o_b": g("o", "bias"), "ln1_g": g("ln1", "weight"), "ln1_b": g("ln1", "bias"),
            "ff1_w": g("ff1", "weight"), "ff1_b": g("ff1", "bias"), "ff2_w": g("ff2", "weight"), "ff2_b": g("ff2", "bias"),
            "ln2_g": g("ln2", "weight"), "ln2_b": g("ln2", "bias")}


def value_zeroing(tail, x, a, v, m):
    """One layer of one example: x [L,D] input, a [H,L,L], v [H,L,dh], tail(x, ctx) the layer after its attention;
    distances [L,L]."""
    L, D = x.shape
    real = [i for i in range(L) if m[i]]
    out = lambda vv: tail(x, (a @ vv).transpose(0, 1).reshape(L, D))  # noqa: E731
    y = out(v)
    dist = torch.zeros(L, L)
    for j in real:
        vz = v.clone()
        vz[:, j, :] = 0.0
        yj = out(vz)
        for i in real:
            dist[i, j] = 1.0 - F.cosine_similarity(y[i], yj[i], dim=0, eps=0.0)
    return dist


def bert_like(cfg, w, prefix, names, NL):
    """The post-LN families: per layer the norm measures' weights (output projection, first LayerNorm) and tail."""
    eps = cfg.get("layer_norm_eps", 1e-12)  # DistilBERT's is fixed at 1e-12
    act = mg.act_fn(cfg.get("hidden_act") or cfg.get("activation"))
    lws = [layer_weights(w, prefix % l, names) for l in range(NL)]
    return [(lw["o_w"], lw["o_b"], lw["ln1_g"], eps, lambda x, ctx, lw=lw: layer_tail(lw, x, ctx, act, eps)) for lw in lws]


def modernbert_layers(cfg, w, NL):
    """ModernBERT's pre-norm layers (docs/families.md): no output bias; the residual + LayerNorm variant of the norm
    measures does not apply (its res_ln_norms are written but not compared); the tail is x + ctx Wo, then the
    normed gated feed-forward and its residual, and after the last layer the final norm."""
    D = cfg["hidden_size"]
    out = []
    for l in range(NL):
        p = "model.layers.%d." % l

        def tail(x, ctx, p=p, last=l == NL - 1):
            h = x + ctx @ w[p + "attn.Wo.weight"].T
            ug = mbg.norm(h, w[p + "mlp_norm.weight"]) @ w[p + "mlp.Wi.weight"].T
            I = ug.shape[-1] // 2
            h = h + (mbg.gelu(ug[..., :I]) * ug[..., I:]) @ w[p + "mlp.Wo.weight"].T
            return mbg.norm(h, w["model.final_norm.weight"]) if last else h
        out.append((w[p + "attn.Wo.weight"], torch.zeros(D), torch.ones(D), mbg.EPS, tail))
    return out


def family(name, prefix, names):
    d = os.path.join(HERE, name)
    cfg = json.load(open(os.path.join(d, "config.json")))
    w = read_any(os.path.join(d, "model.safetensors"))
    g = mmg.read_safetensors(os.path.join(d, "golden.safetensors"))
    mask = g["attention_mask"]
    hidden, attn, values = g["hidden_states"], g["attentions"], g["values"]  # [NL+1,B,L,D], [NL,B,H,L,L], [NL,B,H,L,dh]
    NL, B, H, L = attn.shape[:4]
    layers = modernbert_layers(cfg, w, NL) if name == "modernbert" else bert_like(cfg, w, prefix, names, NL)
    heads, lay, rln = torch.zeros(NL, B, H, L, L), torch.zeros(NL, B, L, L), torch.zeros(NL, B, L, L)
    vz = torch.zeros(B, NL, L, L)
    for l in range(NL):
        for b in range(B):
            x, a, v = hidden[l, b], attn[l, b], values[l, b]
            o_w, o_b, ln1_g, eps, tail = layers[l]
            heads[l, b], lay[l, b], rln[l, b] = mm.norm_measures(o_w, o_b, ln1_g, H, eps, x, a, v, mask[b])
            vz[b, l] = value_zeroing(tail, x, a, v, mask[b])
    rr, re, rn = [], [], []
    for b in range(B):
        m = mask[b]
        rr.append(mm.rollout([attn[l, b] for l in range(NL)], m, False))
        re.append(mm.rollout([mm.effective(attn[l, b], values[l, b], m) for l in range(NL)], m, False))
        rn.append(mm.rollout([heads[l, b] for l in range(NL)], m, True))
    mmask = mask[:, :, None] * mask[:, None, :]
    C = (attn * mmask[None, :, None]).sum(dim=1) / mmask.sum(dim=0).clamp(min=1)[None, None]
    C = C * (mmask.sum(dim=0) > 0)[None, None]
    C32 = C.to(torch.float32).to(torch.float64)  # what the C side holds
    stats = torch.stack([mm.head_stats(attn[:, b], mask[b], C32) for b in range(B)])
    s = vz.sum(-1, keepdim=True)
    vzn = torch.where(s > 0, vz / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(vz))
    path = os.path.join(d, "measures.safetensors")
    mm.write_safetensors(path, [
        ("norm_attentions", heads, "F32"), ("layer_norms", lay, "F32"), ("res_ln_norms", rln, "F32"),
        ("rollout_raw", torch.stack(rr, dim=1), "F32"), ("rollout_effective", torch.stack(re, dim=1), "F32"),
        ("rollout_norm", torch.stack(rn, dim=1), "F32"), ("constants", C, "F32"), ("head_stats", stats, "F32"),
        ("vz_distances", vz, "F32"), ("vz_normalized", vzn, "F32")])
    print("wrote %s (%d layers, %d x %d tokens; largest distance %.3g)" % (path, NL, B, L, vz.max().item()))


def main():
    for name, prefix, names in FAMILIES:
        family(name, prefix, names)


if __name__ == "__main__":
    main()
