#!/usr/bin/python3
"""Writes the golden files the C tests compare the forward pass against.

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it): /usr/bin/python3 tests/golden/make_goldens.py

For each family (bert, bert_gelu_new, roberta, distilbert, electra) it builds a small random encoder, writes
it in Hugging Face layout (config.json as HF writes it for that family, model.safetensors with HF parameter
names), and computes the reference outputs with an implementation that shares nothing with the C code or with
HF's modelling code: embeddings by hand, then per layer torch.nn.MultiheadAttention (the same weights copied
into in_proj/out_proj) + residual + LayerNorm + FFN. Everything runs in float64 and is stored as float32, so
the goldens are the exact answer rounded once.

golden.safetensors per family holds the inputs (ids as exactly representable F32) and hidden_states
[NL+1,B,L,D], attentions [NL,B,H,L,L], values [NL,B,H,L,dh], mlm_logits [B,L,V] (when the model has a head).
bert/hooks.safetensors holds a per-head policy mix (CONSTANT, MIX, ZERO) computed by hand following METHODS.md
sections 2 and 3 (see hooked_probs below for the exact rule).

Weights are stored F32 for bert and electra, F16 for roberta and bert_gelu_new, BF16 for distilbert, so the
loader's conversions are exercised too; the reference uses the rounded values.
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)

VOCAB, HIDDEN, HEADS, INTER, MAXPOS = 100, 32, 4, 64, 40
B, L = 3, 12
LENGTHS = [12, 9, 5]  # real tokens per sequence; padding at the end

# Policy codes stored in hooks.safetensors (same values as al_head_mode).
STANDARD, CONSTANT, MIX, ZERO = 0, 1, 2, 3


# ---------------------------------------------------------------- safetensors by hand

def st_bytes(t, dtype):
    t = t.detach().contiguous()
    if dtype == "F32":
        return t.to(torch.float32).numpy().astype("<f4").tobytes()
    if dtype == "F64":
        return t.to(torch.float64).numpy().astype("<f8").tobytes()
    if dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    if dtype == "BF16":
        return t.to(torch.float32).to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype="F32", metadata=None):
    """tensors: list of (name, tensor). 8-byte LE header length, JSON header, raw LE data."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors:
        data = st_bytes(t, dtype)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)  # HF pads the header to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def rounded(t, dtype):
    """The value the C loader will see after converting the stored dtype to float32."""
    if dtype == "F16":
        return t.to(torch.float16).to(torch.float64)
    if dtype == "BF16":
        return t.to(torch.float32).to(torch.bfloat16).to(torch.float64)
    return t.to(torch.float32).to(torch.float64)


# ---------------------------------------------------------------- random model (family-neutral names)

def make_params(gen, n_layers, emb, hidden, types, mlm_dim):
    def normal(*shape, std=0.3):
        return torch.randn(*shape, generator=gen) * std

    def gain(n):
        return 1.0 + torch.randn(n, generator=gen) * 0.2

    p = {
        "word": normal(VOCAB, emb, std=0.5),
        "pos": normal(MAXPOS, emb, std=0.5),
        "type": normal(types, emb, std=0.5) if types else None,
        "emb_ln_g": gain(emb), "emb_ln_b": normal(emb, std=0.1),
        "proj_w": normal(hidden, emb) if emb != hidden else None,
        "proj_b": normal(hidden, std=0.1) if emb != hidden else None,
        "layers": [],
    }
    for _ in range(n_layers):
        lw = {}
        for n in ("q", "k", "v", "o"):
            lw[n + "_w"] = normal(hidden, hidden, std=0.3 if n in "qk" else 0.25)
            lw[n + "_b"] = normal(hidden, std=0.1)
        lw["ln1_g"], lw["ln1_b"] = gain(hidden), normal(hidden, std=0.1)
        lw["ff1_w"], lw["ff1_b"] = normal(INTER, hidden, std=0.25), normal(INTER, std=0.1)
        lw["ff2_w"], lw["ff2_b"] = normal(hidden, INTER, std=0.2), normal(hidden, std=0.1)
        lw["ln2_g"], lw["ln2_b"] = gain(hidden), normal(hidden, std=0.1)
        p["layers"].append(lw)
    if mlm_dim:
        p["mlm_w"], p["mlm_b"] = normal(mlm_dim, hidden, std=0.3), normal(mlm_dim, std=0.1)
        p["mlm_ln_g"], p["mlm_ln_b"] = gain(mlm_dim), normal(mlm_dim, std=0.1)
        p["mlm_bias"] = normal(VOCAB, std=0.1)
    return p


def round_params(p, dtype):
    out = {}
    for k, v in p.items():
        if k == "layers":
            out[k] = [{n: rounded(t, dtype) for n, t in lw.items()} for lw in v]
        else:
            out[k] = None if v is None else rounded(v, dtype)
    return out


# ---------------------------------------------------------------- HF names per family

def bert_names(p, prefix, mlm, pooler_gen=None):
    """BertForMaskedLM (prefix 'bert.') or BertModel (prefix '', with pooler)."""
    e = prefix + "embeddings."
    t = [(e + "word_embeddings.weight", p["word"]), (e + "position_embeddings.weight", p["pos"]),
         (e + "token_type_embeddings.weight", p["type"]), (e + "LayerNorm.weight", p["emb_ln_g"]),
         (e + "LayerNorm.bias", p["emb_ln_b"])]
    for i, lw in enumerate(p["layers"]):
        b = "%sencoder.layer.%d." % (prefix, i)
        for n, hf in (("q", "query"), ("k", "key"), ("v", "value")):
            t += [(b + "attention.self.%s.weight" % hf, lw[n + "_w"]), (b + "attention.self.%s.bias" % hf, lw[n + "_b"])]
        t += [(b + "attention.output.dense.weight", lw["o_w"]), (b + "attention.output.dense.bias", lw["o_b"]),
              (b + "attention.output.LayerNorm.weight", lw["ln1_g"]), (b + "attention.output.LayerNorm.bias", lw["ln1_b"]),
              (b + "intermediate.dense.weight", lw["ff1_w"]), (b + "intermediate.dense.bias", lw["ff1_b"]),
              (b + "output.dense.weight", lw["ff2_w"]), (b + "output.dense.bias", lw["ff2_b"]),
              (b + "output.LayerNorm.weight", lw["ln2_g"]), (b + "output.LayerNorm.bias", lw["ln2_b"])]
    if pooler_gen is not None:  # BertModel keeps a pooler; the encoder ignores it
        t += [(prefix + "pooler.dense.weight", torch.randn(HIDDEN, HIDDEN, generator=pooler_gen) * 0.02),
              (prefix + "pooler.dense.bias", torch.zeros(HIDDEN))]
    if mlm:  # decoder.weight is tied to the word embeddings and omitted, as HF saves it
        t += [("cls.predictions.bias", p["mlm_bias"]),
              ("cls.predictions.transform.dense.weight", p["mlm_w"]), ("cls.predictions.transform.dense.bias", p["mlm_b"]),
              ("cls.predictions.transform.LayerNorm.weight", p["mlm_ln_g"]),
              ("cls.predictions.transform.LayerNorm.bias", p["mlm_ln_b"])]
    return t


def roberta_names(p):
    t = bert_names(p, "roberta.", mlm=False)
    t += [("lm_head.bias", p["mlm_bias"]), ("lm_head.dense.weight", p["mlm_w"]), ("lm_head.dense.bias", p["mlm_b"]),
          ("lm_head.layer_norm.weight", p["mlm_ln_g"]), ("lm_head.layer_norm.bias", p["mlm_ln_b"])]
    return t


def distilbert_names(p):
    e = "distilbert.embeddings."
    t = [(e + "word_embeddings.weight", p["word"]), (e + "position_embeddings.weight", p["pos"]),
         (e + "LayerNorm.weight", p["emb_ln_g"]), (e + "LayerNorm.bias", p["emb_ln_b"])]
    for i, lw in enumerate(p["layers"]):
        b = "distilbert.transformer.layer.%d." % i
        for n in ("q", "k", "v"):
            t += [(b + "attention.%s_lin.weight" % n, lw[n + "_w"]), (b + "attention.%s_lin.bias" % n, lw[n + "_b"])]
        t += [(b + "attention.out_lin.weight", lw["o_w"]), (b + "attention.out_lin.bias", lw["o_b"]),
              (b + "sa_layer_norm.weight", lw["ln1_g"]), (b + "sa_layer_norm.bias", lw["ln1_b"]),
              (b + "ffn.lin1.weight", lw["ff1_w"]), (b + "ffn.lin1.bias", lw["ff1_b"]),
              (b + "ffn.lin2.weight", lw["ff2_w"]), (b + "ffn.lin2.bias", lw["ff2_b"]),
              (b + "output_layer_norm.weight", lw["ln2_g"]), (b + "output_layer_norm.bias", lw["ln2_b"])]
    t += [("vocab_transform.weight", p["mlm_w"]), ("vocab_transform.bias", p["mlm_b"]),
          ("vocab_layer_norm.weight", p["mlm_ln_g"]), ("vocab_layer_norm.bias", p["mlm_ln_b"]),
          ("vocab_projector.bias", p["mlm_bias"])]
    return t


def electra_names(p):
    """ElectraForMaskedLM (the generator): embeddings of width E, projection E -> D, head D -> E."""
    t = bert_names(p, "electra.", mlm=False)
    t.insert(5, ("electra.embeddings_project.weight", p["proj_w"]))
    t.insert(6, ("electra.embeddings_project.bias", p["proj_b"]))
    t += [("generator_predictions.dense.weight", p["mlm_w"]), ("generator_predictions.dense.bias", p["mlm_b"]),
          ("generator_predictions.LayerNorm.weight", p["mlm_ln_g"]),
          ("generator_predictions.LayerNorm.bias", p["mlm_ln_b"]),
          ("generator_lm_head.bias", p["mlm_bias"])]
    return t


# ---------------------------------------------------------------- config.json as HF writes it

def bert_config(n_layers, act, arch):
    return {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "classifier_dropout": None,
            "hidden_act": act, "hidden_dropout_prob": 0.1, "hidden_size": HIDDEN, "initializer_range": 0.02,
            "intermediate_size": INTER, "layer_norm_eps": 1e-12, "max_position_embeddings": MAXPOS,
            "model_type": "bert", "num_attention_heads": HEADS, "num_hidden_layers": n_layers, "pad_token_id": 0,
            "position_embedding_type": "absolute", "torch_dtype": "float32", "transformers_version": "4.30.2",
            "type_vocab_size": 2, "use_cache": True, "vocab_size": VOCAB}


def roberta_config(n_layers):
    c = bert_config(n_layers, "gelu", "RobertaForMaskedLM")
    c.update({"model_type": "roberta", "bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1,
              "layer_norm_eps": 1e-05, "type_vocab_size": 1, "torch_dtype": "float16"})
    return dict(sorted(c.items()))


def distilbert_config(n_layers):
    return {"activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1,
            "dim": HIDDEN, "dropout": 0.1, "hidden_dim": INTER, "initializer_range": 0.02,
            "max_position_embeddings": MAXPOS, "model_type": "distilbert", "n_heads": HEADS,
            "n_layers": n_layers, "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
            "sinusoidal_pos_embds": False, "tie_weights_": True, "torch_dtype": "bfloat16",
            "transformers_version": "4.30.2", "vocab_size": VOCAB}


def electra_config(n_layers, emb):
    c = bert_config(n_layers, "gelu", "ElectraForMaskedLM")
    c.update({"model_type": "electra", "embedding_size": emb, "summary_activation": "gelu",
              "summary_last_dropout": 0.1, "summary_type": "first", "summary_use_proj": True})
    return dict(sorted(c.items()))


# ---------------------------------------------------------------- the independent reference

def act_fn(name):
    if name == "gelu":
        return lambda x: F.gelu(x)
    if name == "gelu_new":
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "relu":
        return F.relu
    raise ValueError(name)


def mask_and_normalize(P, m):
    """METHODS.md 2.3: P * (m m^T), then L1 row normalisation with eps 1e-12 (torch F.normalize)."""
    M = m[:, None, :, None] * m[:, None, None, :]  # [B,1,L,L]
    return F.normalize(P * M, p=1.0, dim=-1, eps=1e-12)


def hooked_probs(raw, policies, consts, m):
    """raw: [B,H,L,L] softmax of one layer; policies: list of (mode, lambda) per head; consts: [H,L,L].

    CONSTANT: C_hat = mask_and_normalize(C). ZERO: 0. MIX: lam*raw + (1-lam)*C_hat (raw not renormalised).
    A layer with >= 1 CONSTANT or ZERO head then passes EVERY head's final matrix through mask_and_normalize
    (so pad-query rows become 0 for dynamic heads too; idempotent on C_hat and on 0)."""
    out = raw.clone()
    static_layer = any(mode in (CONSTANT, ZERO) for mode, _ in policies)
    for h, (mode, lam) in enumerate(policies):
        c_hat = mask_and_normalize(consts[h].expand(raw.shape[0], 1, L, L), m)[:, 0]
        if mode == CONSTANT:
            out[:, h] = c_hat
        elif mode == ZERO:
            out[:, h] = 0.0
        elif mode == MIX:
            out[:, h] = lam * raw[:, h] + (1.0 - lam) * c_hat
    if static_layer:
        out = mask_and_normalize(out, m)
    return out


def reference(p, fam, ids, types, mask, act, eps, mlm_act=None, policies=None, consts=None):
    """Returns hidden [NL+1,B,L,D], attentions [NL,B,H,L,L], values [NL,B,H,L,dh], logits or None."""
    n_layers, D, H = len(p["layers"]), HIDDEN, HEADS
    dh = D // H
    if fam == "roberta":  # HF create_position_ids_from_input_ids, padding_idx = 1
        nonpad = (ids != 1).long()
        pos_ids = torch.cumsum(nonpad, dim=1) * nonpad + 1
    else:
        pos_ids = torch.arange(L).expand(B, L)
    x = p["word"][ids] + p["pos"][pos_ids]
    if p["type"] is not None:
        x = x + p["type"][types]
    x = F.layer_norm(x, (x.shape[-1],), p["emb_ln_g"], p["emb_ln_b"], eps)
    if p["proj_w"] is not None:
        x = x @ p["proj_w"].T + p["proj_b"]
    hidden, attns, values = [x], [], []
    m = mask.to(torch.float64)
    for li, lw in enumerate(p["layers"]):
        mha = torch.nn.MultiheadAttention(D, H, batch_first=True)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([lw["q_w"], lw["k_w"], lw["v_w"]]))
            mha.in_proj_bias.copy_(torch.cat([lw["q_b"], lw["k_b"], lw["v_b"]]))
            mha.out_proj.weight.copy_(lw["o_w"])
            mha.out_proj.bias.copy_(lw["o_b"])
        mha.eval()
        with torch.no_grad():
            ctx_out, probs = mha(x, x, x, key_padding_mask=(mask == 0), need_weights=True,
                                 average_attn_weights=False)
        v = (x @ lw["v_w"].T + lw["v_b"]).view(B, L, H, dh).transpose(1, 2)  # [B,H,L,dh]
        if policies is not None:
            probs = hooked_probs(probs, policies[li], consts[li], m)
            ctx = (probs @ v).transpose(1, 2).reshape(B, L, D)
            ctx_out = ctx @ lw["o_w"].T + lw["o_b"]
        attns.append(probs)
        values.append(v)
        x = F.layer_norm(x + ctx_out, (D,), lw["ln1_g"], lw["ln1_b"], eps)
        f = act(x @ lw["ff1_w"].T + lw["ff1_b"]) @ lw["ff2_w"].T + lw["ff2_b"]
        x = F.layer_norm(x + f, (D,), lw["ln2_g"], lw["ln2_b"], eps)
        hidden.append(x)
    logits = None
    if "mlm_w" in p:
        t = (mlm_act or act)(x @ p["mlm_w"].T + p["mlm_b"])
        t = F.layer_norm(t, (t.shape[-1],), p["mlm_ln_g"], p["mlm_ln_b"], eps)
        logits = t @ p["word"].T + p["mlm_bias"]
    return torch.stack(hidden), torch.stack(attns), torch.stack(values), logits


# ---------------------------------------------------------------- inputs

def make_inputs(gen, pad_id, with_types):
    ids = torch.full((B, L), pad_id, dtype=torch.long)
    types = torch.zeros((B, L), dtype=torch.long)
    mask = torch.zeros((B, L), dtype=torch.long)
    for b, n in enumerate(LENGTHS):
        # real ids avoid the pad id (RoBERTa derives positions from ids != pad)
        row = torch.randint(3, VOCAB, (n,), generator=gen)
        ids[b, :n] = row
        mask[b, :n] = 1
        if with_types:
            types[b, n // 2:n] = 1
    return ids, types, mask


def save_golden(path, ids, types, mask, hidden, attns, values, logits, extra=()):
    t = [("input_ids", ids.double()), ("attention_mask", mask.double())]
    if types is not None:
        t.append(("token_type_ids", types.double()))
    t += [("hidden_states", hidden), ("attentions", attns), ("values", values)]
    if logits is not None:
        t.append(("mlm_logits", logits))
    t += list(extra)
    write_safetensors(path, t, "F32", {"generator": "tests/golden/make_goldens.py"})


def family(name, fam, n_layers, dtype, act_name, seed, mlm=True, emb=HIDDEN):
    gen = torch.Generator().manual_seed(seed)
    types = 0 if fam == "distilbert" else (1 if fam == "roberta" else 2)
    mlm_dim = (emb if fam == "electra" else HIDDEN) if mlm else 0
    p = make_params(gen, n_layers, emb, HIDDEN, types, mlm_dim)
    out_dir = os.path.join(HERE, name)
    os.makedirs(out_dir, exist_ok=True)
    if fam == "bert":
        cfg = bert_config(n_layers, act_name, "BertForMaskedLM" if mlm else "BertModel")
        names = bert_names(p, "bert." if mlm else "", mlm, None if mlm else gen)
        eps, pad = 1e-12, 0
    elif fam == "roberta":
        cfg, names, eps, pad = roberta_config(n_layers), roberta_names(p), 1e-5, 1
    elif fam == "distilbert":
        cfg, names, eps, pad = distilbert_config(n_layers), distilbert_names(p), 1e-12, 0
    else:
        cfg, names, eps, pad = electra_config(n_layers, emb), electra_names(p), 1e-12, 0
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(out_dir, "model.safetensors"), names, dtype, {"format": "pt"})

    q = round_params(p, dtype)
    ids, tys, mask = make_inputs(gen, pad, types == 2)
    act = act_fn(act_name)
    # HF heads: BERT's transform uses hidden_act, DistilBERT's uses activation, RoBERTa's lm_head and the
    # ELECTRA generator's head use exact gelu.
    mlm_act = act if fam in ("bert", "distilbert") else act_fn("gelu")
    hidden, attns, values, logits = reference(q, fam, ids, tys, mask, act, eps, mlm_act)
    save_golden(os.path.join(out_dir, "golden.safetensors"), ids, tys if types == 2 else None, mask,
                hidden, attns, values, logits)
    report = "%-14s %s %d layers, max|h| %.2f, max p %.3f" % (name, dtype, n_layers, hidden.abs().max(),
                                                              attns.max())
    return q, ids, tys, mask, act, eps, mlm_act, report


def hooks_golden(q, ids, tys, mask, act, eps, mlm_act):
    """bert with a policy mix. Layer 0: CONSTANT, ZERO, STANDARD, STANDARD (static layer).
    Layer 1: STANDARD, STANDARD, MIX 0.3, STANDARD (no static head: MIX's softmax part stays raw, so pad-query
    rows are 0.3 * softmax). Layer 2: MIX 0.5, CONSTANT with an all-zero row at a valid query, STANDARD,
    CONSTANT (static layer with a MIX head)."""
    gen = torch.Generator().manual_seed(7)
    n_layers = len(q["layers"])
    consts = torch.rand(n_layers, HEADS, L, L, generator=gen) ** 3  # peaky, non-negative, not row-stochastic
    consts[2, 1, 3, :] = 0.0  # no valid mass at query 3: must give a zero row, not NaN
    consts = consts.to(torch.float32).to(torch.float64)  # what the C side reads
    policies = [[(CONSTANT, 0.0), (ZERO, 0.0), (STANDARD, 0.0), (STANDARD, 0.0)],
                [(STANDARD, 0.0), (STANDARD, 0.0), (MIX, 0.3), (STANDARD, 0.0)],
                [(MIX, 0.5), (CONSTANT, 0.0), (STANDARD, 0.0), (CONSTANT, 0.0)]]
    assert n_layers == len(policies)
    modes = torch.tensor([[float(m) for m, _ in row] for row in policies])
    lams = torch.tensor([[lam for _, lam in row] for row in policies]).to(torch.float32).to(torch.float64)
    policies = [[(m, float(lam)) for (m, _), lam in zip(row, lrow)] for row, lrow in zip(policies, lams)]
    hidden, attns, values, logits = reference(q, "bert", ids, tys, mask, act, eps, mlm_act, policies, consts)
    assert not torch.isnan(attns).any()
    save_golden(os.path.join(HERE, "bert", "hooks.safetensors"), ids, tys, mask, hidden, attns, values, logits,
                extra=[("policy_modes", modes), ("policy_lambdas", lams), ("constants", consts)])


def main():
    reports = []
    r = family("bert", "bert", 3, "F32", "gelu", seed=1)
    reports.append(r[-1])
    hooks_golden(*r[:-1])
    reports.append(family("bert_gelu_new", "bert", 2, "F16", "gelu_new", seed=2, mlm=False)[-1])
    reports.append(family("roberta", "roberta", 2, "F16", "gelu", seed=3)[-1])
    reports.append(family("distilbert", "distilbert", 2, "BF16", "gelu", seed=4)[-1])
    reports.append(family("electra", "electra", 2, "F32", "gelu", seed=5, emb=16)[-1])
    for line in reports:
        print(line)
    total = 0
    for root, _, files in os.walk(HERE):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files if not f.endswith(".py"))
    print("golden files: %.0f KB" % (total / 1024))


if __name__ == "__main__":
    main()
