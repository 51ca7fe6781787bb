#!/usr/bin/python3
"""Writes the goldens that tests/c/test_probe.c and tests/c/test_metrics.c compare the C probes and metrics
against (docs/probes.md describes both).

Run by hand (needs PyTorch 1.13, numpy and mpmath; CI does not run it):
    /usr/bin/python3 tests/golden_probe/make_probe_goldens.py

probe.safetensors (F32): a padded batch of hidden states (NL + 1 = 3 states, D = 8, L = 6, B = 3 with
different real lengths, one in PAPA's layout with the final [SEP] after the padding; pads hold random
values, not zeros), and two probes written as torch modules in the shape of PAPA's FreezeExtractPoller and
FreezeExtractPollerTokenClassification, computed in float64 from float32-rounded parameters and inputs,
dropout off:
  seq.*: sequence probe; w, W1, b1, W2, b2, the labels, logits [B, C], loss, and the gradient of every
         parameter and of the hidden states ("seq.grad.hidden", [S, B, L, D]);
  tok.*: token probe; labels [B, L] with -100 on some real tokens and real labels on pad tokens (which the
         loss must ignore, as Hugging Face's token classification masks them), logits [B, L, C], loss, and
         the same gradients.

metrics.safetensors (F64, integers stored exactly): random prediction/label vectors and the metrics of
scikit-learn's and seqeval's formulas, reimplemented here with numpy (neither package is installed): accuracy,
binary F1 of class 1, macro F1 over the present classes, Matthews correlation (sklearn's multiclass form),
seqeval's default entity chunking (micro precision, recall, F1) and token accuracy over labelled tokens;
and Student-t quantiles solved with mpmath at 40 digits (scipy.stats.t.ppf was found off by up to 7e-9 at
40 degrees of freedom, so it is not used).
"""
import os
import sys

import mpmath
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import make_goldens as mg  # noqa: E402  (write_safetensors)

torch.set_default_dtype(torch.float64)

S, D, L, C, B = 3, 8, 6, 3, 3
MASK = [[1, 1, 1, 1, 1, 1],
        [1, 1, 1, 0, 0, 1],   # PAPA layout: [CLS] w w, pads, final [SEP] at L - 1
        [1, 1, 0, 0, 0, 0]]
SEQ_LABELS = [2, 0, 1]
TOK_LABELS = [[-100, 0, 2, 1, 1, -100],
              [-100, 1, 2, 0, 2, -100],  # positions 3, 4 are pads with labels: ignored through the mask
              [0, 2, 1, 1, 0, 2]]        # positions 2..5 are pads


class SequenceProbe(nn.Module):
    """Per layer k: p_k = sum_t w[k, t] m[t] h_k[t]; tanh(W1 [p_0; ...; p_NL] + b1); dropout; W2 . + b2."""

    def __init__(self, dropout):
        super().__init__()
        self.weights = nn.Parameter(torch.full((S, L), 1.0 / L))
        self.dense = nn.Linear(S * D, D)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(D, C)

    def forward(self, hidden, mask):
        pooled = [torch.einsum("bt,btd->bd", self.weights[k][None, :] * mask, hidden[k]) for k in range(S)]
        z = torch.tanh(self.dense(torch.cat(pooled, dim=-1)))
        return self.out_proj(self.dropout(z))


class TokenProbe(nn.Module):
    """Per position: W2 tanh(W1 [h_0; ...; h_NL] + b1) + b2, no dropout."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(S * D, D)
        self.out_proj = nn.Linear(D, C)

    def forward(self, hidden, mask):
        return self.out_proj(torch.tanh(self.dense(torch.cat(list(hidden), dim=-1))))


def f32(t):
    return t.to(torch.float32).to(torch.float64)


def init_probe(module, gen):
    """Random parameters, larger than the 0.02 init so that tanh is not linear, rounded to float32."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(f32(torch.randn(p.shape, generator=gen) * 0.4))
        if isinstance(module, SequenceProbe):
            module.weights.copy_(f32(1.0 / L + 0.05 * torch.randn((S, L), generator=gen)))


def probe_goldens():
    gen = torch.Generator().manual_seed(7)
    hidden = f32(torch.randn((S, B, L, D), generator=gen)).requires_grad_(True)
    mask = torch.tensor(MASK, dtype=torch.float64)
    out = [("hidden", hidden), ("mask", mask)]

    seq = SequenceProbe(dropout=0.1)
    init_probe(seq, gen)
    seq.eval()
    labels = torch.tensor(SEQ_LABELS)
    logits = seq(hidden, mask)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    out += [("seq.labels", labels), ("seq.w", seq.weights), ("seq.W1", seq.dense.weight), ("seq.b1", seq.dense.bias),
            ("seq.W2", seq.out_proj.weight), ("seq.b2", seq.out_proj.bias), ("seq.logits", logits),
            ("seq.loss", loss.reshape(1)), ("seq.grad.w", seq.weights.grad), ("seq.grad.W1", seq.dense.weight.grad),
            ("seq.grad.b1", seq.dense.bias.grad), ("seq.grad.W2", seq.out_proj.weight.grad),
            ("seq.grad.b2", seq.out_proj.bias.grad), ("seq.grad.hidden", hidden.grad.clone())]
    seq_report = "sequence probe: loss %.6f" % loss.item()

    hidden.grad = None
    tok = TokenProbe()
    init_probe(tok, gen)
    labels = torch.tensor(TOK_LABELS)
    logits = tok(hidden, mask)
    active = torch.where(mask.reshape(-1) == 1, labels.reshape(-1), torch.tensor(-100))
    loss = F.cross_entropy(logits.reshape(-1, C), active, ignore_index=-100)
    loss.backward()
    out += [("tok.labels", labels), ("tok.W1", tok.dense.weight), ("tok.b1", tok.dense.bias),
            ("tok.W2", tok.out_proj.weight), ("tok.b2", tok.out_proj.bias), ("tok.logits", logits),
            ("tok.loss", loss.reshape(1)), ("tok.grad.W1", tok.dense.weight.grad), ("tok.grad.b1", tok.dense.bias.grad),
            ("tok.grad.W2", tok.out_proj.weight.grad), ("tok.grad.b2", tok.out_proj.bias.grad),
            ("tok.grad.hidden", hidden.grad.clone())]
    mg.write_safetensors(os.path.join(HERE, "probe.safetensors"), [(n, t.detach().to(torch.float64)) for n, t in out])
    return [seq_report, "token probe: loss %.6f (%d labelled real tokens)" % (loss.item(), int((active != -100).sum()))]


# ---------------------------------------------------------------- metrics by the formulas of sklearn and seqeval

def sk_confusion(pred, gold, C):
    cm = np.zeros((C, C))
    for g, p in zip(gold, pred):
        cm[g, p] += 1
    return cm


def sk_f1_per_class(cm):
    tp = np.diag(cm)
    fp = cm.sum(axis=0) - tp
    fn = cm.sum(axis=1) - tp
    prec = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
    rec = np.divide(tp, tp + fn, out=np.zeros_like(tp), where=(tp + fn) > 0)
    return np.divide(2 * prec * rec, prec + rec, out=np.zeros_like(tp), where=(prec + rec) > 0)


def sk_macro_f1(pred, gold, C):
    cm = sk_confusion(pred, gold, C)
    present = sorted(set(gold.tolist()) | set(pred.tolist()))  # sklearn's unique_labels
    return float(np.mean(sk_f1_per_class(cm)[present]))


def sk_mcc(pred, gold, C):
    cm = sk_confusion(pred, gold, C)
    t, p = cm.sum(axis=1), cm.sum(axis=0)
    c, s = np.trace(cm), cm.sum()
    cov_tp = c * s - np.dot(t, p)
    cov_pp = s * s - np.dot(p, p)
    cov_tt = s * s - np.dot(t, t)
    return 0.0 if cov_pp * cov_tt == 0 else float(cov_tp / np.sqrt(cov_tt * cov_pp))


def split_tag(name):
    """seqeval without suffix: the first character, and what follows the first '-' ('_' if nothing)."""
    rest = name[1:].split("-", 1)[-1]
    return name[0], (rest or "_")


def seq_entities(tags):
    """seqeval's chunking over one flattened list (sentences separated by 'O'): (type, start, end) triples."""
    chunks, prev_tag, prev_type, begin = [], "O", "", 0
    for i, name in enumerate(tags + ["O"]):
        tag, typ = split_tag(name)
        end = (prev_tag in "ES") or (prev_tag in "BI" and tag in "BSO") or (prev_tag not in "O." and prev_type != typ)
        start = (tag in "BS") or (prev_tag in "ESO" and tag in "EI") or (tag not in "O." and prev_type != typ)
        if end:
            chunks.append((prev_type, begin, i - 1))
        if start:
            begin = i
        prev_tag, prev_type = tag, typ
    return chunks


def seqeval_scores(pred_sents, gold_sents):
    flat_g = [t for s in gold_sents for t in s + ["O"]]
    flat_p = [t for s in pred_sents for t in s + ["O"]]
    true, predicted = set(seq_entities(flat_g)), set(seq_entities(flat_p))
    correct = len(true & predicted)
    p = correct / len(predicted) if predicted else 0.0
    r = correct / len(true) if true else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    toks = [(a, b) for sp, sg in zip(pred_sents, gold_sents) for a, b in zip(sp, sg)]
    acc = sum(a == b for a, b in toks) / len(toks)
    return p, r, f, len(true), len(predicted), correct, acc


IOB2 = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
IOBES = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-ORG", "I-ORG", "E-ORG", "S-ORG"]


def noisy(rng, gold, C, keep):
    return np.where(rng.random(len(gold)) < keep, gold, rng.integers(0, C, len(gold)))


def t_quantile(p, dof):
    """Student-t quantile for p > 1/2: P(T > t) = I_{dof / (dof + t^2)}(dof / 2, 1 / 2) / 2 = 1 - p."""
    mpmath.mp.dps = 40
    v = mpmath.mpf(dof)
    tail = lambda t: mpmath.betainc(v / 2, mpmath.mpf(1) / 2, 0, v / (v + t * t), regularized=True) / 2 - (1 - mpmath.mpf(p))
    return float(mpmath.findroot(tail, 2.0 if p > 0.95 else 1.3))


def metrics_goldens():
    rng = np.random.default_rng(11)
    out, lines = [], []
    # Classification metrics: (n, C, fraction of predictions copied from gold).
    for i, (n, C, keep) in enumerate([(40, 2, 0.7), (300, 2, 0.5), (25, 3, 0.6), (500, 5, 0.3), (60, 4, 0.0),
                                      (200, 3, 0.9)]):
        gold = rng.integers(0, C, n)
        pred = noisy(rng, gold, C, keep)
        if i == 4:
            pred[:] = 1  # a constant predictor: MCC's denominator is 0
        vals = [np.mean(pred == gold), sk_macro_f1(pred, gold, C), sk_mcc(pred, gold, C),
                sk_f1_per_class(sk_confusion(pred, gold, C))[1] if C == 2 else -1.0]
        out += [("cls%d.pred" % i, torch.tensor(pred)), ("cls%d.gold" % i, torch.tensor(gold)),
                ("cls%d.n_labels" % i, torch.tensor([C])), ("cls%d.values" % i, torch.tensor(vals))]
        lines.append("cls%d n=%d C=%d: acc %.4f macro-F1 %.4f MCC %.4f F1(1) %.4f" % (i, n, C, *vals))
    # Entity F1: sentences of random tags (many I- without B-, type switches), -100 on some tokens.
    for i, (names, n_sent, keep) in enumerate([(IOB2, 30, 0.7), (IOB2, 80, 0.4), (IOBES, 50, 0.6)]):
        K = len(names)
        lens = rng.integers(1, 16, n_sent)
        offsets = np.concatenate([[0], np.cumsum(lens)])
        gold = rng.integers(0, K, offsets[-1])
        gold = np.where(rng.random(len(gold)) < 0.4, 0, gold)  # more O, as in real data
        pred = noisy(rng, gold, K, keep)
        gold = np.where(rng.random(len(gold)) < 0.1, -100, gold)
        gs, ps = [], []
        for s in range(n_sent):
            g, p = gold[offsets[s]:offsets[s + 1]], pred[offsets[s]:offsets[s + 1]]
            gs.append([names[x] for x in g if x != -100])
            ps.append([names[y] for x, y in zip(g, p) if x != -100])
        vals = seqeval_scores(ps, gs)
        out += [("ent%d.pred" % i, torch.tensor(pred)), ("ent%d.gold" % i, torch.tensor(gold)),
                ("ent%d.offsets" % i, torch.tensor(offsets)), ("ent%d.values" % i, torch.tensor(vals, dtype=torch.float64))]
        lines.append("ent%d (%s, %d sentences): P %.4f R %.4f F1 %.4f true %d pred %d correct %d token acc %.4f"
                     % (i, "IOB2" if names is IOB2 else "IOBES", n_sent, *vals))
    dofs = list(range(1, 41)) + [50, 100, 1000]
    out += [("t.dof", torch.tensor(dofs, dtype=torch.float64)),
            ("t.q975", torch.tensor([t_quantile(0.975, v) for v in dofs])),
            ("t.q90", torch.tensor([t_quantile(0.90, v) for v in dofs]))]
    mg.write_safetensors(os.path.join(HERE, "metrics.safetensors"),
                         [(n, t.to(torch.float64)) for n, t in out], dtype="F64")
    return lines


def main():
    for line in probe_goldens() + metrics_goldens():
        print(line)
    for f in ("probe.safetensors", "metrics.safetensors"):
        print("%s: %d bytes" % (f, os.path.getsize(os.path.join(HERE, f))))


if __name__ == "__main__":
    main()
