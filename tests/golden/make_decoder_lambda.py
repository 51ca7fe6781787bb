#!/usr/bin/python3
"""Writes tests/golden/decoders/<variant>/papa_lambda.safetensors for the GPT-2 goldens: the float64 reference of
PAPA's lambda stage on a causal language model (docs/papa.md, "Causal language models"; METHODS.md section 10), from
the definition: every head mixes, P = lambda * softmax + (1 - lambda) * C_hat, lambda = sigmoid(theta), C the
golden's causal constants (those of papa.safetensors, make_decoder_papa.py), and the loss is the next-token cross-entropy
averaged over every predicted token of the golden's B examples (one batch, right padded).

Run by hand (needs PyTorch 1.13; CI does not run it): /usr/bin/python3 tests/golden/make_decoder_lambda.py
Deterministic: two runs give identical bytes.
  theta [NL * H]   the logits the loss is taken at: 0.4 * ((i % 5) - 2), layer-major (lambda from 0.31 to 0.69)
  loss [1]         the batch's mean next-token loss at theta (nats)
  dtheta [NL * H]  its gradient with respect to theta (autograd in float64)
  loss0 [1]        the same loss at theta = 0 (every lambda 0.5)
Stored as float64 (F64)."""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as dg  # noqa: E402
import make_decoder_papa as dp  # noqa: E402  (the GPT-2 pass with constant and mixed heads)
from make_goldens import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)


def batch_loss(v, w, ids, mask, every, theta):
    NL, H = v["layers"], v["heads"]
    lam = torch.sigmoid(theta).reshape(NL, H)
    total, count = 0.0, 0
    for b in range(ids.shape[0]):
        total = total + dp.gpt2_pass(v, w, ids[b:b + 1], mask[b:b + 1], every, lam)[1]
        count += int(mask[b].sum()) - 1
    return total / count


def run(v):
    d = os.path.join(dg.OUT, v["name"])
    g = dg.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    ids, mask = g["input_ids"].long(), g["attention_mask"].long()
    NL, H = v["layers"], v["heads"]
    w = dg.read_back(v, d)
    if v.get("prefix") and (v["prefix"] + "wte.weight") not in w:
        w = {v["prefix"] + n: t for n, t in w.items()}
    C = dp.averaged_constants(v, w, ids, mask)[0]  # the constants of papa.safetensors
    every = {(l, h): C[l, h] for l in range(NL) for h in range(H)}
    theta = torch.tensor([0.4 * ((i % 5) - 2) for i in range(NL * H)], requires_grad=True)
    loss = batch_loss(v, w, ids, mask, every, theta)
    loss.backward()
    with torch.no_grad():
        loss0 = batch_loss(v, w, ids, mask, every, torch.zeros(NL * H))
    write_safetensors(os.path.join(d, "papa_lambda.safetensors"),
                      [("theta", theta.detach()), ("loss", loss.detach().reshape(1)), ("dtheta", theta.grad),
                       ("loss0", loss0.reshape(1))],
                      "F64", {"generator": "tests/golden/make_decoder_lambda.py", "variant": v["name"]})
    return "%-14s loss %.6f (lambda 0.5: %.6f), |dtheta| max %.3g" % (v["name"], float(loss), float(loss0),
                                                                      float(theta.grad.abs().max()))


def main():
    torch.set_num_threads(1)
    for v in dg.VARIANTS:
        if v["family"] == "gpt2":
            print(run(v))


if __name__ == "__main__":
    main()
