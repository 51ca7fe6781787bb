#!/usr/bin/python3
"""Writes tests/golden/decoders/<variant>/stream.safetensors: the float64 reference of StreamingLLM's rolling
key/value cache with positions in the cache (docs/decoders.md, "Positions in the cache"), from the definitions on
that page, written token by token here (not from any library's cache code).

Run by hand (needs PyTorch 1.13; CI does not run it), after make_decoder_goldens.py:
    /usr/bin/python3 tests/golden/make_decoder_stream.py
Deterministic: two runs give identical bytes.

The text: N = 3 x the model's positions token ids drawn uniformly from the vocabulary (torch generator, seed 7 + the
variant's seed). It is read one token at a time. The cache keeps the first k tokens read (the sinks) and the W most
recent (the token being read included); when a token arrives at a full cache, the oldest token past the sinks
leaves. Slots are numbered 0 .. k + W - 1 in that order (sinks, then the recent tokens oldest first). Every layer
keeps each cached token's key and value as projected, before any turn; at each step a rotary family turns the
cached keys by their slot and the new query by its slot; GPT-2 adds the learned position of the slot a token enters
to its embedding, once. A key is read when the family's own window allows it (Qwen2's sliding window, by slot).

  ids [N]                    the text
  cfg [C, 2]                 (k, W) of each run
  nll [C, N - 1]             -log softmax(logits after reading token i)[ids[i + 1]], nats
"""
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as dg  # noqa: E402  (the variants, the weight reader and the hand-written norms)
from make_goldens import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)
NAMES = ["gpt2", "llama_gqa", "qwen2_window", "pythia"]
RUNS = [(0, 8), (2, 8), (4, 13)]


def parts(v, w, l):
    """Layer l of the variant: (attention input norm, projections -> unturned q [H,dh], k, v [KV,dh], turn(x, pos),
    output projection, mlp(x), parallel)."""
    fam, D, H = v["family"], v["hidden"], v["heads"]
    if fam == "gpt2":
        p, dh = "h.%d." % l, D // H
        norm = lambda t: dg.layer_norm(t, w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)  # noqa: E731

        def proj(a):
            qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
            return [qkv[s * D:(s + 1) * D].reshape(H, dh) for s in range(3)]
        turn = None
        out = lambda c: c @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]  # noqa: E731

        def mlp(t):
            m = dg.layer_norm(t, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
            return dg.gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
                + w[p + "mlp.c_proj.bias"]
        return norm, proj, turn, out, mlp, False, None
    if fam in ("llama", "qwen2"):
        KV, dh, eps = v["kv_heads"], v["head_dim"], v["eps"]
        p = "model.layers.%d." % l
        window = v["window"] if fam == "qwen2" and v["use_window"] and l >= v["window_layers"] else None
        norm = lambda t: dg.rms_norm(t, w[p + "input_layernorm.weight"], eps)  # noqa: E731

        def proj(a):
            r = []
            for s, n in (("q", H), ("k", KV), ("v", KV)):
                y = a @ w[p + "self_attn." + s + "_proj.weight"].T
                if fam == "qwen2":
                    y = y + w[p + "self_attn." + s + "_proj.bias"]
                r.append(y.reshape(n, dh))
            return r
        turn = lambda x, pos: dg.rotate(x[None, :, None, :], torch.tensor([[pos]]), dh, v["theta"])[0, :, 0]  # noqa
        out = lambda c: c @ w[p + "self_attn.o_proj.weight"].T  # noqa: E731

        def mlp(t):
            m = dg.rms_norm(t, w[p + "post_attention_layernorm.weight"], eps)
            return (dg.silu(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)) \
                @ w[p + "mlp.down_proj.weight"].T
        return norm, proj, turn, out, mlp, False, window
    dh, eps = D // H, v["eps"]
    rot = int(dh * v["rotary_pct"])
    p = "gpt_neox.layers.%d." % l
    norm = lambda t: dg.layer_norm(t, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)  # noqa

    def proj(a):
        per_head = (a @ w[p + "attention.query_key_value.weight"].T
                    + w[p + "attention.query_key_value.bias"]).reshape(H, 3 * dh)
        return [per_head[:, :dh], per_head[:, dh:2 * dh], per_head[:, 2 * dh:]]
    turn = lambda x, pos: dg.rotate(x[None, :, None, :], torch.tensor([[pos]]), rot, float(v["base"]))[0, :, 0]  # noqa
    out = lambda c: c @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]  # noqa: E731

    def mlp(t):
        u = dg.layer_norm(t, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"], eps)
        u = dg.gelu_erf(u @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
        return u @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]
    return norm, proj, turn, out, mlp, v["parallel"], None


def embed(v, w, tok, slot):
    if v["family"] == "gpt2":
        return w["wte.weight"][tok] + w["wpe.weight"][slot]
    if v["family"] in ("llama", "qwen2"):
        return w["model.embed_tokens.weight"][tok]
    return w["gpt_neox.embed_in.weight"][tok]


def head(v, w, x):
    if v["family"] == "gpt2":
        return dg.layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], 1e-5) @ w["wte.weight"].T
    if v["family"] in ("llama", "qwen2"):
        h = w["model.embed_tokens.weight"] if v["tied"] else w["lm_head.weight"]
        return dg.rms_norm(x, w["model.norm.weight"], v["eps"]) @ h.T
    x = dg.layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], v["eps"])
    return x @ w["embed_out.weight"].T


def stream(v, w, ids, sinks, recent):
    """The loss after each token but the last, reading ids through the rolling cache."""
    NL, H = v["layers"], v["heads"]
    layers = [parts(v, w, l) for l in range(NL)]
    cache = [[] for _ in range(NL)]  # per layer, per slot: (unturned key [KV,dh], value [KV,dh])
    nll = []
    for i in range(ids.shape[0] - 1):
        if len(cache[0]) == sinks + recent:
            for c in cache:
                del c[sinks]
        slot = len(cache[0])
        x = embed(v, w, ids[i], slot)
        for l, (norm, proj, turn, out, mlp, parallel, window) in enumerate(layers):
            q, k, val = proj(norm(x))
            cache[l].append((k, val))
            T = slot + 1
            if turn is not None:
                q = turn(q, slot)
                keys = torch.stack([turn(cache[l][t][0], t) for t in range(T)])  # [T, KV, dh]
            else:
                keys = torch.stack([cache[l][t][0] for t in range(T)])
            vals = torch.stack([cache[l][t][1] for t in range(T)])
            KV, dh = keys.shape[1], keys.shape[2]
            ok = torch.tensor([window is None or slot - t < window for t in range(T)])
            ctx = []
            for h in range(H):
                g = h // (H // KV)
                s = (keys[:, g] @ q[h]) / math.sqrt(dh)
                s = torch.where(ok, s, torch.full_like(s, -math.inf))
                pr = torch.softmax(s, dim=0)
                ctx.append(pr @ vals[:, g])
            a = out(torch.cat(ctx))
            x = x + a + mlp(x) if parallel else (x + a) + mlp(x + a)
        logp = torch.log_softmax(head(v, w, x), dim=-1)
        nll.append(-float(logp[ids[i + 1]]))
    return torch.tensor(nll)


def full(v, w, ids):
    """The plain forward's loss over the first positions: the cache's must equal it while nothing leaves."""
    n = ids.shape[0]
    logits = dg.forward(v, list(w.items()), ids[None], torch.ones(1, n, dtype=torch.long), torch.arange(n)[None])[3][0]
    logp = torch.log_softmax(logits, dim=-1)
    return torch.tensor([-float(logp[i, ids[i + 1]]) for i in range(n - 1)])


def run(v):
    d = os.path.join(dg.OUT, v["name"])
    w = dg.read_back(v, d)
    w = {n: t.to(torch.float64) for n, t in w.items()}
    P = v["positions"] if v["family"] == "gpt2" else 64
    gen = torch.Generator().manual_seed(7 + v["seed"])
    ids = torch.randint(0, v["vocab"], (3 * P,), generator=gen)
    nll = torch.stack([stream(v, w, ids, k, W) for k, W in RUNS])
    # the definition's check: a cache that holds the whole text is the plain forward
    wide = stream(v, w, ids[:P], 0, P)
    err = float((wide - full(v, w, ids[:P])).abs().max())
    assert err < 1e-10, (v["name"], err)
    write_safetensors(os.path.join(d, "stream.safetensors"),
                      [("ids", ids.to(torch.float64)), ("cfg", torch.tensor(RUNS, dtype=torch.float64)), ("nll", nll)],
                      "F64", {"generator": "tests/golden/make_decoder_stream.py", "variant": v["name"]})
    return "%-14s N %d | nats/token by (k, W): %s; past W: %s" % (
        v["name"], ids.shape[0], ["%.4f" % float(r.mean()) for r in nll],
        ["%.4f" % float(r[W:].mean()) for r, (k, W) in zip(nll, RUNS)])


def main():
    torch.set_num_threads(1)
    by_name = {x["name"]: x for x in dg.VARIANTS}
    for name in NAMES:
        print(run(by_name[name]))


if __name__ == "__main__":
    main()
