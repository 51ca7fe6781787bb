#!/usr/bin/python3
"""Writes tests/golden/decoders/{gpt2,llama_untied,pythia}/measures.safetensors: the float64 references of the
measures on causal decoders (docs/measures.md "Causal decoders", docs/effective.md "Causal heads",
docs/importance.md "Value zeroing") for GPT-2, a Llama with grouped-query attention and head_dim != D / H
(4 heads of 16 on D = 32, 2 key/value heads, BF16 weights) and a Pythia with the parallel residual (F16 weights).

Run by hand (needs PyTorch 1.13; CI does not run it): /usr/bin/python3 tests/golden/make_decoder_measures.py
Deterministic: two runs give identical bytes.

The layer inputs are each golden's own float64 reference pass (tests/golden/make_decoder_goldens.py) as its
golden.safetensors stores them, rounded once to float32: hidden_states (every layer's input), attentions and
values (per query head). The weights are read back from the checkpoint in float64. From those, in float64, with
the formulas of the docs and sharing nothing with the C code (which projects with a pivoted Cholesky QR of the
value Gram matrix; this uses an SVD):

  effective    [NL,B,H,L,L]  causal effective attention: row i's first i + 1 entries projected onto the span of
                             the values of tokens <= i (left singular vectors whose singular value exceeds
                             sigma_max * max(i + 1, head_dim) * eps32), zeros after i, pads 0
  norms        [NL,B,H,L,L]  alpha_h[i, j] * ||v_h(x_j) W_O^h||, W_O^h the head's head_dim columns of the output
                             projection [D, n_heads * head_dim]
  layer_norms  [NL,B,L,L]    ||sum_h alpha_h[i, j] v_h(x_j) W_O^h||
  rollout      [B,NL,L,L]    rollout of the raw attention (0.5 (A + I), rows renormalised, product over layers)
  vz_distances [B,NL,L,L]    value zeroing: the layer rerun from its input with token j's values zeroed in every
                             head and the same attention weights, the family's pre-norm tail (and the final norm
                             after the last layer); 1 - cos(y_i, y_i^(j)) over real tokens
Stored as float32."""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as dg  # noqa: E402  (the variants, the weight reader and the hand-written norms, MLPs)
from make_goldens import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)
EPS32 = 1.1920928955078125e-7
NAMES = ("gpt2", "llama_untied", "pythia")


def output_projection(v, w, l):
    """W_O as x @ W: [n_heads * head_dim, D], and its bias (or None)."""
    if v["family"] == "gpt2":
        p = v.get("prefix", "") + "h.%d.attn.c_proj." % l
        return w[p + "weight"], w[p + "bias"]  # Conv1D stores [in, out]
    if v["family"] == "llama":
        return w["model.layers.%d.self_attn.o_proj.weight" % l].T, None
    p = "gpt_neox.layers.%d.attention.dense." % l
    return w[p + "weight"].T, w[p + "bias"]


def tail(v, w, l, x, ctx):
    """The rest of layer l after the heads' contexts ctx [L, H*dh], from its input x [L, D] (docs/decoders.md)."""
    fam, NL = v["family"], v["layers"]
    W, b = output_projection(v, w, l)
    o = ctx @ W + (b if b is not None else 0.0)
    if fam == "gpt2":
        p = v.get("prefix", "") + "h.%d." % l
        x = x + o
        m = dg.layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        x = x + dg.gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
            + w[p + "mlp.c_proj.bias"]
        if l == NL - 1:
            x = dg.layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        return x
    if fam == "llama":
        p, eps = "model.layers.%d." % l, v["eps"]
        x = x + o
        m = dg.rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + (dg.silu(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)) \
            @ w[p + "mlp.down_proj.weight"].T
        if l == NL - 1:
            x = dg.rms_norm(x, w["model.norm.weight"], eps)
        return x
    p, eps = "gpt_neox.layers.%d." % l, v["eps"]

    def mlp(h):
        t = dg.layer_norm(h, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"], eps)
        t = dg.gelu_erf(t @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
        return t @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

    x = x + o + mlp(x) if v["parallel"] else (lambda y: y + mlp(y))(x + o)
    if l == NL - 1:
        x = dg.layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], eps)
    return x


def causal_effective(a, val, n):
    """One head's real block: a [L, L], val [L, dh]; rows i < n projected onto span(val[:i+1])."""
    out = torch.zeros_like(a)
    dh = val.shape[1]
    for i in range(n):
        U, S, _ = torch.linalg.svd(val[:i + 1], full_matrices=False)
        keep = S > S[0] * max(i + 1, dh) * EPS32 if S.numel() and S[0] > 0 else torch.zeros_like(S, dtype=torch.bool)
        Ur = U[:, keep]
        out[i, :i + 1] = (a[i, :i + 1] @ Ur) @ Ur.T
    return out


def rollout(maps, n):
    """maps: NL of [H, L, L]; the real block is the first n tokens (right padding)."""
    L = maps[0].shape[-1]
    out, R = [], None
    for A in maps:
        m = A.mean(dim=0)[:n, :n]
        m = 0.5 * m + 0.5 * torch.eye(n)
        m = m / m.sum(dim=1, keepdim=True)
        R = m if R is None else m @ R
        full = torch.zeros(L, L)
        full[:n, :n] = R
        out.append(full)
    return torch.stack(out)


def run(v):
    d = os.path.join(dg.OUT, v["name"])
    g = dg.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    w = dg.read_back(v, d)
    mask, hidden, attns, values = g["attention_mask"], g["hidden_states"], g["attentions"], g["values"]
    NL, B, H, L, _ = attns.shape
    dh = values.shape[-1]
    D = hidden.shape[-1]
    eff = torch.zeros_like(attns)
    norms = torch.zeros_like(attns)
    layer_norms = torch.zeros(NL, B, L, L)
    roll = torch.zeros(B, NL, L, L)
    vz = torch.zeros(B, NL, L, L)
    for b in range(B):
        n = int(mask[b].sum())
        assert bool((mask[b, :n] == 1).all()) and bool((mask[b, n:] == 0).all())  # right padding
        roll[b] = rollout([attns[l, b] for l in range(NL)], n)
        for l in range(NL):
            A, V = attns[l, b], values[l, b]  # [H, L, L], [H, L, dh]
            W, _ = output_projection(v, w, l)
            f = torch.stack([V[h] @ W[h * dh:(h + 1) * dh] for h in range(H)])  # [H, L, D]: f_h(x_j)
            fn = f.norm(dim=-1)
            for h in range(H):
                eff[l, b, h] = causal_effective(A[h], V[h], n)
                norms[l, b, h, :n, :n] = A[h, :n, :n] * fn[h, None, :n]
            layer_norms[l, b, :n, :n] = torch.einsum("hij,hjd->ijd", A[:, :n, :n], f[:, :n]).norm(dim=-1)
            x = hidden[l, b]
            ctx = torch.cat([A[h] @ V[h] for h in range(H)], dim=-1)
            base = tail(v, w, l, x, ctx)
            for j in range(n):
                Vz = V.clone()
                Vz[:, j] = 0.0
                y = tail(v, w, l, x, torch.cat([A[h] @ Vz[h] for h in range(H)], dim=-1))
                cos = (base[:n] * y[:n]).sum(-1) / (base[:n].norm(dim=-1) * y[:n].norm(dim=-1))
                vz[b, l, :n, j] = (1.0 - cos).clamp(min=0.0)
    # what the C test relies on, checked here too: A_eff V = A V row by row, the maps lower triangular
    av = torch.einsum("lbhij,lbhjd->lbhid", attns, values)
    ev = torch.einsum("lbhij,lbhjd->lbhid", eff, values)
    real = mask.bool()[None, :, None, :, None]  # real query rows (pad rows are 0 in effective)
    err_av = float(((av - ev) * real).abs().max())
    upper = torch.triu(torch.ones(L, L), diagonal=1).bool()
    assert err_av < 1e-12, err_av
    assert not eff[..., upper].any() and not norms[..., upper].any() and not layer_norms[..., upper].any()
    assert not roll[..., upper].any(), float(roll[..., upper].abs().max())
    assert float(vz[..., upper].abs().max()) < 1e-15, float(vz[..., upper].abs().max())
    vz[..., upper] = 0.0  # a row before j reads none of token j's values: float64 rounding of 1 - cos(y, y) aside, 0
    write_safetensors(os.path.join(d, "measures.safetensors"),
                      [("effective", eff), ("norms", norms), ("layer_norms", layer_norms), ("rollout", roll),
                       ("vz_distances", vz)],
                      "F32", {"generator": "tests/golden/make_decoder_measures.py", "variant": v["name"]})
    return "%-14s D %d H %d dh %d: A_eff V - A V %.1e, max norm %.2f, max vz %.3g" % (
        v["name"], D, H, dh, err_av, float(norms.max()), float(vz.max()))


def main():
    torch.set_num_threads(1)
    for v in dg.VARIANTS:
        if v["name"] in NAMES:
            print(run(v))


if __name__ == "__main__":
    main()
