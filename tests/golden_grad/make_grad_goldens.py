#!/usr/bin/python3
"""Writes the gradient goldens that tests/c/test_grad_golden.c compares the C backward pass against.

Run by hand (needs PyTorch 1.13 and numpy; CI does not run it): /usr/bin/python3 tests/golden_grad/make_grad_goldens.py

A small random BERT with an MLM head is written in Hugging Face layout (bert_mlm/config.json and
bert_mlm/model.safetensors, F32, HF parameter names; the decoder weight is left out so the loader ties it
to the word embeddings, as HF does). PyTorch then computes, in float64 with autograd and an implementation
that shares nothing with the C code (embeddings by hand with F.embedding(padding_idx=pad) as HF's
nn.Embedding, explicit attention ops, dropout off):

  standard: the MLM loss (mean cross-entropy over labels != -100) of a fixed padded batch and the gradient
            of every parameter;
  mix:      the same with PAPA hooks (METHODS.md sections 2-3): layer 0 all MIX (lambda = sigmoid(theta)),
            layer 1 MIX + CONSTANT + STANDARD (a static layer: every head mask-and-normalised), with fixed
            constant matrices C and logits theta; the loss, the gradient of theta, and every parameter's.

grads.safetensors holds the inputs (ids as exactly representable F32), "<scenario>.loss",
"<scenario>.grad.<HF name>", and for mix "mix.C" [NL, H, L, L], "mix.modes" [NL, H] (al_head_mode codes),
"mix.theta" and "mix.grad_theta" [NL, H]. Gradients are stored as float32 (the exact answer rounded once).

sop_grads.safetensors: the standard scenario plus pretraining's sentence-order head (pooler and 2-way
classifier, docs/pretraining.md) on two rows of the batch: "sop.rows", "sop.labels", "sop.head.<HF name>"
(the head's weights), "sop.loss" (MLM + sentence order), "sop.sop_loss", "sop.grad.<HF name>" for every
parameter, head included.
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "bert_mlm")
torch.set_default_dtype(torch.float64)

VOCAB, HIDDEN, HEADS, INTER, LAYERS, MAXPOS, TYPES = 40, 24, 3, 48, 2, 24, 2
B, L = 3, 10
LENGTHS = [10, 7, 4]
EPS = 1e-12
STANDARD, CONSTANT, MIX, ZERO = 0, 1, 2, 3


def write_safetensors(path, tensors):
    """tensors: list of (name, tensor) stored F32. 8-byte LE header length, JSON header, raw LE data."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors:
        data = t.detach().contiguous().to(torch.float32).numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def make_params(gen):
    """HF names -> float64 leaf tensors, rounded to float32 (the values the C loader sees)."""
    def normal(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    p = {}
    e = "bert.embeddings."
    p[e + "word_embeddings.weight"] = normal(VOCAB, HIDDEN, std=0.2)
    p[e + "position_embeddings.weight"] = normal(MAXPOS, HIDDEN, std=0.2)
    p[e + "token_type_embeddings.weight"] = normal(TYPES, HIDDEN, std=0.2)
    p[e + "LayerNorm.weight"] = 1.0 + normal(HIDDEN, std=0.1)
    p[e + "LayerNorm.bias"] = normal(HIDDEN, std=0.1)
    for l in range(LAYERS):
        a = f"bert.encoder.layer.{l}."
        for n in ("query", "key", "value"):
            std = 0.4 if n != "value" else 0.2  # sharper attention: Q/K gradients well above rounding
            p[a + f"attention.self.{n}.weight"] = normal(HIDDEN, HIDDEN, std=std)
            p[a + f"attention.self.{n}.bias"] = normal(HIDDEN, std=0.1)
        p[a + "attention.output.dense.weight"] = normal(HIDDEN, HIDDEN, std=0.2)
        p[a + "attention.output.dense.bias"] = normal(HIDDEN, std=0.1)
        p[a + "attention.output.LayerNorm.weight"] = 1.0 + normal(HIDDEN, std=0.1)
        p[a + "attention.output.LayerNorm.bias"] = normal(HIDDEN, std=0.1)
        p[a + "intermediate.dense.weight"] = normal(INTER, HIDDEN, std=0.2)
        p[a + "intermediate.dense.bias"] = normal(INTER, std=0.1)
        p[a + "output.dense.weight"] = normal(HIDDEN, INTER, std=0.2)
        p[a + "output.dense.bias"] = normal(HIDDEN, std=0.1)
        p[a + "output.LayerNorm.weight"] = 1.0 + normal(HIDDEN, std=0.1)
        p[a + "output.LayerNorm.bias"] = normal(HIDDEN, std=0.1)
    c = "cls.predictions."
    p[c + "transform.dense.weight"] = normal(HIDDEN, HIDDEN, std=0.2)
    p[c + "transform.dense.bias"] = normal(HIDDEN, std=0.1)
    p[c + "transform.LayerNorm.weight"] = 1.0 + normal(HIDDEN, std=0.1)
    p[c + "transform.LayerNorm.bias"] = normal(HIDDEN, std=0.1)
    p[c + "bias"] = normal(VOCAB, std=0.1)
    return {k: v.to(torch.float32).to(torch.float64) for k, v in p.items()}


def mask_and_normalize(P, m):
    """PAPA: P * (m m^T), rows L1-normalised with eps 1e-12 (torch.nn.functional.normalize)."""
    mm = m[:, None, :, None] * m[:, None, None, :]
    return F.normalize(P * mm, p=1.0, dim=-1, eps=1e-12)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=EPS)


def encode(p, ids, mask, types, modes=None, C=None, theta=None):
    """The encoder's last hidden states [B, L, HIDDEN]."""
    e = "bert.embeddings."
    pos = torch.arange(L).expand(B, L)
    x = F.embedding(ids, p[e + "word_embeddings.weight"], padding_idx=0)  # HF: nn.Embedding(padding_idx=pad)
    x = x + F.embedding(types, p[e + "token_type_embeddings.weight"])
    x = x + F.embedding(pos, p[e + "position_embeddings.weight"])
    x = layer_norm(x, p[e + "LayerNorm.weight"], p[e + "LayerNorm.bias"])
    m = mask.to(torch.float64)
    add_mask = (1.0 - m)[:, None, None, :] * -10000.0
    dh = HIDDEN // HEADS
    for l in range(LAYERS):
        a = f"bert.encoder.layer.{l}."

        def proj(n):
            y = x @ p[a + f"attention.self.{n}.weight"].T + p[a + f"attention.self.{n}.bias"]
            return y.view(B, L, HEADS, dh).transpose(1, 2)  # [B, H, L, dh]

        q, k, v = proj("query"), proj("key"), proj("value")
        S = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + add_mask, dim=-1)
        if modes is None:
            P = S
        else:
            heads = []
            static = any(modes[l][h] in (CONSTANT, ZERO) for h in range(HEADS))
            for h in range(HEADS):
                chat = mask_and_normalize(C[l, h].expand(B, 1, L, L), m)[:, 0]
                md = modes[l][h]
                if md == STANDARD:
                    ph = S[:, h]
                elif md == CONSTANT:
                    ph = chat
                elif md == MIX:
                    lam = torch.sigmoid(theta[l, h])
                    ph = lam * S[:, h] + (1.0 - lam) * chat
                else:
                    ph = torch.zeros_like(S[:, h])
                if static and md in (STANDARD, MIX):
                    ph = mask_and_normalize(ph[:, None], m)[:, 0]
                heads.append(ph)
            P = torch.stack(heads, dim=1)
        ctx = (P @ v).transpose(1, 2).reshape(B, L, HIDDEN)
        y = ctx @ p[a + "attention.output.dense.weight"].T + p[a + "attention.output.dense.bias"]
        x = layer_norm(y + x, p[a + "attention.output.LayerNorm.weight"], p[a + "attention.output.LayerNorm.bias"])
        f = F.gelu(x @ p[a + "intermediate.dense.weight"].T + p[a + "intermediate.dense.bias"])
        y = f @ p[a + "output.dense.weight"].T + p[a + "output.dense.bias"]
        x = layer_norm(y + x, p[a + "output.LayerNorm.weight"], p[a + "output.LayerNorm.bias"])
    return x


def mlm_head_loss(p, x, labels):
    e = "bert.embeddings."
    c = "cls.predictions."
    t = F.gelu(x @ p[c + "transform.dense.weight"].T + p[c + "transform.dense.bias"])
    t = layer_norm(t, p[c + "transform.LayerNorm.weight"], p[c + "transform.LayerNorm.bias"])
    logits = t @ p[e + "word_embeddings.weight"].T + p[c + "bias"]  # tied decoder
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)


def mlm_loss(p, ids, mask, types, labels, modes=None, C=None, theta=None):
    return mlm_head_loss(p, encode(p, ids, mask, types, modes, C, theta), labels)


SOP_ROWS, SOP_LABELS = [0, 2], [1, 0]   # pairs: batch rows (their [CLS] at position 0) and labels (1: swapped)


def sop_loss(p, x):
    """BertForPreTraining's pooler (dense + tanh on the [CLS] state) and seq_relationship classifier, mean
    cross-entropy over the pairs (src/train/train_sop.c)."""
    cls = x[SOP_ROWS, 0]
    pooled = torch.tanh(cls @ p["bert.pooler.dense.weight"].T + p["bert.pooler.dense.bias"])
    logits = pooled @ p["cls.seq_relationship.weight"].T + p["cls.seq_relationship.bias"]
    return F.cross_entropy(logits, torch.tensor(SOP_LABELS))


def sop_golden(params, ids, mask, types, labels):
    """sop_grads.safetensors: MLM + sentence-order loss of the same batch, dropout off; the head from its own
    generator, so grads.safetensors is unchanged."""
    gen = torch.Generator().manual_seed(2026)
    head = {"bert.pooler.dense.weight": torch.randn(HIDDEN, HIDDEN, generator=gen) * 0.3,
            "bert.pooler.dense.bias": torch.randn(HIDDEN, generator=gen) * 0.1,
            "cls.seq_relationship.weight": torch.randn(2, HIDDEN, generator=gen) * 0.5,
            "cls.seq_relationship.bias": torch.randn(2, generator=gen) * 0.1}
    head = {k: v.to(torch.float32).to(torch.float64) for k, v in head.items()}
    leaves = {k: v.clone().requires_grad_(True) for k, v in list(params.items()) + list(head.items())}
    x = encode(leaves, ids, mask, types)
    mlm, sop = mlm_head_loss(leaves, x, labels), sop_loss(leaves, x)
    (mlm + sop).backward()
    out = [("sop.rows", torch.tensor(SOP_ROWS).double()), ("sop.labels", torch.tensor(SOP_LABELS).double()),
           ("sop.loss", (mlm + sop).detach().reshape(1)), ("sop.sop_loss", sop.detach().reshape(1))]
    out += [("sop.head." + k, v) for k, v in head.items()]
    out += [("sop.grad." + k, v.grad) for k, v in leaves.items()]
    print(f"sop: mlm {mlm.item():.6f} + sentence order {sop.item():.6f}")
    write_safetensors(os.path.join(HERE, "sop_grads.safetensors"), out)


def main():
    gen = torch.Generator().manual_seed(20240611)
    params = make_params(gen)
    ids = torch.zeros(B, L, dtype=torch.long)
    mask = torch.zeros(B, L, dtype=torch.long)
    types = torch.zeros(B, L, dtype=torch.long)
    labels = torch.full((B, L), -100, dtype=torch.long)
    for b, n in enumerate(LENGTHS):
        ids[b, :n] = torch.randint(1, VOCAB, (n,), generator=gen)
        mask[b, :n] = 1
        types[b, n // 2:n] = 1
    ids[0, 5] = 0  # a real token with the pad id: its word-embedding row still gets no gradient (padding_idx)
    for b, i in [(0, 1), (0, 5), (0, 8), (1, 2), (1, 3), (2, 0), (2, 3), (2, 6)]:  # (2, 6) is a pad position
        labels[b, i] = int(torch.randint(0, VOCAB, (1,), generator=gen))

    os.makedirs(OUT, exist_ok=True)
    config = {"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
              "hidden_dropout_prob": 0.1, "hidden_size": HIDDEN, "initializer_range": 0.02,
              "intermediate_size": INTER, "layer_norm_eps": EPS, "max_position_embeddings": MAXPOS,
              "model_type": "bert", "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "pad_token_id": 0,
              "position_embedding_type": "absolute", "torch_dtype": "float32", "type_vocab_size": TYPES,
              "vocab_size": VOCAB}
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(OUT, "model.safetensors"), list(params.items()))

    out = [("input_ids", ids.double()), ("attention_mask", mask.double()), ("token_type_ids", types.double()),
           ("labels", labels.double())]

    leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    loss = mlm_loss(leaves, ids, mask, types, labels)
    loss.backward()
    out.append(("standard.loss", loss.detach().reshape(1)))
    out += [("standard.grad." + k, v.grad) for k, v in leaves.items()]
    print(f"standard loss {loss.item():.6f}")

    modes = [[MIX, MIX, MIX], [MIX, CONSTANT, STANDARD]]
    C = (0.05 + torch.rand(LAYERS, HEADS, L, L, generator=gen)).to(torch.float32).double()
    theta = torch.tensor([[0.0, 0.8, -1.1], [0.4, 0.0, 0.0]]).requires_grad_(True)
    leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    loss = mlm_loss(leaves, ids, mask, types, labels, modes, C, theta)
    loss.backward()
    out += [("mix.loss", loss.detach().reshape(1)), ("mix.C", C), ("mix.modes", torch.tensor(modes).double()),
            ("mix.theta", theta.detach()), ("mix.grad_theta", theta.grad)]
    out += [("mix.grad." + k, v.grad) for k, v in leaves.items()]
    print(f"mix loss {loss.item():.6f}, grad theta {theta.grad.tolist()}")
    write_safetensors(os.path.join(HERE, "grads.safetensors"), out)
    sop_golden(params, ids, mask, types, labels)


if __name__ == "__main__":
    main()
