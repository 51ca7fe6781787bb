#!/usr/bin/python3
"""plot_pretrain.py: the loss curve of an `attnlab pretrain` run as a PNG (matplotlib, Debian's
python3-matplotlib): training loss per step (light) and its 50-step moving average, with the held-out
evaluations of eval.csv as points; beside it, when eval.csv has them, the best head's mean attention to
the previous token, the next token and [CLS]/[SEP] at each evaluation. Usage: /usr/bin/python3 scripts/plot_pretrain.py MODEL_DIR [OUT.png]"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    model_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(model_dir, "loss_curve.png")
    steps, losses = [], []
    with open(os.path.join(model_dir, "losses.csv")) as f:
        for row in csv.DictReader(f):
            steps.append(int(row["step"]))
            losses.append(float(row["loss"]))
    window = 50
    avg = []
    for i in range(len(losses)):
        lo = max(0, i - window + 1)
        avg.append(sum(losses[lo:i + 1]) / (i + 1 - lo))
    eval_path = os.path.join(model_dir, "eval.csv")
    rows = []
    if os.path.exists(eval_path):
        with open(eval_path) as f:
            rows = list(csv.DictReader(f))
    patterns = bool(rows) and "prev_token_score" in rows[0]
    if patterns:
        fig, (ax, axp) = plt.subplots(1, 2, figsize=(12, 4), dpi=100, gridspec_kw={"width_ratios": [3, 2]})
    else:
        fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(steps, losses, color="#9ecae1", linewidth=0.6, label="training loss (masked tokens)")
    ax.plot(steps, avg, color="#08519c", linewidth=1.5, label="%d-step moving average" % window)
    if rows:
        es = [int(r["step"]) for r in rows]
        el = [float(r["loss"]) for r in rows]
        uni = [float(r["unigram_perplexity"]) for r in rows]
        if es:
            ax.plot(es, el, "o", color="#d94801", label="held-out loss")
            import math
            ax.axhline(math.log(uni[-1]), color="#777777", linestyle="--", linewidth=1,
                       label="unigram baseline (held-out)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title(os.path.basename(os.path.normpath(model_dir)) + ": masked-language-model pretraining")
    ax.grid(alpha=0.3)
    ax.legend()
    if patterns:
        for key, colour, label in (("prev_token", "#238b45", "previous token"), ("next_token", "#6a51a3", "next token"),
                                   ("cls_sep", "#d94801", "[CLS] / [SEP]")):
            axp.plot(es, [float(r[key + "_score"]) for r in rows], "o-", color=colour, markersize=3,
                     label="%s (final best: %s)" % (label, rows[-1][key + "_head"]))
        axp.set_ylim(0, 1)
        axp.set_xlabel("step")
        axp.set_ylabel("best head's mean attention")
        axp.set_title("attention patterns (held-out)")
        axp.grid(alpha=0.3)
        axp.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out)
    print("wrote", out)


if __name__ == "__main__":
    main()
