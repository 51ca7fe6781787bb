#!/usr/bin/python3
"""papa_table.py: the Markdown table of one or more `attnlab papa` replies (JSON), for model cards and
notes. Per configuration: the probe score as mean ± 95% interval over seeds (the reply's own summary,
docs/papa-op.md), the drop relative to the full model, the paired difference (full minus the configuration,
seed by seed, mean ± 95%), the MLM top-1 accuracy when the model has an MLM head, and the accuracy per group
when the task has groups (agreement: attractor nouns 0, 1, 2, 3+). Below the table: which rule made the
verdicts (read from the replies), each model's verdict sentence and its seed-by-seed differences, full model
minus every head constant.
A language model's sweep (the reply's `score.direction` is "lower is better": bits per token over the documents
of a corpus, docs/papa-op.md) gets its own table: bits per token and perplexity with their 95% intervals, and the
rise over the full model (the configuration minus the full model, document by document, mean ± 95%).
Several replies (one per model, same task) give one column block per model. With --summary the replies
may be of any tasks and models: one row each, with the full model, every head constant (average), the
embeddings alone, the paired differences and the engine's two verdicts (docs/papa.md, "What a sweep finds").
With --combined PREFIX the same rows go to PREFIX.csv and PREFIX.md, and every reply whole to PREFIX.json
(scripts/papa_sweep.sh's combined result).

Usage: /usr/bin/python3 scripts/papa_table.py REPLY.json [REPLY2.json ...] [--title TEXT] [--summary | --combined PREFIX]"""
import argparse
import csv
import json
import os
import sys


def load(path):
    with open(path) as f:
        r = json.load(f)
    if r.get("op") not in ("papa", "papa_merge") or "summary" not in r or "configs" not in r:
        sys.exit("papa_table: %s is not a reply of the papa op" % path)
    return r


def group_means(reply, config):
    """Mean accuracy per group over the seeds of one configuration, with the group's size."""
    runs = [x for x in reply["runs"] if x["config"] == config and x.get("group_accuracy")]
    if not runs:
        return None
    n = len(runs[0]["group_accuracy"])
    out = []
    for g in range(n):
        vals = [x["group_accuracy"][g] for x in runs if x["group_accuracy"][g] is not None]
        out.append(sum(vals) / len(vals) if vals else None)
    return out


def key(c):
    """A configuration by what it is, not by its label: the label counts heads (k), and models differ in
    their number of heads, so one sweep's rows line up across models by kind, matrix, order and fraction."""
    return (c["what"], c.get("constant"), c.get("order"), c.get("fraction_kept"))


def row_name(c):
    """The row's name: the fraction of heads left input-dependent rather than a head count."""
    if c["what"] != "sweep":
        return c["label"]
    if c.get("k", 0) == 0:
        return "full"
    if c["fraction_kept"] == 0:
        return "%s all" % c["constant"]
    return "%s, %g%% input-dependent, %s" % (c["constant"], 100 * c["fraction_kept"], c["order"])


def ci_cell(half_width):
    """" ± h" for a 95% half-width; nothing for one seed, where the reply has none (null)."""
    return "" if half_width is None else " ± %.4f" % half_width


def drop_cell(d):
    """A drop, or a dash when it has none (the full model's score is 0, as an MCC of 0 is)."""
    return "–" if d is None else "%+.1f%%" % (100 * d)


def cell(v, digits=3):
    return "" if v is None else "%.*f" % (digits, v)


def model_name(reply):
    return os.path.basename(os.path.normpath(reply["model"]))


def word(findings, key):
    """A verdict in the engine's own words (findings.words, docs/papa.md); a reply from before the table
    carried its code alone."""
    return findings.get("words", {}).get(findings[key], findings[key])


def paired_cell(p):
    """A paired difference (full minus the configuration, seed by seed): mean ± 95% half-width."""
    return "–" if not p else "%+.4f%s" % (p["mean"], ci_cell(p["ci95"]))


def verdict_rule(replies):
    """Which rule made the verdicts, from the replies themselves: a reply whose findings carry the paired
    differences was judged by the paired rule; an older one by the two intervals alone."""
    engines = ", ".join(sorted({str(r.get("engine", "?")) for r in replies}))
    if all("full_minus_constant" in r.get("findings", {}) for r in replies):
        return ("the engine's (%s) by the paired rule of docs/papa.md (\"What a sweep finds\"): "
                "the seed-by-seed difference's 95%% interval, or the two configurations' intervals apart" % engines)
    return ("the engine's (%s) by the rule before the seeds were paired, from the two 95%% "
            "intervals alone (recompute them with papa_merge for the paired rule)" % engines)


def seed_differences(reply, config):
    """Full model minus the configuration, seed by seed, over the seeds both ran (the paired rule's data)."""
    full = {x["seed_index"]: x["score"] for x in reply["runs"] if x["config"] == reply["findings"]["full"]}
    return [full[x["seed_index"]] - x["score"] for x in reply["runs"]
            if x["config"] == config and x["seed_index"] in full]


def summary_rows(paths, replies):
    """One row per reply, the three configurations the verdicts compare as numbers: what the summary table
    prints and the combined CSV holds."""
    rows = []
    for p, r in zip(paths, replies):
        f = r.get("findings")
        if not f:
            sys.exit("papa_table: %s has no findings (an older reply: recompute them with papa_merge)" % p)
        s = r["summary"]
        rows.append({
            "task": r["task"]["id"], "model": model_name(r), "metric": r["task"]["metric"],
            "mlm_accuracy": r["configs"][f["full"]].get("mlm_accuracy"),
            "full": s[f["full"]]["mean"], "full_ci95": s[f["full"]]["ci95"],
            "constant": s[f["all_constant"]]["mean"], "constant_ci95": s[f["all_constant"]]["ci95"],
            "drop": s[f["all_constant"]]["drop"],
            "full_minus_constant": (f.get("full_minus_constant") or {}).get("mean"),
            "full_minus_constant_ci95": (f.get("full_minus_constant") or {}).get("ci95"),
            "embeddings_only": s[f["embeddings_only"]]["mean"], "embeddings_only_ci95": s[f["embeddings_only"]]["ci95"],
            "full_minus_embeddings": (f.get("full_minus_embeddings") or {}).get("mean"),
            "full_minus_embeddings_ci95": (f.get("full_minus_embeddings") or {}).get("ci95"),
            "informative": word(f, "informative"), "constant_costs": word(f, "constant_costs"),
            "seeds": s[0]["n"], "digest": r["digest"], "model_hash": r["hashes"]["model"], "task_hash": r["hashes"]["task"],
            "findings": f})
    return rows


def summary(paths, replies, out=sys.stdout):
    """One row per reply: the three configurations the verdicts compare, their paired differences, and the
    verdicts."""
    seeds = sorted({r["summary"][0]["n"] for r in replies})
    print("Summary: every head input-dependent (full) against every head constant and the embeddings alone, "
          "mean ± 95%% interval over %s seeds, and full minus each, seed by seed (mean ± 95%%); the verdicts are %s."
          % (" or ".join(str(n) for n in seeds), verdict_rule(replies)), file=out)
    print(file=out)
    print("| task | model | full | every head constant | drop | full − constant, paired | embeddings only | "
          "full − embeddings, paired | layers beat embeddings | constant heads cost |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|", file=out)
    for x in summary_rows(paths, replies):
        f = x["findings"]
        print("| %s | %s | %.4f%s | %.4f%s | %s | %s | %.4f%s | %s | %s | %s |" % (
            x["task"], x["model"], x["full"], ci_cell(x["full_ci95"]), x["constant"], ci_cell(x["constant_ci95"]),
            drop_cell(x["drop"]), paired_cell(f.get("full_minus_constant")),
            x["embeddings_only"], ci_cell(x["embeddings_only_ci95"]), paired_cell(f.get("full_minus_embeddings")),
            x["informative"], x["constant_costs"]), file=out)


def combined(prefix, paths, replies):
    """Many sweeps as one result (scripts/papa_sweep.sh merge): PREFIX.json holds every reply whole with its
    provenance (engine, model and task hashes, digest), PREFIX.csv one row per sweep, PREFIX.md the summary
    table. Each file is written beside and renamed, so a reader never sees half of one."""
    rows = summary_rows(paths, replies)
    doc = {"format": "attnlab-papa-combined", "version": 1,
           "engines": sorted({str(r.get("engine", "?")) for r in replies}),
           "sweeps": [{"model": x["model"], "task": x["task"], "digest": x["digest"], "model_hash": x["model_hash"],
                       "task_hash": x["task_hash"], "file": os.path.basename(os.path.dirname(os.path.abspath(p))),
                       "reply": r} for p, r, x in zip(paths, replies, rows)]}
    columns = [k for k in rows[0] if k != "findings"]

    def write(ext, fill):
        tmp = "%s.%s.tmp" % (prefix, ext)
        with open(tmp, "w", newline="") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, "%s.%s" % (prefix, ext))

    def csv_rows(f):
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for x in rows:
            w.writerow(["" if x[k] is None else x[k] for k in columns])

    write("json", lambda f: json.dump(doc, f, indent=1))
    write("csv", csv_rows)
    write("md", lambda f: summary(paths, replies, out=f))


def lower_is_better(reply):
    return reply.get("score", {}).get("direction") == "lower is better"


def lm_table(paths, replies, title):
    """A language model's sweep: the score is bits per token (lower is better), so the table reads the rise
    over the full model (configuration minus full, the negative of the reply's paired full-minus-this)."""
    keys = [key(c) for c in replies[0]["configs"]]
    for p, r in zip(paths, replies):
        if not lower_is_better(r):
            sys.exit("papa_table: %s is a probe sweep and %s a language model's: one table reads one kind" % (p, paths[0]))
        if [key(c) for c in r["configs"]] != keys:
            sys.exit("papa_table: %s has other configurations than %s" % (p, paths[0]))
    config = replies[0]["config"]
    print("%s: bits per token on `%s` (%d documents), windows of %d tokens, constants from `%s`." % (
        title or "PAPA on a language model", config.get("corpus_name", "?"), replies[0]["summary"][0]["n"],
        config["L"], config.get("constants_corpus_name", "?")))
    print()
    head, rule = ["configuration"], ["---"]
    for r in replies:
        head += ["%s bits per token ± 95%%" % model_name(r), "perplexity [95%]", "rise over full, paired"]
        rule += ["---", "---", "---"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(rule) + "|")
    for i, c0 in enumerate(replies[0]["configs"]):
        row = [row_name(c0)]
        for r in replies:
            s, c = r["summary"][i], r["configs"][i]
            ci = c.get("perplexity_ci95") or [None, None]
            p = s.get("paired")
            row += ["%.4f%s" % (s["mean"], ci_cell(s["ci95"])),
                    "%.1f [%s, %s]" % (c["perplexity"], cell(ci[0], 1), cell(ci[1], 1)),
                    "–" if not p else "%+.4f%s" % (-p["mean"], ci_cell(p["ci95"]))]
        print("| " + " | ".join(row) + " |")
    print()
    print("Rise: the configuration's bits per token minus the full model's, document by document (both score the "
          "same documents), its mean and 95% interval; positive is worse. Perplexity is 2 to the bits per token.")
    for r in replies:
        if "findings" in r:
            print()
            print("%s: %s" % (model_name(r), r["findings"]["text"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("replies", nargs="+")
    ap.add_argument("--title", default=None)
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--combined", metavar="PREFIX", default=None)
    args = ap.parse_args()
    replies = [load(p) for p in args.replies]
    if lower_is_better(replies[0]):
        if args.summary or args.combined:
            sys.exit("papa_table: --summary and --combined read probe sweeps; %s is a language model's" % args.replies[0])
        lm_table(args.replies, replies, args.title)
        return
    if args.combined:
        combined(args.combined, args.replies, replies)
        return
    if args.summary:
        summary(args.replies, replies)
        return
    keys = [key(c) for c in replies[0]["configs"]]
    labels = [row_name(c) for c in replies[0]["configs"]]
    for p, r in zip(args.replies, replies):
        if [key(c) for c in r["configs"]] != keys:
            sys.exit("papa_table: %s has other configurations than %s" % (p, args.replies[0]))
    task = replies[0]["task"]
    config = replies[0]["config"]
    print("%s: task `%s` (%s, %d train / %d validation examples), %d seeds, %s preset, probe %d epochs." % (
        args.title or "PAPA", task["id"], task["metric"], task["n_train"], task["n_validation"],
        replies[0]["summary"][0]["n"], config["preset"], config["probe"]["epochs"]))
    print()
    head, rule = ["configuration"], ["---"]
    paired = [any(s.get("paired") for s in r["summary"]) for r in replies]
    for r, has_paired in zip(replies, paired):
        name = model_name(r)
        head += ["%s score ± 95%%" % name, "drop"]
        rule += ["---", "---"]
        if has_paired:
            head.append("full − this, paired")
            rule.append("---")
        if any("mlm_accuracy" in c for c in r["configs"]):
            head.append("MLM top-1")
            rule.append("---")
    groups = group_means(replies[0], 0)
    if groups:
        for r in replies:
            name = model_name(r)
            for g in range(len(groups)):
                head.append("%s group %s" % (name, g if g < len(groups) - 1 else "%d+" % g))
                rule.append("---")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(rule) + "|")
    for i, label in enumerate(labels):
        row = [label]
        for r, has_paired in zip(replies, paired):
            s = r["summary"][i]
            row += ["%.4f%s" % (s["mean"], ci_cell(s["ci95"])), drop_cell(s["drop"])]
            if has_paired:
                row.append(paired_cell(s.get("paired")))
            if any("mlm_accuracy" in c for c in r["configs"]):
                row.append(cell(r["configs"][i].get("mlm_accuracy")))
        if groups:
            for r in replies:
                row += [cell(v) for v in (group_means(r, i) or [None] * len(groups))]
        print("| " + " | ".join(row) + " |")
    print()
    print("Drop: relative to the full model, (full - configuration) / full; positive is worse. "
          "The interval is Student's t over the seeds. Paired: the full model's score minus the configuration's, "
          "seed by seed (both train their probe with the same seed), its mean and 95% interval.")
    judged = [r for r in replies if "findings" in r]  # the engine's verdicts; older replies have none
    if judged:
        print()
        print("Verdicts: %s." % verdict_rule(judged))
    for r in judged:
        f = r["findings"]
        print()
        print("%s: %s" % (model_name(r), f["text"]))
        if "full_minus_constant" in f:
            d = seed_differences(r, f["all_constant"])
            print()
            print("%s, full − every head constant, seed by seed: %s." % (
                model_name(r), ", ".join("%+.4f" % x for x in d)))


if __name__ == "__main__":
    main()
