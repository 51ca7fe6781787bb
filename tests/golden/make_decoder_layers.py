#!/usr/bin/python3
"""Writes tests/golden/decoders/<variant>/layers.safetensors: the float64 references of the attention blocks' similarity,
the corpus loss with blocks dropped or a layer made constant, and StreamingLLM's window-and-sinks loss
(docs/decoders.md, "Dropped attention blocks" and "Window and sinks"), from the definitions on that page.

Run by hand (needs PyTorch 1.13; CI does not run it), after make_decoder_goldens.py:
    /usr/bin/python3 tests/golden/make_decoder_layers.py
Deterministic: two runs give identical bytes.

The corpus: the golden's three input rows (12, 9 and 5 real tokens), each a window and a document of its own, each
run alone (positions 0 .. n-1, no padding). A window's loss at position i is -log softmax(logits_i)[ids_{i+1}],
i = 0 .. n-2.

  similarity [NL]          mean over the corpus's tokens of cos(X_l[t], Y_l[t]): X_l the residual stream entering
                           layer l, Y_l = X_l + the attention block's output (its output projection's bias included)
  order [NL]               the layers by decreasing similarity (ties: lower layer first)
  drop_pos [NL+1, 12]      the loss at each position summed over the windows, with the first k blocks of the order
  drop_doc [NL+1, 3]       dropped (k = 0 .. NL), and per document; a dropped block passes its input through: the
                           sequential rule keeps x + mlp(norm2(x)), GPT-NeoX's parallel rule x + mlp(norm2(x))
  alone_pos [NL, 12], alone_doc [NL, 3]    block l alone dropped
  const_pos [NL, 12], const_doc [NL, 3]    every head of layer l constant with all ones: row i uniform over keys
                                           j <= i (the family's window does not apply to a constant head)
  stream_cfg [S, 2]        (W, k) pairs
  stream_pos [S, 12], stream_doc [S, 3]    query i reads key j when j <= i, the family's rules allow it, and
                                           (i - j < W or j < k); tokens keep their positions
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
NAMES = ["gpt2", "llama_gqa", "llama_untied", "qwen2", "qwen2_window", "pythia", "pythia_sequential"]
STREAM = [(4, 0), (4, 2), (3, 1), (1, 1)]


def keys(n, family_window, stream, const):
    """[1,1,n,n] bool: the keys each query reads."""
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    ok = j <= i
    if const:
        return ok[None, None]  # a constant head: every earlier key, then normalised (docs/head_policies.md)
    if family_window is not None:
        ok = ok & ((i - j) < family_window)
    if stream is not None:
        W, k = stream
        ok = ok & (((i - j) < W) | (j < k))
    return ok[None, None]


def attend(q, k, v, ok, scale, const):
    if not const:
        return dg.attend(q, k, v, ok, scale)[2]
    H, KV = q.shape[1], k.shape[1]
    vh = torch.stack([v[:, h // (H // KV)] for h in range(H)], dim=1)
    probs = ok.to(q.dtype).expand(q.shape[0], H, q.shape[2], q.shape[2])
    probs = probs / probs.sum(-1, keepdim=True)
    return (probs @ vh).transpose(1, 2).reshape(q.shape[0], q.shape[2], -1)


def forward(v, w, ids, dropped=(), const_layer=None, stream=None):
    """One window of ids [n]: the states entering each layer, each block's x + attention, the logits."""
    fam, NL, D, H = v["family"], v["layers"], v["hidden"], v["heads"]
    n = ids.shape[0]
    ids = ids[None]
    pos = torch.arange(n)[None]
    xs, ys = [], []
    if fam == "gpt2":
        x = w["wte.weight"][ids] + w["wpe.weight"][pos]
    elif fam in ("llama", "qwen2"):
        x = w["model.embed_tokens.weight"][ids]
    else:
        x = w["gpt_neox.embed_in.weight"][ids]
    for l in range(NL):
        const = l == const_layer
        xs.append(x)
        if fam == "gpt2":
            p, dh = "h.%d." % l, D // H
            norm2 = lambda t: dg.layer_norm(t, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)  # noqa: E731
            mlp = lambda t: dg.gelu_tanh(norm2(t) @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) \
                @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]  # noqa: E731

            def block(t):
                a = dg.layer_norm(t, w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
                qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
                q, k, val = (dg.split_heads(qkv[..., s * D:(s + 1) * D], H, dh) for s in range(3))
                ctx = attend(q, k, val, keys(n, None, stream, const), 1.0 / math.sqrt(dh), const)
                return ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            parallel = False
        elif fam in ("llama", "qwen2"):
            KV, dh, eps = v["kv_heads"], v["head_dim"], v["eps"]
            p = "model.layers.%d." % l
            window = v["window"] if fam == "qwen2" and v["use_window"] and l >= v["window_layers"] else None
            mlp = lambda t: (dg.silu(dg.rms_norm(t, w[p + "post_attention_layernorm.weight"], eps)  # noqa: E731
                                     @ w[p + "mlp.gate_proj.weight"].T)
                             * (dg.rms_norm(t, w[p + "post_attention_layernorm.weight"], eps)
                                @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T

            def block(t):
                a = dg.rms_norm(t, w[p + "input_layernorm.weight"], eps)
                proj = {}
                for s in ("q", "k", "v"):
                    y = a @ w[p + "self_attn." + s + "_proj.weight"].T
                    if fam == "qwen2":
                        y = y + w[p + "self_attn." + s + "_proj.bias"]
                    proj[s] = dg.split_heads(y, H if s == "q" else KV, dh)
                q = dg.rotate(proj["q"], pos, dh, v["theta"])
                k = dg.rotate(proj["k"], pos, dh, v["theta"])
                ctx = attend(q, k, proj["v"], keys(n, window, stream, const), 1.0 / math.sqrt(dh), const)
                return ctx @ w[p + "self_attn.o_proj.weight"].T
            parallel = False
        else:
            dh, eps = D // H, v["eps"]
            rot = int(dh * v["rotary_pct"])
            p = "gpt_neox.layers.%d." % l

            def mlp(t):
                u = dg.layer_norm(t, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"],
                                  eps)
                u = dg.gelu_erf(u @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
                return u @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

            def block(t):
                a = dg.layer_norm(t, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
                qkv = a @ w[p + "attention.query_key_value.weight"].T + w[p + "attention.query_key_value.bias"]
                per_head = dg.split_heads(qkv, H, 3 * dh)
                q, k, val = per_head[..., :dh], per_head[..., dh:2 * dh], per_head[..., 2 * dh:]
                q, k = dg.rotate(q, pos, rot, float(v["base"])), dg.rotate(k, pos, rot, float(v["base"]))
                ctx = attend(q, k, val, keys(n, None, stream, const), 1.0 / math.sqrt(dh), const)
                return ctx @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]
            parallel = v["parallel"]
        a = 0.0 if l in dropped else block(x)  # a dropped block adds nothing, its bias included
        ys.append(x + a)
        x = x + a + mlp(x) if parallel else (x + a) + mlp(x + a)
    if fam == "gpt2":
        x = dg.layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        head = w["wte.weight"]
    elif fam in ("llama", "qwen2"):
        x = dg.rms_norm(x, w["model.norm.weight"], v["eps"])
        head = w["model.embed_tokens.weight"] if v["tied"] else w["lm_head.weight"]
    else:
        x = dg.layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], v["eps"])
        head = w["embed_out.weight"]
    return xs, ys, (x @ head.T)[0]


def losses(v, w, windows, L, **opt):
    """The loss summed by position [L] and by document (window) [len(windows)]."""
    pos, doc = torch.zeros(L), torch.zeros(len(windows))
    for d, ids in enumerate(windows):
        logp = torch.log_softmax(forward(v, w, ids, **opt)[2], dim=-1)
        for i in range(ids.shape[0] - 1):
            nll = -float(logp[i, ids[i + 1]])
            pos[i] += nll
            doc[d] += nll
    return pos, doc


def run(v):
    d = os.path.join(dg.OUT, v["name"])
    g = dg.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    w = dg.read_back(v, d)
    ids, mask = g["input_ids"].long(), g["attention_mask"].long()
    L, NL = ids.shape[1], v["layers"]
    windows = [ids[b, :int(mask[b].sum())] for b in range(ids.shape[0])]
    # the plain forward is the golden's (its logits within float32 rounding)
    for b, win in enumerate(windows):
        err = float((forward(v, w, win)[2] - g["logits"][b, :win.shape[0]]).abs().max())
        assert err < 1e-5, (v["name"], err)
    cos_sum, count = torch.zeros(NL), 0
    for win in windows:
        xs, ys, _ = forward(v, w, win)
        for l in range(NL):
            cos_sum[l] += torch.nn.functional.cosine_similarity(xs[l][0], ys[l][0], dim=-1, eps=0.0).sum()
        count += win.shape[0]
    sim = cos_sum / count
    order = sorted(range(NL), key=lambda l: (-float(sim[l]), l))
    gaps = [float(sim[order[i]] - sim[order[i + 1]]) for i in range(NL - 1)]
    assert min(gaps) > 1e-4, (v["name"], gaps)  # a float32 engine finds the same order
    out = [("similarity", sim), ("order", torch.tensor(order, dtype=torch.float64))]
    runs = {"drop": [losses(v, w, windows, L, dropped=order[:k]) for k in range(NL + 1)],
            "alone": [losses(v, w, windows, L, dropped=(l,)) for l in range(NL)],
            "const": [losses(v, w, windows, L, const_layer=l) for l in range(NL)],
            "stream": [losses(v, w, windows, L, stream=s) for s in STREAM]}
    for name, rs in runs.items():
        out += [(name + "_pos", torch.stack([r[0] for r in rs])), (name + "_doc", torch.stack([r[1] for r in rs]))]
    out.append(("stream_cfg", torch.tensor(STREAM, dtype=torch.float64)))
    # checks of the definitions: a window and sinks that cover the text give the full loss; dropping every block
    # changes it
    full = runs["drop"][0][1].sum()
    wide = losses(v, w, windows, L, stream=(L, 0))[1].sum()
    assert abs(float(full - wide)) < 1e-12, (v["name"], float(full), float(wide))
    write_safetensors(os.path.join(d, "layers.safetensors"), out, "F64",
                      {"generator": "tests/golden/make_decoder_layers.py", "variant": v["name"]})
    tokens = sum(win.shape[0] - 1 for win in windows)
    return "%-18s similarity %s order %s | nats/token: full %.4f, all dropped %.4f, W4 %.4f, W4+2 sinks %.4f" % (
        v["name"], ["%.4f" % float(s) for s in sim], order, float(full) / tokens,
        float(runs["drop"][NL][1].sum()) / tokens, float(runs["stream"][0][1].sum()) / tokens,
        float(runs["stream"][1][1].sum()) / tokens)


def main():
    torch.set_num_threads(1)
    by_name = {v["name"]: v for v in dg.VARIANTS}
    for name in NAMES:
        print(run(by_name[name]))


if __name__ == "__main__":
    main()
