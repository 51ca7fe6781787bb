#!/usr/bin/python3
"""Writes tests/golden/decoders/<variant>/roles.safetensors: the float64 references of the head roles (docs/measures.md
"Head roles") on every decoder golden, from the definitions in that page.

Run by hand after a native build (needs PyTorch 1.13; CI does not run it):
    /usr/bin/python3 tests/golden/make_decoder_roles.py [build/native/attnlab]
The repeated random sequences are the ones the op draws: this script asks the native CLI for them (`attnlab
head_roles DIR --sequences R --length N --seed S --json`, the reply's "ids") and draws nothing itself, so the
reference and the engine read the same tokens and tests/c/test_decoder_roles.c checks that the op still draws them.
Deterministic: two runs give identical bytes.

  ids [R, L]                the repeated sequences [start] x_0 .. x_{N-1} x_0 .. x_{N-1}, L = offset + 2 N (these
                            goldens have no tokenizer, so no start token: offset 0)
  score, chance [R, 4, NL, H]  per sequence, role (induction, duplicate_token, previous_token, sink) and head: the
                            mean over the role's rows i of A[i, target(i)], and the mean of 1 / k_i (k_i the keys row
                            i reads in that layer) when the target is among them, else 0:
                              induction        rows offset + N .. L - 1, target i - N + 1
                              duplicate_token  rows offset + N .. L - 1, target i - N
                              previous_token   rows 2 .. L - 1, target i - 1
                              sink             rows 1 .. L - 1, target 0
  first, second [R]         the mean next-token loss (nats) on tokens 1 .. N - 1 of the first copy and of the second,
                            each token predicted from the position before it
  text_score, text_chance [T, 4, NL, H]  the same on the golden's own input rows (golden.safetensors input_ids, each
                            row's real tokens run alone); induction and duplicate_token NAN
  p, p_holm [4, NL, H], text_p, text_p_holm  the rule of docs/findings.md ("Head roles"): per head the one-sided exact
                            sign test of the units' score - chance (ties left out), Holm across the heads of the role
Stored as float64 (F64)."""
import json
import math
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_goldens as dg  # noqa: E402  (the variants, the weight reader and the float64 forward)
from make_goldens import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)
ROOT = os.path.dirname(os.path.dirname(HERE))
R, N, SEED = 4, 8, 7  # tests/c/test_decoder_roles.c asks the op for the same
ROLES = ("induction", "duplicate_token", "previous_token", "sink")


def drawn_ids(cli, d):
    out = subprocess.run([cli, "head_roles", d, "--sequences", str(R), "--length", str(N), "--seed", str(SEED),
                          "--threads", "1", "--json"], check=True, capture_output=True, text=True).stdout
    reply = json.loads(out)
    assert reply["inputs"]["offset"] == 0, d  # no tokenizer, no start token
    return torch.tensor(reply["ids"], dtype=torch.long)


def weights_of(v, d):
    prefix = v.get("prefix", "")
    return [(n[len(prefix):] if prefix and n.startswith(prefix) else n, t) for n, t in dg.read_back(v, d).items()]


def window_of(v, layer):
    if v["family"] == "qwen2" and v["use_window"] and layer >= v["window_layers"]:
        return v["window"]
    return None


def rows_of(role, L, offset, n):
    """The role's rows and each row's target key (none for induction and duplicate_token on a text: n = 0)."""
    if role == 0:
        return [(i, i - n + 1) for i in range(offset + n, L)] if n else []
    if role == 1:
        return [(i, i - n) for i in range(offset + n, L)] if n else []
    if role == 2:
        return [(i, i - 1) for i in range(2, L)]
    return [(i, 0) for i in range(1, L)]


def unit(v, w, ids, offset, n):
    """One sequence run alone: score, chance [4, NL, H] and the next-token losses [L - 1] (nats)."""
    L = ids.shape[0]
    mask = torch.ones(1, L, dtype=torch.long)
    pos = torch.arange(L)[None]
    _, attns, _, logits = dg.forward(v, w, ids[None], mask, pos)
    NL, H = v["layers"], v["heads"]
    score = torch.full((4, NL, H), float("nan"))
    chance = torch.full((4, NL, H), float("nan"))
    for role in range(4):
        rows = rows_of(role, L, offset, n)
        if not rows:
            continue
        for l in range(NL):
            ok = dg.allowed_keys(mask, window_of(v, l))[0, 0]  # [L, L]: key j visible to query i
            ch = sum((1.0 / int(ok[i].sum())) if ok[i, t] else 0.0 for i, t in rows) / len(rows)
            for h in range(H):
                score[role, l, h] = sum(float(attns[l, 0, h, i, t]) for i, t in rows) / len(rows)
                chance[role, l, h] = ch
    logp = torch.log_softmax(logits[0], dim=-1)
    nll = torch.tensor([-float(logp[i, ids[i + 1]]) for i in range(L - 1)])
    return score, chance, nll


def sign_p(m, above):
    """P(X >= above), X binomial(m, 1/2), exactly in integers."""
    if m <= 0 or above <= 0:
        return 1.0
    return sum(math.comb(m, x) for x in range(above, m + 1)) / 2 ** m


def holm(p):
    order = sorted(range(len(p)), key=lambda k: p[k])
    adj, run = [0.0] * len(p), 0.0
    for rank, k in enumerate(order):
        run = max(run, min(1.0, (len(p) - rank) * p[k]))
        adj[k] = run
    return adj


def finding(score, chance):
    """score, chance [U, 4, NL, H] -> p, p_holm [4, NL, H] by the rule (NAN for a role without units)."""
    _, _, NL, H = score.shape
    p = torch.full((4, NL, H), float("nan"))
    ph = torch.full((4, NL, H), float("nan"))
    for role in range(4):
        ps = []
        for l in range(NL):
            for h in range(H):
                d = [float(s - c) for s, c in zip(score[:, role, l, h], chance[:, role, l, h])
                     if not (math.isnan(s) or math.isnan(c))]
                ps.append(sign_p(sum(x != 0 for x in d), sum(x > 0 for x in d)) if d else float("nan"))
        if all(math.isnan(x) for x in ps):
            continue
        p[role] = torch.tensor(ps).reshape(NL, H)
        ph[role] = torch.tensor(holm(ps)).reshape(NL, H)
    return p, ph


def run(v, cli):
    d = os.path.join(dg.OUT, v["name"])
    w = weights_of(v, d)
    ids = drawn_ids(cli, os.path.relpath(d, ROOT))
    units = [unit(v, w, ids[r], 0, N) for r in range(R)]
    score = torch.stack([u[0] for u in units])
    chance = torch.stack([u[1] for u in units])
    first = torch.tensor([float(u[2][0:N - 1].mean()) for u in units])  # tokens 1 .. N - 1, from positions 0 .. N - 2
    second = torch.tensor([float(u[2][N:2 * N - 1].mean()) for u in units])  # tokens N + 1 .. 2N - 1
    g = dg.read_safetensors_file(os.path.join(d, "golden.safetensors"))
    texts = []
    for b in range(g["input_ids"].shape[0]):
        n = int(g["attention_mask"][b].sum())
        texts.append(unit(v, w, g["input_ids"][b, :n].long(), 0, 0))
    t_score = torch.stack([u[0] for u in texts])
    t_chance = torch.stack([u[1] for u in texts])
    p, ph = finding(score, chance)
    tp, tph = finding(t_score, t_chance)
    write_safetensors(os.path.join(d, "roles.safetensors"),
                      [("ids", ids.double()), ("score", score), ("chance", chance), ("first", first),
                       ("second", second), ("text_score", t_score), ("text_chance", t_chance), ("p", p),
                       ("p_holm", ph), ("text_p", tp), ("text_p_holm", tph)],
                      "F64", {"generator": "tests/golden/make_decoder_roles.py", "variant": v["name"],
                              "sequences": str(R), "length": str(N), "seed": str(SEED)})
    return "%-18s induction score in [%.4f, %.4f] (chance %.4f), loss first %.4f second %.4f bits" % (
        v["name"], float(score[:, 0].mean(0).min()), float(score[:, 0].mean(0).max()), float(chance[:, 0].mean()),
        float(first.mean()) / math.log(2), float(second.mean()) / math.log(2))


def main():
    torch.set_num_threads(1)
    cli = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "native", "attnlab")
    os.chdir(ROOT)
    for v in dg.VARIANTS:
        print(run(v, cli))


if __name__ == "__main__":
    main()
