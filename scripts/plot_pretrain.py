#!/usr/bin/python3
"""plot_pretrain.py: the loss curve of an `attnlab pretrain` run as a PNG (matplotlib, Debian's
python3-matplotlib): training loss per step (light) and its 50-step moving average, with the held-out
evaluations of eval.csv as points; beside it, when eval.csv has them, the best head's mean attention to
the previous token, the next token and [CLS]/[SEP] at each evaluation; and when the run trained sentence
order (sop.csv), that objective's batch accuracy and loss. With sentence order a step's loss in
losses.csv is the sum of the two objectives, so the masked-token curve takes its MLM part from sop.csv.
Usage: /usr/bin/python3 scripts/plot_pretrain.py MODEL_DIR [OUT.png]"""
import csv
import json
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
    sop = []
    if os.path.exists(os.path.join(model_dir, "sop.csv")):
        with open(os.path.join(model_dir, "sop.csv")) as f:
            sop = [(int(r["step"]), float(r["mlm_loss"]), float(r["sop_loss"]), float(r["sop_accuracy"]))
                   for r in csv.DictReader(f)]
        mlm_of = {st: m for st, m, _, _ in sop}
        losses = [mlm_of.get(st, x) for st, x in zip(steps, losses)]
    # the objective from the run's recipe: "clm" (a decoder's next token) or the masked tokens of an encoder
    causal = False
    recipe = os.path.join(model_dir, "train_config.json")
    if os.path.exists(recipe):
        with open(recipe) as f:
            causal = json.load(f).get("objective") == "clm"
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
    axs = None
    if patterns and sop:
        fig, (ax, axp, axs) = plt.subplots(1, 3, figsize=(16, 4), dpi=100, gridspec_kw={"width_ratios": [3, 2, 2]})
    elif patterns:
        fig, (ax, axp) = plt.subplots(1, 2, figsize=(12, 4), dpi=100, gridspec_kw={"width_ratios": [3, 2]})
    else:
        fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(steps, losses, color="#9ecae1", linewidth=0.6, label="training loss (%s)" % ("next token" if causal else "masked tokens"))
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
            if "bigram_perplexity" in rows[0]:
                ax.axhline(math.log(float(rows[-1]["bigram_perplexity"])), color="#777777", linestyle=":",
                           linewidth=1, label="bigram baseline (held-out)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title(os.path.basename(os.path.normpath(model_dir)) + ": %s pretraining" % ("causal language-model" if causal else "masked-language-model"))
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
    if axs is not None:
        w = 200
        ss = [st for st, _, _, _ in sop]
        acc = [a for _, _, _, a in sop]
        sl = [x for _, _, x, _ in sop]
        mean = lambda xs, i: sum(xs[max(0, i - w + 1):i + 1]) / (i + 1 - max(0, i - w + 1))  # noqa: E731
        axs.plot(ss, [mean(acc, i) for i in range(len(acc))], color="#08519c", label="batch accuracy, %d-step mean" % w)
        axs.plot(ss, [mean(sl, i) for i in range(len(sl))], color="#d94801", label="loss, %d-step mean" % w)
        axs.axhline(0.5, color="#777777", linestyle="--", linewidth=1, label="chance (accuracy)")
        axs.axhline(0.6931, color="#bbbbbb", linestyle=":", linewidth=1, label="chance (loss, ln 2)")
        axs.set_xlabel("step")
        axs.set_title("sentence order (training batches)")
        axs.grid(alpha=0.3)
        axs.legend(loc="center right", fontsize="small")
    fig.tight_layout()
    fig.savefig(out)
    print("wrote", out)


if __name__ == "__main__":
    main()
