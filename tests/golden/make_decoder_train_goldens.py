#!/usr/bin/python3
"""Writes tests/golden/decoder_train/gpt2_grads.safetensors: the next-token loss of the random GPT-2 checkpoint
tests/golden/decoders/gpt2 on its golden batch, and the gradient of that loss with respect to every weight, in
float64 by PyTorch's autograd through the float64 reference of make_decoder_goldens.py (written from the papers and
docs/decoders.md, not from any library's modelling code). tests/c/test_decoder_train.c compares the C training
path's loss and gradients (src/train/train_decoder.c, train_lm.c; docs/decoder_pretraining.md) against it.

Regenerate (needs Debian's PyTorch 1.13; CI does not run it; transformers is not used):

    /usr/bin/python3 tests/golden/make_decoder_train_goldens.py

The loss: mean cross-entropy over every position i whose token i and token i + 1 are both real (the golden batch's
3 right-padded rows of 12, 9 and 5 tokens: 11 + 8 + 4 = 23 positions), predicting token i + 1 from the logits at i.
The file holds "loss" [1] and, under each weight's stored name and shape (Conv1D weights [in, out] as the
checkpoint stores them), its gradient; wte.weight's is the sum of the embedding's and the tied LM head's. All F32
(the float64 values rounded once). Deterministic: running it twice gives the same bytes.
"""
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as ref  # noqa: E402  (the float64 reference and its safetensors reader)
from make_goldens import write_safetensors  # noqa: E402

OUT = os.path.join(HERE, "decoder_train")


def is_weight(name):
    return not re.fullmatch(r"h\.\d+\.attn\.(bias|masked_bias)", name)  # the causal-mask buffers


def main():
    torch.set_num_threads(1)
    v = next(x for x in ref.VARIANTS if x["name"] == "gpt2")
    d = os.path.join(ref.OUT, "gpt2")
    stored = ref.read_safetensors_file(os.path.join(d, "model.safetensors"))
    golden = ref.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    ids = golden["input_ids"].to(torch.long)
    mask = golden["attention_mask"].to(torch.long)
    pos = golden["position_ids"].to(torch.long)
    weights = [(n, t.clone().requires_grad_(True)) for n, t in stored.items() if is_weight(n)]
    _, _, _, logits = ref.forward(v, weights, ids, mask, pos)
    labels = ids[:, 1:]
    real = (mask[:, :-1] * mask[:, 1:]).to(torch.bool)
    logp = torch.log_softmax(logits[:, :-1, :], dim=-1)
    nll = -logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    loss = nll[real].mean()
    assert int(real.sum()) == 23
    loss.backward()
    # the same loss from the logits by hand in Python scalars, for one position: log-sum-exp minus the label's
    z = logits[0, 0].detach().tolist()
    top = max(z)
    by_hand = top + torch.log(torch.tensor(sum(pow(2.718281828459045, x - top) for x in z), dtype=torch.float64))
    assert abs(float(by_hand) - z[int(ids[0, 1])] - float(nll[0, 0])) < 1e-9
    os.makedirs(OUT, exist_ok=True)
    tensors = [("loss", loss.detach().reshape(1))] + [(n, t.grad) for n, t in weights]
    write_safetensors(os.path.join(OUT, "gpt2_grads.safetensors"), tensors, "F32", {"format": "pt"})
    print("gpt2: loss %.9f over %d positions, %d gradients" % (float(loss), int(real.sum()), len(weights)))


if __name__ == "__main__":
    main()
