#!/usr/bin/python3
"""agreement_table.py: Markdown tables of `attnlab agreement --json` replies (the head_agreement op,
docs/agreement.md), for the model cards and the README.

Per reply (one model and task): the Spearman matrix over all heads, the overlap of each measure's k least
important heads, and the reply's own finding. With --summary: one row per reply, lambda's rho against every
other measure read in the direction of importance (docs/agreement.md, "The finding"), and the strongest
agreement among the other measures.

With --card README.md (one model's replies): writes the card's "Which heads matter" section into that model
card, before "## Limits" (replacing the section if it is there), with --note FILE's Markdown at its end;
scripts/model_card.py --agreement DIR writes the same section when it writes a whole card.

With --refresh-card README.md: rewrites each "Finding:" line of that card's "Which heads matter" section with the
engine's sentence for the tables printed above it (`attnlab findings`, the rule of docs/findings.md, on the card's
two-decimal ρ and overlaps), so a card can never read its numbers differently from the engine. --check FILE
--cards CARD... exits 1 when a "Finding:" line of a card, or a "Finding (MODEL, `TASK`):" line of FILE (the
README), is not the engine's sentence for that card's tables.

Usage: /usr/bin/python3 scripts/agreement_table.py REPLY.json [REPLY2.json ...] [--summary | --card README.md [--note FILE]]
       /usr/bin/python3 scripts/agreement_table.py --refresh-card models/NAME/README.md
       /usr/bin/python3 scripts/agreement_table.py --check README.md --cards models/*/README.md"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SHORT = {"lambda": "λ", "gradient": "grad", "input_dependence": "JS", "confidence": "conf", "entropy": "ent",
         "sink_mass": "sink", "norm_mass": "norm", "previous_token": "prev", "induction": "ind",
         "duplicate_token": "dup"}


def source(r):
    """What a reply was measured on: its task, or a causal model's scored corpus (docs/agreement.md)."""
    c = r["config"]
    return ("task `%s`" % c["task"]) if "task" in c else ("corpus `%s`" % c["corpus_name"])


# How the engine names each measure and reads its direction (a head_agreement reply's measures[].words and
# .least, src/api/op_agreement.c), for replies rebuilt from a card's tables.
WORDS = {"lambda": "PAPA's λ", "gradient": "gradient importance", "input_dependence": "input dependence",
         "confidence": "confidence", "entropy": "entropy", "sink_mass": "sink mass", "norm_mass": "norm mass"}
HIGH_IS_LEAST = {"entropy", "sink_mass"}


def cli():
    return os.path.join(os.environ.get("AL_BUILD_DIR", "build/native"), "attnlab")


def engine_findings(reply):
    """The engine's rule on a reply (or a reply rebuilt from tables): `attnlab findings`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(reply, f)
        path = f.name
    try:
        out = subprocess.run([cli(), "findings", path], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)


def card_sections(text):
    """Each "### MODEL, task `TASK`" section of a card as a reply rebuilt from its tables:
    [(model, task, reply, start, end)], start/end the section's character span."""
    heads = list(re.finditer(r"^### (\S+), task `([^`]+)`\n", text, re.M))
    short = {v: k for k, v in SHORT.items()}
    out = []
    for n, h in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(text)
        stop = re.search(r"^(## |What the tables show|The findings above)", text[h.end():], re.M)
        if stop:
            end = min(end, h.end() + stop.start())
        body = text[h.end():end]
        n_heads = int(re.search(r"^(\d+) heads;", body, re.M).group(1))
        tables = {}
        for name in ("ρ", "overlap"):
            m = re.search(r"^\| %s \| (.*) \|\n\|[-|]+\n((?:\|.*\n)+)" % name, body, re.M)
            ids = [short[c.strip()] for c in m.group(1).split("|")]
            rows = [[c.strip() for c in line.strip().strip("|").split("|")][1:] for line in m.group(2).splitlines()]
            tables[name] = (ids, rows)
        ids = tables["ρ"][0]
        k = int(re.search(r"each measure's (\d+) least important", body).group(1))
        reply = {"measures": [{"id": i, "words": WORDS[i], "least": "high" if i in HIGH_IS_LEAST else "low"} for i in ids],
                 "shape": {"n_layers": 1, "n_heads": n_heads},
                 "spearman": [[None if c == "–" else float(c) for c in row] for row in tables["ρ"][1]],
                 "least": {"k": k, "overlap": [[int(c) for c in row] for row in tables["overlap"][1]]}}
        out.append((h.group(1), h.group(2), reply, h.start(), end))
    return out


NOTE = ("The findings above are the engine's (`attnlab findings`, the rule of docs/findings.md: permutation p-values, "
        "Holm across the measures compared, overlaps against chance), rerun on these tables' two-decimal ρ by "
        "`scripts/agreement_table.py --refresh-card`; `tests/js/findings_prose.test.mjs` checks them.")


def refresh_card(path):
    with open(path) as f:
        text = f.read()
    for model, task, reply, start, end in reversed(card_sections(text)):
        body = text[start:end]
        sentence = engine_findings(reply)["finding"]
        body = re.sub(r"^Finding: .*$", lambda _: "Finding: " + sentence, body, count=1, flags=re.M)
        text = text[:start] + body + text[end:]
    # the hand-written reading of the tables gives way to the engine's sentences
    m = re.search(r"^What the tables show[^\n]*\n\n(?:(?:- |  ).*\n)+", text, re.M)
    if m:
        text = text[:m.start()] + NOTE + "\n" + text[m.end():]
    with open(path, "w") as f:
        f.write(text)


def check(path, cards):
    sentences = {}
    bad = []
    for card in cards:
        with open(card) as f:
            text = f.read()
        for model, task, reply, start, end in card_sections(text):
            want = engine_findings(reply)["finding"]
            sentences[(model, task)] = want
            got = re.search(r"^Finding: (.*)$", text[start:end], re.M)
            if not got or got.group(1) != want:
                bad.append("%s, %s %s: the card's finding is not the engine's:\n  %s\n  %s" %
                           (card, model, task, got.group(1) if got else "(none)", want))
    if path:
        with open(path) as f:
            for m in re.finditer(r"^Finding \((\S+), `([^`]+)`\): (.*)$", f.read(), re.M):
                want = sentences.get((m.group(1), m.group(2)))
                if want != m.group(3):
                    bad.append("%s, %s %s: not the engine's:\n  %s\n  %s" % (path, m.group(1), m.group(2), m.group(3), want))
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


def load(path):
    with open(path) as f:
        r = json.load(f)
    if "spearman" not in r or "measures" not in r:
        sys.exit("agreement_table: %s is not a reply of the head_agreement op" % path)
    return r


def fmt(v):
    return "–" if v is None else "%.2f" % v


def sign(m):
    return 1 if m["least"] == "low" else -1


def reply_tables(r):
    ids = [m["id"] for m in r["measures"]]
    c = r["config"]
    n_heads = r["shape"]["n_layers"] * r["shape"]["n_heads"]
    if "task" in c:
        what = ("%d heads; λ, constants and probe from %d training examples (gradient over %d), statistics and norm "
                "mass over %d validation examples, L = %d." % (n_heads, r["n_train"], r["n_examples"], r["n_validation"],
                                                               c["L"]))
    else:
        what = ("%d heads; λ, constants and gradient from %d windows of `%s` (gradient over %d), statistics and norm "
                "mass over %d scored windows, L = %d." % (n_heads, r["n_train"], c["constants_corpus_name"],
                                                          r["n_examples"], r["n_validation"], c["L"]))
    out = ["### %s, %s" % (r["model"].rstrip("/").split("/")[-1], source(r)), "", what, ""]
    head = "| ρ | " + " | ".join(SHORT[i] for i in ids) + " |"
    out += [head, "|---" * (len(ids) + 1) + "|"]
    for i, row in zip(ids, r["spearman"]):
        out.append("| %s | " % SHORT[i] + " | ".join(fmt(v) for v in row) + " |")
    k = r["least"]["k"]
    out += ["", "Shared heads among each measure's %d least important (λ, grad, JS, conf, norm: the lowest; ent, "
            "sink: the highest):" % k, "", "| overlap | " + " | ".join(SHORT[i] for i in ids) + " |",
            "|---" * (len(ids) + 1) + "|"]
    for i, row in zip(ids, r["least"]["overlap"]):
        out.append("| %s | " % SHORT[i] + " | ".join(str(v) for v in row) + " |")
    out += ["", "Finding: " + r["finding"], ""]
    return out


def summary(replies):
    ids = [m["id"] for m in replies[0]["measures"]]
    out = ["| model | task | " + " | ".join("λ vs %s" % SHORT[i] for i in ids[1:]) +
           " | λ's least-k shared with grad | strongest pair besides λ |",
           "|---|---|" + "---|" * (len(ids) - 1) + "---|---|"]
    for r in replies:
        ms = r["measures"]
        rho = r["spearman"]
        cells = []
        for j in range(1, len(ids)):
            v = rho[0][j]
            cells.append("–" if v is None else "%+.2f" % (v * sign(ms[0]) * sign(ms[j])))
        best, pair = None, ""
        for a in range(1, len(ids)):
            for b in range(a + 1, len(ids)):
                v = rho[a][b]
                if v is None:
                    continue
                v = v * sign(ms[a]) * sign(ms[b])
                if best is None or v > best:
                    best, pair = v, "%s–%s %+.2f" % (SHORT[ids[a]], SHORT[ids[b]], v)
        ov = r["least"]["overlap"][0][1]
        c = r["config"]
        name = c["task"] if "task" in c else c["corpus_name"] + " (corpus)"
        out.append("| %s | %s | " % (r["model"].rstrip("/").split("/")[-1], name) + " | ".join(cells) +
                   " | %d of %d | %s |" % (ov, r["least"]["k"], pair))
    out += ["", "ρ read in the direction of importance (entropy and sink mass sign-flipped: for them a higher value "
            "means a less important head), so a positive entry means the measure ranks heads as λ does."]
    return out


def card_section(replies, note=None):
    """The model card's section, as lines: what was run, one line per task of lambda against the others, the
    tables of each task, the note."""
    c = replies[0]["config"]
    out = ["## Which heads matter", "",
           "Whether PAPA's learned λ, gradient importance, input dependence, confidence, entropy, sink mass and norm",
           "mass agree on which heads matter (docs/agreement.md): `scripts/agreement_models.sh` runs",
           "`attnlab agreement MODEL --task TASK --max-train %d --max-validation %d --max-examples %d` (quick preset,"
           % (c["max_train"], c["max_validation"], c["max_examples"]),
           "one thread) per built-in task; Spearman's ρ over all heads, and how many of each measure's least",
           "important heads two measures share.", ""]
    out += summary(replies) + [""]
    for r in replies:
        out += reply_tables(r)
    if note:
        with open(note) as f:
            out += [f.read().strip(), ""]
    return out


def write_card(path, lines):
    with open(path) as f:
        text = f.read()
    section = "\n".join(lines).rstrip() + "\n\n"
    start = text.find("## Which heads matter")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
    else:
        at = text.find("## Limits")
        text = text[:at] + section + text[at:] if at >= 0 else text.rstrip() + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("replies", nargs="*")
    ap.add_argument("--refresh-card", default=None)
    ap.add_argument("--check", default=None)
    ap.add_argument("--cards", nargs="*", default=[])
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--card", default=None)
    ap.add_argument("--note", default=None)
    a = ap.parse_args()
    if a.refresh_card:
        refresh_card(a.refresh_card)
        return
    if a.check or a.cards:
        sys.exit(check(a.check, a.cards))
    replies = [load(p) for p in a.replies]
    if a.card:
        write_card(a.card, card_section(replies, a.note))
        return
    lines = summary(replies) if a.summary else [x for r in replies for x in reply_tables(r)]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
