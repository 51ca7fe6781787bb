#!/usr/bin/python3
"""Writes tests/golden/decoders/: small random causal language models of the four decoder families in Hugging
Face layout, and the float64 reference outputs the C decoders are compared against.

Regenerate (needs Debian's PyTorch 1.13 and numpy; CI does not run it; transformers is not used):

    /usr/bin/python3 tests/golden/make_decoder_goldens.py

The output is deterministic (seeded torch.Generator per variant, no clock, no dict-order dependence): running it
twice gives byte-identical files (check: `sha256sum tests/golden/decoders/*/*` before and after).

What each family computes is written down in docs/decoders.md; the reference below follows that page, not any
library's modelling code: embeddings by hand, LayerNorm and RMSNorm by hand, rotary embeddings from their formula,
attention per head with explicit matmuls and a masked softmax, the MLPs by hand. Everything runs in float64 on
weights already rounded to the dtype the checkpoint stores, so the goldens are the exact answer rounded once
(to float32, in golden.safetensors). Hugging Face keeps RMSNorm, RoPE's cos/sin and the softmax in float32 even
in a float64 model; this reference keeps nothing in float32 (docs/decoders.md, "Precision").

Variants (one folder each under tests/golden/decoders/):

  gpt2               GPT-2, no prefix ("h.0.attn.c_attn.weight"), tied head, F32 model.safetensors, plus the
                     causal-mask buffers older exports carry (h.N.attn.bias, h.N.attn.masked_bias): not weights
  gpt2_prefixed      GPT-2 with the "transformer." prefix, n_inner set, pytorch_model.bin (torch.save zip) whose
                     lm_head.weight shares its storage with transformer.wte.weight
  llama_gqa          Llama, 4 heads / 2 key-value heads, head_dim = hidden / heads written in config, tied, F32
  llama_untied       Llama, 4 heads / 2 key-value heads, head_dim 16 != hidden 32 / 4 heads, untied lm_head,
                     BF16 model.safetensors
  qwen2              Qwen2 (q/k/v biases), 4 / 2 heads, tied, sharded model.safetensors.index.json (2 shards);
                     sliding_window 4 is set but use_sliding_window is false, so no window applies
  qwen2_window       Qwen2 with use_sliding_window true, sliding_window 8, max_window_layers 1 (layer 0 full,
                     layer 1 windowed): for an engine that builds the window; one that does not refuses it by name
  pythia             GPT-NeoX, rotary_pct 0.25 (4 of 16 dims), parallel residual, untied embed_out, F16, with the
                     per-layer attention.rotary_emb.inv_freq buffers older exports carry (not weights)
  pythia_sequential  GPT-NeoX with use_parallel_residual false, rotary_pct 0.5, F32

Per variant: config.json, the weights, and golden.safetensors (all F32; ids as exactly representable floats):

  input_ids [B,L], attention_mask [B,L]    B = 3 sequences of 12, 9 and 5 real tokens, right-padded to L = 12
  position_ids [B,L]                       0..L-1 in every row (what HF's forward uses when given no position ids)
  hidden_states [NL+1,B,L,D]               embeddings, the output of layers 0..NL-2, then the FINAL NORM applied
                                           to the output of layer NL-1 (HF's output_hidden_states convention)
  attentions [NL,B,H,L,L]                  softmax probabilities per query head; exactly 0 above the diagonal, on
                                           pad keys and outside a sliding window
  values [NL,B,H,L,head_dim]               value vectors per query head (heads of one GQA group repeat their
                                           key/value head's values)
  logits [B,L,V]                           every position, pad positions included
  prompt_ids [1,P], generated_ids [1,8]    greedy generation of 8 tokens, each from a full-prefix forward of
  generated_margins [1,8]                  the unpadded prompt + tokens so far; margin = top-1 minus top-2 logit
                                           (every margin is >= 1e-3, so float32 engines must pick the same ids)

Self-checks (the script stops on failure): the same reference run in float32 agrees with float64 to ~1e-5
relative; every attention row sums to 1 over its allowed keys and is exactly 0 elsewhere; for one head of one
query token per variant, layer 0's probabilities are recomputed with Python scalars (math, loops over the stored
tensors by name) and must agree to 1e-12; the hand-written norms and activations equal PyTorch's, and GPT-2's
layer 0 recomputed with torch.nn.MultiheadAttention and F.layer_norm / F.gelu agrees to 1e-12; for the rotary
families, shifting every position by 7 leaves every attention probability unchanged to 1e-12; the written weight files are read back (safetensors by hand, shards
through the index, pytorch_model.bin with torch.load) and must equal the weights the reference used bit for bit.
"""
import hashlib
import io
import json
import math
import os
import shutil
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_goldens import write_safetensors  # noqa: E402  (the project's safetensors writer)

OUT = os.path.join(HERE, "decoders")
B, L = 3, 12
LENGTHS = (12, 9, 5)  # real tokens per row; right padding after them
PAD_ID = 0  # the id written at padded positions (any id works: those positions are masked as keys)
N_NEW = 8  # greedily generated tokens
PROMPT_LEN = 5
MIN_MARGIN = 1e-3
HF_VERSION = "4.57.5"  # the transformers version whose modelling files docs/decoders.md reads

VARIANTS = [
    dict(name="gpt2", family="gpt2", seed=101, vocab=160, hidden=32, heads=4, layers=2, positions=32,
         inner=None, prefix="", fmt="safetensors", dtype="F32", buffers=True),
    dict(name="gpt2_prefixed", family="gpt2", seed=102, vocab=128, hidden=32, heads=2, layers=3, positions=24,
         inner=96, prefix="transformer.", fmt="bin", dtype="F32", buffers=False),
    dict(name="llama_gqa", family="llama", seed=103, vocab=192, hidden=48, heads=4, kv_heads=2, head_dim=12,
         inter=96, layers=2, theta=10000.0, eps=1e-5, tied=True, fmt="safetensors", dtype="F32"),
    dict(name="llama_untied", family="llama", seed=104, vocab=160, hidden=32, heads=4, kv_heads=2, head_dim=16,
         inter=80, layers=2, theta=100000.0, eps=1e-5, tied=False, fmt="safetensors", dtype="BF16"),
    dict(name="qwen2", family="qwen2", seed=105, vocab=160, hidden=32, heads=4, kv_heads=2, head_dim=8,
         inter=64, layers=2, theta=1000000.0, eps=1e-6, tied=True, fmt="sharded", dtype="F32",
         use_window=False, window=4, window_layers=2),
    dict(name="qwen2_window", family="qwen2", seed=106, vocab=128, hidden=32, heads=4, kv_heads=2, head_dim=8,
         inter=64, layers=2, theta=10000.0, eps=1e-6, tied=True, fmt="safetensors", dtype="F32",
         use_window=True, window=8, window_layers=1),
    dict(name="pythia", family="gpt_neox", seed=107, vocab=160, hidden=48, heads=3, inter=96, layers=2,
         rotary_pct=0.25, base=10000, parallel=True, eps=1e-5, fmt="safetensors", dtype="F16", buffers=True),
    dict(name="pythia_sequential", family="gpt_neox", seed=108, vocab=128, hidden=32, heads=2, inter=64,
         layers=2, rotary_pct=0.5, base=10000, parallel=False, eps=1e-5, fmt="safetensors", dtype="F32",
         buffers=False),
]


# ---------------------------------------------------------------- dtypes

def rounded(t, dtype):
    """The float64 value of t after storing it as dtype (what a loader converting to float32 sees)."""
    if dtype == "F16":
        return t.to(torch.float16).to(torch.float64)
    if dtype == "BF16":
        return t.to(torch.float32).to(torch.bfloat16).to(torch.float64)
    return t.to(torch.float32).to(torch.float64)


TORCH_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


# ---------------------------------------------------------------- random weights, HF tensor names

def make_weights(v, gen):
    """Ordered list of (name without the model prefix, float64 tensor). Names and shapes as the Hub stores them
    (docs/decoders.md, "Tensor names"). Buffers that are not weights are added by write_model."""
    D, V, NL = v["hidden"], v["vocab"], v["layers"]

    def normal(*shape, std):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * std

    def gain(n):
        return 1.0 + normal(n, std=0.2)

    w = []
    fam = v["family"]
    if fam == "gpt2":
        inner = v["inner"] or 4 * D
        w += [("wte.weight", normal(V, D, std=0.5)), ("wpe.weight", normal(v["positions"], D, std=0.5))]
        for i in range(NL):
            p = "h.%d." % i
            w += [(p + "ln_1.weight", gain(D)), (p + "ln_1.bias", normal(D, std=0.1)),
                  (p + "attn.c_attn.weight", normal(D, 3 * D, std=0.3)),  # Conv1D: [in, out]
                  (p + "attn.c_attn.bias", normal(3 * D, std=0.1)),
                  (p + "attn.c_proj.weight", normal(D, D, std=0.25)), (p + "attn.c_proj.bias", normal(D, std=0.1)),
                  (p + "ln_2.weight", gain(D)), (p + "ln_2.bias", normal(D, std=0.1)),
                  (p + "mlp.c_fc.weight", normal(D, inner, std=0.25)), (p + "mlp.c_fc.bias", normal(inner, std=0.1)),
                  (p + "mlp.c_proj.weight", normal(inner, D, std=0.2)), (p + "mlp.c_proj.bias", normal(D, std=0.1))]
        w += [("ln_f.weight", gain(D)), ("ln_f.bias", normal(D, std=0.1))]
    elif fam in ("llama", "qwen2"):
        H, KV, dh, I = v["heads"], v["kv_heads"], v["head_dim"], v["inter"]
        w += [("model.embed_tokens.weight", normal(V, D, std=0.5))]
        for i in range(NL):
            p = "model.layers.%d." % i
            w += [(p + "input_layernorm.weight", gain(D)),
                  (p + "self_attn.q_proj.weight", normal(H * dh, D, std=0.3))]  # nn.Linear: [out, in]
            if fam == "qwen2":
                w += [(p + "self_attn.q_proj.bias", normal(H * dh, std=0.3))]
            w += [(p + "self_attn.k_proj.weight", normal(KV * dh, D, std=0.3))]
            if fam == "qwen2":
                w += [(p + "self_attn.k_proj.bias", normal(KV * dh, std=0.3))]
            w += [(p + "self_attn.v_proj.weight", normal(KV * dh, D, std=0.3))]
            if fam == "qwen2":
                w += [(p + "self_attn.v_proj.bias", normal(KV * dh, std=0.1))]
            w += [(p + "self_attn.o_proj.weight", normal(D, H * dh, std=0.25)),
                  (p + "post_attention_layernorm.weight", gain(D)),
                  (p + "mlp.gate_proj.weight", normal(I, D, std=0.25)),
                  (p + "mlp.up_proj.weight", normal(I, D, std=0.25)),
                  (p + "mlp.down_proj.weight", normal(D, I, std=0.2))]
        w += [("model.norm.weight", gain(D))]
        if not v["tied"]:
            w += [("lm_head.weight", normal(V, D, std=0.5))]
    elif fam == "gpt_neox":
        I = v["inter"]
        w += [("gpt_neox.embed_in.weight", normal(V, D, std=0.5))]
        for i in range(NL):
            p = "gpt_neox.layers.%d." % i
            w += [(p + "input_layernorm.weight", gain(D)), (p + "input_layernorm.bias", normal(D, std=0.1)),
                  (p + "post_attention_layernorm.weight", gain(D)),
                  (p + "post_attention_layernorm.bias", normal(D, std=0.1)),
                  (p + "attention.query_key_value.weight", normal(3 * D, D, std=0.3)),  # per-head [q|k|v] rows
                  (p + "attention.query_key_value.bias", normal(3 * D, std=0.1)),
                  (p + "attention.dense.weight", normal(D, D, std=0.25)), (p + "attention.dense.bias", normal(D, std=0.1)),
                  (p + "mlp.dense_h_to_4h.weight", normal(I, D, std=0.25)),
                  (p + "mlp.dense_h_to_4h.bias", normal(I, std=0.1)),
                  (p + "mlp.dense_4h_to_h.weight", normal(D, I, std=0.2)),
                  (p + "mlp.dense_4h_to_h.bias", normal(D, std=0.1))]
        w += [("gpt_neox.final_layer_norm.weight", gain(D)), ("gpt_neox.final_layer_norm.bias", normal(D, std=0.1)),
              ("embed_out.weight", normal(V, D, std=0.5))]
    else:
        raise ValueError(fam)
    return [(n, rounded(t, v["dtype"])) for n, t in w]


# ---------------------------------------------------------------- config.json as HF writes it per family

def config(v):
    fam, dt = v["family"], TORCH_DTYPE_NAME[v["dtype"]]
    if fam == "gpt2":
        c = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
             "bos_token_id": v["vocab"] - 1, "embd_pdrop": 0.1, "eos_token_id": v["vocab"] - 1,
             "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
             "n_ctx": v["positions"], "n_embd": v["hidden"], "n_head": v["heads"], "n_inner": v["inner"],
             "n_layer": v["layers"], "n_positions": v["positions"], "reorder_and_upcast_attn": False,
             "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
             "summary_activation": None, "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
             "summary_type": "cls_index", "summary_use_proj": True, "torch_dtype": dt,
             "transformers_version": HF_VERSION, "use_cache": True, "vocab_size": v["vocab"]}
    elif fam == "llama":
        c = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
             "bos_token_id": 1, "eos_token_id": 2, "head_dim": v["head_dim"], "hidden_act": "silu",
             "hidden_size": v["hidden"], "initializer_range": 0.02, "intermediate_size": v["inter"],
             "max_position_embeddings": 64, "mlp_bias": False, "model_type": "llama",
             "num_attention_heads": v["heads"], "num_hidden_layers": v["layers"],
             "num_key_value_heads": v["kv_heads"], "pretraining_tp": 1, "rms_norm_eps": v["eps"],
             "rope_scaling": None, "rope_theta": v["theta"], "tie_word_embeddings": v["tied"], "torch_dtype": dt,
             "transformers_version": HF_VERSION, "use_cache": True, "vocab_size": v["vocab"]}
    elif fam == "qwen2":
        assert v["head_dim"] * v["heads"] == v["hidden"]  # Qwen2 configs carry no head_dim
        c = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": v["vocab"] - 2,
             "eos_token_id": v["vocab"] - 2, "hidden_act": "silu", "hidden_size": v["hidden"],
             "initializer_range": 0.02, "intermediate_size": v["inter"], "max_position_embeddings": 64,
             "max_window_layers": v["window_layers"], "model_type": "qwen2", "num_attention_heads": v["heads"],
             "num_hidden_layers": v["layers"], "num_key_value_heads": v["kv_heads"], "rms_norm_eps": v["eps"],
             "rope_theta": v["theta"], "sliding_window": v["window"], "tie_word_embeddings": v["tied"],
             "torch_dtype": dt, "transformers_version": HF_VERSION, "use_cache": True, "use_mrope": False,
             "use_sliding_window": v["use_window"], "vocab_size": v["vocab"]}
    else:
        c = {"architectures": ["GPTNeoXForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 0,
             "classifier_dropout": 0.1, "eos_token_id": 0, "hidden_act": "gelu", "hidden_dropout": 0.0,
             "hidden_size": v["hidden"], "initializer_range": 0.02, "intermediate_size": v["inter"],
             "layer_norm_eps": v["eps"], "max_position_embeddings": 64, "model_type": "gpt_neox",
             "num_attention_heads": v["heads"], "num_hidden_layers": v["layers"], "rotary_emb_base": v["base"],
             "rotary_pct": v["rotary_pct"], "tie_word_embeddings": False, "torch_dtype": dt,
             "transformers_version": HF_VERSION, "use_cache": True, "use_parallel_residual": v["parallel"],
             "vocab_size": v["vocab"]}
    return c


# ---------------------------------------------------------------- the reference forward (float64)

def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased variance
    return (x - mu) / torch.sqrt(var + eps) * g + b


def rms_norm(x, g, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * g


def gelu_tanh(x):  # "gelu_new"
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):  # "gelu"
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def silu(x):
    return x / (1.0 + torch.exp(-x))


def rotate(x, pos, rot_dims, theta):
    """x [B,n,L,dh]; pos [B,L]. Rotate-half RoPE on the first rot_dims dims: pair (i, i + rot_dims/2), i <
    rot_dims/2, turned by the angle pos * theta^(-2i/rot_dims); dims from rot_dims on pass through."""
    half = rot_dims // 2
    i = torch.arange(half, dtype=x.dtype)
    inv_freq = 1.0 / (theta ** (2.0 * i / rot_dims))
    ang = pos.to(x.dtype)[:, None, :, None] * inv_freq  # [B,1,L,half]
    c, s = torch.cos(ang), torch.sin(ang)
    a, b, rest = x[..., :half], x[..., half:rot_dims], x[..., rot_dims:]
    return torch.cat([a * c - b * s, b * c + a * s, rest], dim=-1)


def allowed_keys(mask, window=None):
    """[B,1,L,L] bool: key j is visible to query i iff j <= i, j is a real token, and (with a window W) i - j < W."""
    n = mask.shape[1]
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    ok = (j <= i)[None] & mask.bool()[:, None, :]
    if window is not None:
        ok = ok & ((i - j) < window)[None]
    return ok[:, None]


def attend(q, k, v, ok, scale):
    """q [B,H,L,dh], k/v [B,KV,L,dh]; query head h reads key/value head h // (H / KV). Returns probs [B,H,L,L],
    per-head values [B,H,L,dh] and the context [B,L,H*dh]."""
    H, KV = q.shape[1], k.shape[1]
    group = H // KV
    kh = torch.stack([k[:, h // group] for h in range(H)], dim=1)
    vh = torch.stack([v[:, h // group] for h in range(H)], dim=1)
    scores = (q @ kh.transpose(-1, -2)) * scale
    scores = torch.where(ok, scores, torch.full_like(scores, -math.inf))
    top = scores.max(dim=-1, keepdim=True).values  # every row has a visible key (right padding)
    e = torch.where(ok, torch.exp(scores - top), torch.zeros_like(scores))
    probs = e / e.sum(dim=-1, keepdim=True)
    ctx = (probs @ vh).transpose(1, 2).reshape(q.shape[0], q.shape[2], -1)
    return probs, vh, ctx


def split_heads(x, n, dh):  # [B,L,n*dh] -> [B,n,L,dh]
    return x.reshape(x.shape[0], x.shape[1], n, dh).transpose(1, 2)


def head_scaled(ctx, xi, l):
    """Layer l's context [B,L,H*dh] with head h's columns scaled by the head mask xi[l][h] (None: unscaled)."""
    if xi is None:
        return ctx
    Bn, Ln, A = ctx.shape
    H = xi.shape[1]
    return (ctx.reshape(Bn, Ln, H, A // H) * xi[l][None, None, :, None]).reshape(Bn, Ln, A)


def forward(v, weights, ids, mask, pos, dtype=torch.float64, xi=None):
    """The reference. Returns hidden [NL+1,B,L,D], attentions [NL,B,H,L,L], values [NL,B,H,L,dh], logits. xi [NL, H]
    (make_decoder_heads.py): a head mask scaling each head's context before the output projection."""
    w = {n: t.to(dtype) for n, t in weights}
    fam, NL, D, H = v["family"], v["layers"], v["hidden"], v["heads"]
    hidden, attns, values = [], [], []
    if fam == "gpt2":
        dh = D // H
        x = w["wte.weight"][ids] + w["wpe.weight"][pos]
        ok = allowed_keys(mask)
        for l in range(NL):
            p = "h.%d." % l
            hidden.append(x)
            a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
            qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # Conv1D: x @ W[in,out] + b
            q, k, val = (split_heads(qkv[..., s * D:(s + 1) * D], H, dh) for s in range(3))
            probs, vh, ctx = attend(q, k, val, ok, 1.0 / math.sqrt(dh))
            ctx = head_scaled(ctx, xi, l)
            attns.append(probs)
            values.append(vh)
            x = x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
            f = gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
            x = x + f @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        hidden.append(x)
        logits = x @ w["wte.weight"].T  # tied
    elif fam in ("llama", "qwen2"):
        KV, dh, eps = v["kv_heads"], v["head_dim"], v["eps"]
        x = w["model.embed_tokens.weight"][ids]
        for l in range(NL):
            p = "model.layers.%d.self_attn." % l
            window = v["window"] if fam == "qwen2" and v["use_window"] and l >= v["window_layers"] else None
            ok = allowed_keys(mask, window)
            hidden.append(x)
            a = rms_norm(x, w["model.layers.%d.input_layernorm.weight" % l], eps)
            proj = {}
            for s in ("q", "k", "v"):
                y = a @ w[p + s + "_proj.weight"].T
                if fam == "qwen2":
                    y = y + w[p + s + "_proj.bias"]
                proj[s] = split_heads(y, H if s == "q" else KV, dh)
            q = rotate(proj["q"], pos, dh, v["theta"])
            k = rotate(proj["k"], pos, dh, v["theta"])
            probs, vh, ctx = attend(q, k, proj["v"], ok, 1.0 / math.sqrt(dh))
            ctx = head_scaled(ctx, xi, l)
            attns.append(probs)
            values.append(vh)
            x = x + ctx @ w[p + "o_proj.weight"].T
            p = "model.layers.%d." % l
            m = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
            f = silu(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
            x = x + f @ w[p + "mlp.down_proj.weight"].T
        x = rms_norm(x, w["model.norm.weight"], eps)
        hidden.append(x)
        head = w["model.embed_tokens.weight"] if v["tied"] else w["lm_head.weight"]
        logits = x @ head.T
    else:  # gpt_neox
        dh, eps = D // H, v["eps"]
        rot = int(dh * v["rotary_pct"])
        x = w["gpt_neox.embed_in.weight"][ids]
        ok = allowed_keys(mask)
        for l in range(NL):
            p = "gpt_neox.layers.%d." % l
            hidden.append(x)
            a = layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
            qkv = a @ w[p + "attention.query_key_value.weight"].T + w[p + "attention.query_key_value.bias"]
            per_head = split_heads(qkv, H, 3 * dh)  # [B,H,L,3*dh]: each head's q, k, v side by side
            q, k, val = per_head[..., :dh], per_head[..., dh:2 * dh], per_head[..., 2 * dh:]
            q, k = rotate(q, pos, rot, float(v["base"])), rotate(k, pos, rot, float(v["base"]))
            probs, vh, ctx = attend(q, k, val, ok, 1.0 / math.sqrt(dh))
            ctx = head_scaled(ctx, xi, l)
            attns.append(probs)
            values.append(vh)
            o = ctx @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]

            def mlp(h):
                t = layer_norm(h, w[p + "post_attention_layernorm.weight"], w[p + "post_attention_layernorm.bias"], eps)
                t = gelu_erf(t @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
                return t @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

            if v["parallel"]:
                x = x + o + mlp(x)  # both branches read the layer's input
            else:
                x = x + o
                x = x + mlp(x)
        x = layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], eps)
        hidden.append(x)
        logits = x @ w["embed_out.weight"].T
    return torch.stack(hidden), torch.stack(attns), torch.stack(values), logits


# ---------------------------------------------------------------- an independent scalar check of one head

def hand_probs(v, weights, ids, pos, b, h, i):
    """Layer 0, query head h, query token i of row b (all keys j <= i real): the probabilities over keys 0..i
    recomputed with Python floats and loops, reading tensors by their HF names."""
    w = {n: t.tolist() for n, t in weights}
    fam, D, H = v["family"], v["hidden"], v["heads"]

    def ln(x, g, bias, eps):
        mu = sum(x) / len(x)
        var = sum((t - mu) ** 2 for t in x) / len(x)
        return [(t - mu) / math.sqrt(var + eps) * g[c] + bias[c] for c, t in enumerate(x)]

    def rms(x, g, eps):
        r = math.sqrt(sum(t * t for t in x) / len(x) + eps)
        return [t / r * g[c] for c, t in enumerate(x)]

    def rope(vec, p, rot, theta):
        half = rot // 2
        out = list(vec)
        for c in range(half):
            ang = p * theta ** (-2.0 * c / rot)
            out[c] = vec[c] * math.cos(ang) - vec[c + half] * math.sin(ang)
            out[c + half] = vec[c + half] * math.cos(ang) + vec[c] * math.sin(ang)
        return out

    def qk(j):
        t, p = ids[b][j], pos[b][j]
        if fam == "gpt2":
            dh = D // H
            x = [w["wte.weight"][t][c] + w["wpe.weight"][p][c] for c in range(D)]
            a = ln(x, w["h.0.ln_1.weight"], w["h.0.ln_1.bias"], 1e-5)
            W, bias = w["h.0.attn.c_attn.weight"], w["h.0.attn.c_attn.bias"]
            col = lambda o: sum(a[r] * W[r][o] for r in range(D)) + bias[o]  # noqa: E731  [in, out]
            q = [col(h * dh + c) for c in range(dh)]
            k = [col(D + h * dh + c) for c in range(dh)]
            return q, k, dh
        if fam in ("llama", "qwen2"):
            dh, kvh = v["head_dim"], h // (H // v["kv_heads"])
            x = w["model.embed_tokens.weight"][t]
            a = rms(x, w["model.layers.0.input_layernorm.weight"], v["eps"])

            def row(name, o):
                s = sum(a[c] * w["model.layers.0.self_attn.%s.weight" % name][o][c] for c in range(D))
                return s + (w["model.layers.0.self_attn.%s.bias" % name][o] if fam == "qwen2" else 0.0)

            q = rope([row("q_proj", h * dh + c) for c in range(dh)], p, dh, v["theta"])
            k = rope([row("k_proj", kvh * dh + c) for c in range(dh)], p, dh, v["theta"])
            return q, k, dh
        dh = D // H
        rot = int(dh * v["rotary_pct"])
        pre = "gpt_neox.layers.0."
        a = ln(w["gpt_neox.embed_in.weight"][t], w[pre + "input_layernorm.weight"], w[pre + "input_layernorm.bias"],
               v["eps"])
        W, bias = w[pre + "attention.query_key_value.weight"], w[pre + "attention.query_key_value.bias"]
        row = lambda o: sum(a[c] * W[o][c] for c in range(D)) + bias[o]  # noqa: E731  [out, in]
        base = h * 3 * dh  # head h owns rows [3*dh*h, 3*dh*(h+1)): its q, then k, then v
        q = rope([row(base + c) for c in range(dh)], p, rot, float(v["base"]))
        k = rope([row(base + dh + c) for c in range(dh)], p, rot, float(v["base"]))
        return q, k, dh

    q, _, dh = qk(i)
    scores = []
    for j in range(i + 1):
        _, k, _ = qk(j)
        scores.append(sum(q[c] * k[c] for c in range(dh)) / math.sqrt(dh))
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    return [t / sum(e) for t in e]


# ---------------------------------------------------------------- writing the checkpoint

def buffers(v):
    """Non-weight tensors older Hub exports carry; a loader must skip them (docs/decoders.md)."""
    out = []
    if v["family"] == "gpt2" and v["buffers"]:
        P = v["positions"]
        for l in range(v["layers"]):
            out += [("h.%d.attn.bias" % l, torch.tril(torch.ones(P, P, dtype=torch.float64)).view(1, 1, P, P)),
                    ("h.%d.attn.masked_bias" % l, torch.tensor(-1e4, dtype=torch.float64))]
    if v["family"] == "gpt_neox" and v["buffers"]:
        rot = int(v["hidden"] // v["heads"] * v["rotary_pct"])
        inv = 1.0 / (float(v["base"]) ** (torch.arange(0, rot, 2, dtype=torch.float64) / rot))
        for l in range(v["layers"]):
            out.append(("gpt_neox.layers.%d.attention.rotary_emb.inv_freq" % l, inv))
    return out


def stored_name(v, name):
    return v.get("prefix", "") + name


def write_model(v, weights, d):
    tensors = [(stored_name(v, n), t) for n, t in weights + buffers(v)]
    if v["fmt"] == "safetensors":
        write_safetensors(os.path.join(d, "model.safetensors"), tensors, v["dtype"], {"format": "pt"})
    elif v["fmt"] == "sharded":
        # shard 1: embeddings and layer 0; shard 2: the rest (HF splits by size, in parameter order)
        cut = next(k for k, (n, _) in enumerate(tensors) if n.startswith("model.layers.1."))
        shards = [("model-00001-of-00002.safetensors", tensors[:cut]),
                  ("model-00002-of-00002.safetensors", tensors[cut:])]
        weight_map, total = {}, 0
        for fname, part in shards:
            write_safetensors(os.path.join(d, fname), part, v["dtype"], {"format": "pt"})
            for n, t in part:
                weight_map[n] = fname
                total += t.numel() * {"F32": 4, "F16": 2, "BF16": 2}[v["dtype"]]
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f,
                      indent=2)
            f.write("\n")
    elif v["fmt"] == "bin":
        assert v["dtype"] == "F32"
        sd = {}
        for n, t in tensors:
            sd[n] = t.to(torch.float32).contiguous()
        # tied head written as older save_pretrained did: a second name for the word embeddings' storage
        sd["lm_head.weight"] = sd[stored_name(v, "wte.weight")]
        buf = io.BytesIO()
        torch.save(sd, buf)  # zip format, archive folder "archive"
        with open(os.path.join(d, "pytorch_model.bin"), "wb") as f:
            f.write(buf.getvalue())
    else:
        raise ValueError(v["fmt"])


def read_safetensors_file(path):
    """Reads a safetensors file back, independently of the writer, as float64 tensors."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[lo:hi]), dtype=dtypes[info["dtype"]]) if hi > lo else torch.zeros(0)
        out[name] = t.reshape(info["shape"]).to(torch.float64)
    return out


def read_back(v, d):
    if v["fmt"] == "safetensors":
        return read_safetensors_file(os.path.join(d, "model.safetensors"))
    if v["fmt"] == "sharded":
        with open(os.path.join(d, "model.safetensors.index.json")) as f:
            index = json.load(f)
        out = {}
        for fname in sorted(set(index["weight_map"].values())):
            part = read_safetensors_file(os.path.join(d, fname))
            assert all(index["weight_map"][n] == fname for n in part)
            out.update(part)
        assert set(out) == set(index["weight_map"])
        return out
    sd = torch.load(os.path.join(d, "pytorch_model.bin"))
    wte = sd[stored_name(v, "wte.weight")]
    assert sd["lm_head.weight"].data_ptr() == wte.data_ptr()  # one storage, two names
    return {n: t.to(torch.float64) for n, t in sd.items() if n != "lm_head.weight"}


# ---------------------------------------------------------------- inputs, generation, checks

def make_inputs(v, gen):
    ids = torch.full((B, L), PAD_ID, dtype=torch.long)
    mask = torch.zeros((B, L), dtype=torch.long)
    for b, n in enumerate(LENGTHS):
        ids[b, :n] = torch.randint(1, v["vocab"], (n,), generator=gen)
        mask[b, :n] = 1
    pos = torch.arange(L).expand(B, L).clone()
    return ids, mask, pos


def greedy(v, weights, gen):
    """A prompt whose 8 greedy steps all have a top-1/top-2 margin >= MIN_MARGIN (redrawn until so)."""
    for _ in range(50):
        seq = torch.randint(1, v["vocab"], (PROMPT_LEN,), generator=gen).tolist()
        prompt, margins = list(seq), []
        for _ in range(N_NEW):
            n = len(seq)
            ids = torch.tensor([seq])
            logits = forward(v, weights, ids, torch.ones(1, n, dtype=torch.long), torch.arange(n)[None])[3]
            last = logits[0, -1]
            top2 = torch.topk(last, 2).values
            margins.append(float(top2[0] - top2[1]))
            seq.append(int(torch.argmax(last)))
        if min(margins) >= MIN_MARGIN:
            return prompt, seq[PROMPT_LEN:], margins
    raise RuntimeError("%s: no prompt with clear greedy margins" % v["name"])


def rel_err(a, b):
    return float((a - b).abs().max() / max(1.0, float(b.abs().max())))


def builtin_check(v, weights, mask, ref):
    """The hand-written pieces against PyTorch's own: norms and activations on random inputs, and GPT-2's layer 0
    through torch.nn.MultiheadAttention (c_attn's [in, out] columns become in_proj's [out, in] rows)."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    x, gain, bias = (torch.randn(5, 7, generator=g, dtype=torch.float64) * 3 for _ in range(3))
    gain, bias = gain[0], bias[0]
    assert (layer_norm(x, gain, bias, 1e-5) - F.layer_norm(x, (7,), gain, bias, 1e-5)).abs().max() < 1e-13
    assert (gelu_tanh(x) - F.gelu(x, approximate="tanh")).abs().max() < 1e-13
    assert (gelu_erf(x) - F.gelu(x)).abs().max() < 1e-13
    assert (silu(x) - F.silu(x)).abs().max() < 1e-13
    if v["family"] != "gpt2":
        return None
    w = dict(weights)
    hidden, attns = ref[0], ref[1]
    D, H = v["hidden"], v["heads"]
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(w["h.0.attn.c_attn.weight"].T)
        mha.in_proj_bias.copy_(w["h.0.attn.c_attn.bias"])
        mha.out_proj.weight.copy_(w["h.0.attn.c_proj.weight"].T)
        mha.out_proj.bias.copy_(w["h.0.attn.c_proj.bias"])
    mha.eval()
    x0 = hidden[0]
    a = F.layer_norm(x0, (D,), w["h.0.ln_1.weight"], w["h.0.ln_1.bias"], 1e-5)
    future = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        out, probs = mha(a, a, a, attn_mask=future, key_padding_mask=(mask == 0), need_weights=True,
                         average_attn_weights=False)
    x1 = x0 + out
    m = F.layer_norm(x1, (D,), w["h.0.ln_2.weight"], w["h.0.ln_2.bias"], 1e-5)
    f = F.linear(F.gelu(F.linear(m, w["h.0.mlp.c_fc.weight"].T, w["h.0.mlp.c_fc.bias"]), approximate="tanh"),
                 w["h.0.mlp.c_proj.weight"].T, w["h.0.mlp.c_proj.bias"])
    err = max(float((probs - attns[0]).abs().max()), float((x1 + f - hidden[1]).abs().max()))
    assert err < 1e-12, (v["name"], err)
    return err


def check(v, weights, ids, mask, pos, ref):
    hidden, attns, values, logits = ref
    assert all(torch.isfinite(t).all() for t in ref)
    # 1. the same reference in float32 (catches a step that silently loses precision)
    r32 = forward(v, weights, ids, mask, pos, dtype=torch.float32)
    errs = [rel_err(a.double(), b) for a, b in zip(r32, ref)]
    assert max(errs) < 2e-5, (v["name"], errs)
    # 2. attention rows: sum to 1 over visible keys, exactly 0 on every other key
    for l in range(v["layers"]):
        window = (v["window"] if v["family"] == "qwen2" and v["use_window"] and l >= v["window_layers"]
                  else None)
        ok = allowed_keys(mask, window).expand(B, v["heads"], L, L)
        p = attns[l]
        assert bool((p[~ok] == 0).all()), v["name"]
        assert float(((p * ok).sum(-1) - 1.0).abs().max()) < 1e-12, v["name"]
    # 3. one head of one token by hand (row 0, the last query, the last head)
    b, h, i = 0, v["heads"] - 1, LENGTHS[0] - 1
    want = hand_probs(v, weights, ids.tolist(), pos.tolist(), b, h, i)
    got = attns[0, b, h, i].tolist()
    hand = max(abs(x - y) for x, y in zip(want, got[:i + 1]))
    assert hand < 1e-12 and all(t == 0.0 for t in got[i + 1:]), (v["name"], hand)
    # 4. rotary scores depend only on i - j: shifting every position by 7 leaves the probabilities unchanged
    shift = None
    if v["family"] != "gpt2":
        shifted = forward(v, weights, ids, mask, pos + 7)[1]
        shift = float((shifted - attns).abs().max())
        assert shift < 1e-12, (v["name"], shift)
    builtin = builtin_check(v, weights, mask, ref)
    return errs, hand, builtin, shift


def run(v):
    gen = torch.Generator().manual_seed(v["seed"])
    weights = make_weights(v, gen)
    d = os.path.join(OUT, v["name"])
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config(v), f, indent=2, sort_keys=True)
        f.write("\n")
    write_model(v, weights, d)
    back = read_back(v, d)
    names = {stored_name(v, n) for n, _ in weights + buffers(v)}
    assert set(back) == names, (v["name"], set(back) ^ names)
    for n, t in weights:
        assert torch.equal(back[stored_name(v, n)], t), (v["name"], n)

    ids, mask, pos = make_inputs(v, gen)
    ref = forward(v, weights, ids, mask, pos)
    errs, hand, builtin, shift = check(v, weights, ids, mask, pos, ref)
    prompt, new, margins = greedy(v, weights, gen)
    hidden, attns, values, logits = ref
    write_safetensors(os.path.join(d, "golden.safetensors"),
                      [("input_ids", ids.double()), ("attention_mask", mask.double()),
                       ("position_ids", pos.double()), ("hidden_states", hidden), ("attentions", attns),
                       ("values", values), ("logits", logits),
                       ("prompt_ids", torch.tensor([prompt], dtype=torch.float64)),
                       ("generated_ids", torch.tensor([new], dtype=torch.float64)),
                       ("generated_margins", torch.tensor([margins], dtype=torch.float64))],
                      "F32", {"generator": "tests/golden/make_decoder_goldens.py", "variant": v["name"]})
    return ("%-18s %-8s %-4s f32-vs-f64 rel err: hidden %.1e attn %.1e values %.1e logits %.1e | hand %.1e | "
            "torch MHA %s | shift %s | max|h| %.1f max|logit| %.1f | min margin %.3f | gen %s"
            % (v["name"], v["family"], v["dtype"], errs[0], errs[1], errs[2], errs[3], hand,
               "-" if builtin is None else "%.1e" % builtin, "-" if shift is None else "%.1e" % shift,
               float(hidden.abs().max()), float(logits.abs().max()),
               min(margins), new))


def main():
    torch.set_num_threads(1)  # little CPU, and one summation order
    os.makedirs(OUT, exist_ok=True)
    for v in VARIANTS:
        print(run(v))
    total, digest = 0, hashlib.sha256()
    for root, _, files in sorted(os.walk(OUT)):
        for fname in sorted(files):
            path = os.path.join(root, fname)
            total += os.path.getsize(path)
            with open(path, "rb") as f:
                digest.update(os.path.relpath(path, OUT).encode() + b"\0" + f.read())
    print("tests/golden/decoders: %.0f KB, sha256 of all files %s" % (total / 1024, digest.hexdigest()[:16]))


if __name__ == "__main__":
    main()
