#!/usr/bin/python3
"""Writes tests/golden/decoder_train/NAME_grads.safetensors for the random checkpoints tests/golden/decoders/NAME
(gpt2, llama_gqa, llama_untied, qwen2, pythia, pythia_sequential): the next-token loss on the checkpoint's golden
batch, and the gradient of that loss with respect to every weight, in float64 by PyTorch's autograd through the
float64 reference of make_decoder_goldens.py (written from the papers and docs/decoders.md, not from any library's
modelling code). tests/c/test_decoder_train.c compares the C training path's loss and gradients
(src/train/train_decoder.c, train_lm.c; docs/decoder_pretraining.md) against them.

Regenerate (needs Debian's PyTorch 1.13; CI does not run it; transformers is not used):

    /usr/bin/python3 tests/golden/make_decoder_train_goldens.py

The loss: mean cross-entropy over every position i whose token i and token i + 1 are both real (the golden batch's
3 right-padded rows of 12, 9 and 5 tokens: 11 + 8 + 4 = 23 positions), predicting token i + 1 from the logits at i.
Each file holds "loss" [1] and, under each weight's stored name and shape (GPT-2's Conv1D weights [in, out], GPT-NeoX's
query_key_value with each head's q, k, v side by side, as the checkpoint stores them), its gradient; a tied word
embedding's is the sum of the embedding's and the LM head's. The weights are the checkpoint's stored values (F16 and
BF16 ones widened exactly). All F32 (the float64 values rounded once). Deterministic: running it twice gives the
same bytes.
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


NAMES = ["gpt2", "llama_gqa", "llama_untied", "qwen2", "qwen2_window", "pythia", "pythia_sequential"]


def is_weight(name):
    # the causal-mask buffers (GPT-2) and the rotary frequencies (GPT-NeoX) are not weights
    return not re.fullmatch(r"h\.\d+\.attn\.(bias|masked_bias)|.*\.rotary_emb\.inv_freq", name)


def write_one(name):
    v = next(x for x in ref.VARIANTS if x["name"] == name)
    d = os.path.join(ref.OUT, name)
    stored = ref.read_back(v, d)
    golden = ref.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    ids = golden["input_ids"].to(torch.long)
    mask = golden["attention_mask"].to(torch.long)
    pos = golden["position_ids"].to(torch.long)
    weights = [(n, t.to(torch.float64).clone().requires_grad_(True)) for n, t in stored.items() if is_weight(n)]
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
    assert all(t.grad is not None for _, t in weights), name  # every weight reaches the loss
    tensors = [("loss", loss.detach().reshape(1))] + [(n, t.grad) for n, t in weights]
    write_safetensors(os.path.join(OUT, name + "_grads.safetensors"), tensors, "F32", {"format": "pt"})
    print("%s: loss %.9f over %d positions, %d gradients" % (name, float(loss), int(real.sum()), len(weights)))


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for name in NAMES:
        write_one(name)


if __name__ == "__main__":
    main()
