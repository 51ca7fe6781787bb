#!/usr/bin/env python3
"""build_tasks.py: the built-in labelled tasks of the PAPA probing experiment, from packages only.

Reads what scripts/build_corpus.py and the Debian packages provide:
  build/data/brown_pos.jsonl   Brown corpus sentences with Brown and universal tags, split by document
  /usr/share/wordnet           WordNet 3.0 (Debian wordnet-base): data.* and index.* files

Writes build/data/tasks/<id>.jsonl in attnlab's task format (docs/tasks.md): a header object
{"task", "kind", "labels", "metric", "sha256", ...}, then one example per line with "split". Extra keys
of an example ("doc", "verb", "synset" ...) say where it came from, so a reader can check its label.

  pos         universal part of speech per word (12 tags), token task, token_accuracy
  agreement   subject-verb number: the verb replaced by [MASK], singular/plural, group = attractors
  definition  WordNet (lemma, definition) pairs: does the definition define the lemma?
  order       two consecutive Brown sentences, in their order or swapped (sentence order)

Every choice is seeded (an MD5 of a fixed seed and the item's name, so the order never depends on
Python's random module or hash seed): same inputs, same bytes. "sha256" is the content hash that
src/methods/tasks/task_hash.c computes too (docs/tasks.md, "Content hash"); the C loader checks it.

Usage: python3 scripts/build_tasks.py [--data build/data] [--wordnet /usr/share/wordnet]
"""
import argparse
import collections
import hashlib
import json
import os
import re
import sys

SEED = "attnlab-tasks-1"

POS_TAGS = ["ADJ", "ADP", "ADV", "CONJ", "DET", "NOUN", "NUM", "PRON", "PRT", "PUNCT", "VERB", "X"]
POS_SIZES = {"train": 3000, "validation": 1000}
POS_MIN_WORDS, POS_MAX_WORDS = 5, 40

AGR_SIZES = {"train": 3000, "validation": 800}   # validation: the held-out documents give 402 plural
AGR_MAX_WORDS = 50

DEF_SIZES = {"train": 3000, "validation": 1000}
DEF_VALIDATION_PERCENT = 25
DEF_MIN_WORDS, DEF_MAX_WORDS = 3, 25

ORDER_RUNS = {"train": 300, "validation": 100}   # runs of ORDER_RUN_LEN sentences: 10 examples each
ORDER_RUN_LEN = 6
ORDER_MIN_WORDS, ORDER_MAX_WORDS = 5, 30

CORPUS_SPLIT = {"train": "train", "heldout": "validation"}


def key(*parts):
    """A seeded sort key: the MD5 of the seed and the item's name."""
    return hashlib.md5(("\x1f".join([SEED] + [str(p) for p in parts])).encode("utf-8")).hexdigest()


def bucket(name):
    return int(hashlib.md5(name.encode("utf-8")).hexdigest()[:8], 16) % 100


# ---------------------------------------------------------------- content hash (docs/tasks.md)

def content_hash(kind, labels, examples):
    """SHA-256 of the canonical serialisation; must agree with src/methods/tasks/task_hash.c."""
    h = hashlib.sha256()

    def s(text):
        b = text.encode("utf-8")
        h.update(b"%d:" % len(b) + b + b"\n")

    h.update(b"attnlab-task/1\n")
    h.update(b"kind " + kind.encode() + b"\n")
    h.update(b"labels %d\n" % len(labels))
    for name in labels:
        s(name)
    index = {name: i for i, name in enumerate(labels)}
    for split in ("train", "validation"):
        rows = [e for e in examples if e["split"] == split]
        h.update(b"split " + split.encode() + b" %d\n" % len(rows))
        for e in rows:
            if kind == "sequence":
                s(e["text"])
                if e.get("text_pair") is None:
                    h.update(b"-\n")
                else:
                    s(e["text_pair"])
                h.update(b"label %d\n" % index[e["label"]])
            else:
                h.update(b"words %d\n" % len(e["words"]))
                for w, t in zip(e["words"], e["word_labels"]):
                    s(w)
                    h.update(b"label %d\n" % (index[t] if t is not None else -1))  # null: context only
            h.update(b"group %d\n" % e.get("group", -1))
    return h.hexdigest()


def write_task(path, task, kind, labels, metric, description, examples):
    examples = sorted(examples, key=lambda e: 0 if e["split"] == "train" else 1)   # stable
    header = {"task": task, "kind": kind, "labels": labels, "metric": metric,
              "sha256": content_hash(kind, labels, examples), "description": description,
              "counts": {sp: sum(e["split"] == sp for e in examples) for sp in ("train", "validation")}}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for e in examples:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return header


def read_brown(path):
    """brown_pos.jsonl rows with their index within the document ("sentence")."""
    if not os.path.isfile(path):
        sys.exit("build_tasks: %s is missing (run scripts/build_corpus.py first)" % path)
    per_doc = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            row["sentence"] = per_doc[row["doc"]]
            per_doc[row["doc"]] += 1
            yield row


# ---------------------------------------------------------------- pos

def build_pos(rows):
    pools = {"train": [], "validation": []}
    for r in rows:
        if POS_MIN_WORDS <= len(r["words"]) <= POS_MAX_WORDS:
            pools[CORPUS_SPLIT[r["split"]]].append(r)
    out = []
    for split, pool in pools.items():
        chosen = sorted(pool, key=lambda r: key("pos", r["doc"], r["sentence"]))[:POS_SIZES[split]]
        if len(chosen) < POS_SIZES[split]:
            sys.exit("build_tasks: pos: only %d %s sentences" % (len(chosen), split))
        chosen.sort(key=lambda r: (r["doc"], r["sentence"]))
        for r in chosen:
            assert all(t in POS_TAGS for t in r["tags"]), r["tags"]
            out.append({"split": split, "words": r["words"], "word_labels": r["tags"],
                        "doc": r["doc"], "sentence": r["sentence"], "brown_tags": r["brown_tags"]})
    return out


# ---------------------------------------------------------------- agreement

# Brown tags (docs/tasks.md, "agreement"). Verbs whose number the tag marks: present tense of every
# verb, and be's past (was/were); negated contractions (isn't: bez*) count as their verb.
VERB_SG = {"vbz", "bez", "hvz", "doz", "bedz", "bez*", "hvz*", "doz*", "bedz*"}
VERB_PL = {"vb", "ber", "hv", "do", "bed", "ber*", "hv*", "do*", "bed*"}
NOUN_SG = {"nn", "np", "nn-tl", "np-tl"}
NOUN_PL = {"nns", "nps", "nns-tl", "nps-tl"}
# Words that may come before a noun inside a noun phrase: articles, determiners, numbers, adjectives,
# possessives, qualifiers (very), participles used as adjectives (the united states).
PRENOMINAL = {"at", "ap", "ap$", "abn", "dt", "dti", "dts", "dtx", "cd", "od", "jj", "jjr", "jjs", "jjt",
              "jj-tl", "pp$", "nn$", "nns$", "np$", "nps$", "nn$-tl", "np$-tl", "ql", "vbn", "vbg"}
# A clause can start at the sentence's start or right after one of these tags: subordinating
# conjunction (that, because), wh-adverb (when), coordinating conjunction, ; : --
CLAUSE_START = {"cs", "wrb", "cc", ";", ":", "--"}


def noun_run(tags, i):
    """End of the run of nouns starting at i (== i when tags[i] is not a noun)."""
    while i < len(tags) and tags[i] in NOUN_SG | NOUN_PL:
        i += 1
    return i


def find_agreement(tags):
    """The first (subject, verb, attractors) of a sentence by the rule of docs/tasks.md:
    clause start, [opening quote], prenominal words, a run of nouns (its last noun is the subject
    head), then any number of prepositional phrases (IN, prenominal words, a run of nouns), then
    adverbs (RB), then a number-marked verb. Subject and verb must agree in number. Attractors are
    the heads (last nouns) of the prepositional phrases' noun runs whose number differs from the
    subject's: in "the board of election commissioners" only "commissioners" is a head."""
    starts = [0] + [i + 1 for i, t in enumerate(tags) if t in CLAUSE_START]
    for a in starts:
        i = a
        while i < len(tags) and tags[i] == "``":
            i += 1
        while i < len(tags) and tags[i] in PRENOMINAL:
            i += 1
        j = noun_run(tags, i)
        if j == i:
            continue
        subject = j - 1
        plural = tags[subject] in NOUN_PL
        attractors, k, ok = 0, j, True
        while k < len(tags) and tags[k] == "in":
            k += 1
            while k < len(tags) and tags[k] in PRENOMINAL:
                k += 1
            m = noun_run(tags, k)
            if m == k:
                ok = False
                break
            attractors += (tags[m - 1] in NOUN_PL) != plural   # the phrase's head: its last noun
            k = m
        if not ok:
            continue
        while k < len(tags) and tags[k] == "rb":
            k += 1
        if k >= len(tags) or tags[k] not in VERB_SG | VERB_PL:
            continue
        if (tags[k] in VERB_PL) != plural:
            continue   # no agreement by this rule: a collective noun, a subjunctive, a wrong subject
        return subject, k, attractors
    return None


def build_agreement(rows):
    pools = {(sp, lab): [] for sp in ("train", "validation") for lab in ("singular", "plural")}
    for r in rows:
        tags, words = r["brown_tags"], r["words"]
        if len(words) > AGR_MAX_WORDS or any(t.endswith("-hl") for t in tags):
            continue   # headlines are not sentences
        found = find_agreement(tags)
        if not found:
            continue
        subject, verb, attractors = found
        label = "plural" if tags[verb] in VERB_PL else "singular"
        # a token task labelled at the masked verb only: the probe reads the verb's position, so the
        # answer has to come from the context (a pooled sequence probe would read a bag of words)
        masked = words[:verb] + ["[MASK]"] + words[verb + 1:]
        word_labels = [None] * len(words)
        word_labels[verb] = label
        pools[(CORPUS_SPLIT[r["split"]], label)].append({
            "words": masked, "word_labels": word_labels, "group": attractors,
            "doc": r["doc"], "sentence": r["sentence"], "verb": words[verb], "verb_tag": tags[verb],
            "verb_index": verb, "subject": words[subject], "subject_tag": tags[subject],
            "subject_index": subject})
    out = []
    for (split, label), pool in pools.items():
        want = AGR_SIZES[split] // 2
        # every example with attractors first (they are rare and the point of the grouping), then a
        # seeded sample of the others
        pool.sort(key=lambda e: (e["group"] == 0, key("agreement", e["doc"], e["sentence"])))
        if len(pool) < want:
            sys.exit("build_tasks: agreement: only %d %s %s sentences" % (len(pool), split, label))
        for e in pool[:want]:
            e["split"] = split
            out.append(e)
    out.sort(key=lambda e: (e["split"] != "train", e["doc"], e["sentence"]))
    return [dict([("split", e.pop("split"))] + list(e.items())) for e in out]


# ---------------------------------------------------------------- definition (WordNet)

WN_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
LEMMA = re.compile(r"^[a-z]{3,}$")


def read_wordnet(directory):
    """synsets[(pos, offset)] = (members as written, definition); tagged = [(pos, lemma, offset)] for
    the senses that the semantic concordances tagged at least once (index.* tagsense_cnt)."""
    synsets, tagged = {}, []
    for name, pos in WN_POS.items():
        with open(os.path.join(directory, "data." + name), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" ") or "|" not in line:
                    continue
                head, gloss = line.split("|", 1)
                fields = head.split()
                offset, n_words = fields[0], int(fields[3], 16)
                members = [re.sub(r"\(.*\)$", "", fields[4 + 2 * i]) for i in range(n_words)]
                definition = " ".join(gloss.split('"', 1)[0].split()).rstrip("; ").strip()
                synsets[(pos, offset)] = (members, definition)
        with open(os.path.join(directory, "index." + name), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" "):
                    continue
                fields = line.split()
                lemma, n_senses, n_ptr = fields[0], int(fields[2]), int(fields[3])
                n_tagged = int(fields[5 + n_ptr])
                offsets = fields[6 + n_ptr:6 + n_ptr + n_senses]
                for off in offsets[:n_tagged]:
                    tagged.append((pos, lemma, off))
    return synsets, tagged


def mentions(lemma, definition):
    """Does the definition contain the lemma or a word sharing its stem (docs/tasks.md)?"""
    stem = lemma[:min(len(lemma), max(4, len(lemma) - 2))]
    for w in re.findall(r"[a-z]+", definition.lower()):
        if lemma in w or w.startswith(stem):
            return True
    return False


def build_definition(directory):
    synsets, tagged = read_wordnet(directory)
    pools = {"train": [], "validation": []}
    for pos, lemma, off in tagged:
        if not LEMMA.match(lemma):
            continue
        members, definition = synsets[(pos, off)]
        if lemma not in members:
            continue   # a proper noun (Birmingham) or a capitalised form: common words only
        if not (DEF_MIN_WORDS <= len(definition.split()) <= DEF_MAX_WORDS) or mentions(lemma, definition):
            continue
        # lemmas and synsets are split apart: no validation lemma and no validation definition is
        # ever seen in training
        lemma_val = bucket("wordnet-lemma:" + lemma) < DEF_VALIDATION_PERCENT
        synset_val = bucket("wordnet-synset:%s%s" % (pos, off)) < DEF_VALIDATION_PERCENT
        if lemma_val != synset_val:
            continue
        pools["validation" if lemma_val else "train"].append((pos, lemma, off))
    out = []
    for split, pool in pools.items():
        # one sense per lemma and one lemma per synset, chosen in seeded order
        pool.sort(key=lambda p: key("definition", *p))
        seen_lemma, seen_synset, pairs = set(), set(), []
        for pos, lemma, off in pool:
            if lemma in seen_lemma or (pos, off) in seen_synset:
                continue
            seen_lemma.add(lemma)
            seen_synset.add((pos, off))
            pairs.append((pos, lemma, off))
        n_pos = DEF_SIZES[split] // 2
        if len(pairs) < n_pos:
            sys.exit("build_tasks: definition: only %d %s pairs" % (len(pairs), split))
        pairs = pairs[:n_pos]
        # negatives: each lemma paired once more with the definition of another chosen synset of the
        # same part of speech (a cyclic shift of a seeded order, redrawn until the lemma is neither a
        # member of that synset nor mentioned in its definition); so every lemma and every definition
        # occurs exactly once as a match and once as a mismatch
        by_pos = collections.defaultdict(list)
        for p in pairs:
            by_pos[p[0]].append(p)
        negatives = {}
        for pos, group in sorted(by_pos.items()):
            for attempt in range(1000):
                order = sorted(group, key=lambda p: key("definition-neg", attempt, *p))
                shifted = order[1:] + order[:1]
                ok = all(lemma not in [m.lower() for m in synsets[(pos, o2)][0]] and not mentions(lemma, synsets[(pos, o2)][1])
                         for (_, lemma, _), (_, _, o2) in zip(order, shifted))
                if ok and len(group) > 1:
                    for (_, lemma, _), (_, _, o2) in zip(order, shifted):
                        negatives[(pos, lemma)] = o2
                    break
            else:
                sys.exit("build_tasks: definition: no valid negative pairing for part of speech %s" % pos)
        rows = []
        for pos, lemma, off in pairs:
            for label, gloss_off in (("match", off), ("mismatch", negatives[(pos, lemma)])):
                members, definition = synsets[(pos, gloss_off)]
                rows.append({"split": split, "text": lemma, "text_pair": definition, "label": label,
                             "pos": pos, "lemma_synset": off, "definition_synset": gloss_off,
                             "definition_members": members})
        rows.sort(key=lambda e: key("definition-order", e["text"], e["label"]))
        out.extend(rows)
    return out


# ---------------------------------------------------------------- order (sentence order)

def build_order(rows):
    """Runs of ORDER_RUN_LEN consecutive sentences of one Brown document (each 5 to 30 words, no
    headline); every consecutive pair (s_i, s_i+1) of a run gives two examples: (s_i, s_i+1) in_order
    and (s_i+1, s_i) swapped. So every pair occurs once per label, and every sentence inside a run
    occurs as segment A once per label and as segment B once per label (docs/tasks.md, "order")."""
    docs = collections.defaultdict(list)
    for r in rows:
        docs[(CORPUS_SPLIT[r["split"]], r["doc"])].append(r)

    def eligible(r):
        return (ORDER_MIN_WORDS <= len(r["words"]) <= ORDER_MAX_WORDS
                and not any(t.endswith("-hl") for t in r["brown_tags"]))

    pools = {"train": [], "validation": []}
    for (split, doc), sents in sorted(docs.items()):
        # non-overlapping windows of eligible consecutive sentences, scanned in document order
        windows, i = [], 0
        while i + ORDER_RUN_LEN <= len(sents):
            run = sents[i:i + ORDER_RUN_LEN]
            if all(eligible(r) for r in run):
                windows.append(run)
                i += ORDER_RUN_LEN
            else:
                i += 1
        # a document's windows in seeded order; rank k = its k-th window, so every document gives one
        # run before any gives a second
        windows.sort(key=lambda run: key("order-window", doc, run[0]["sentence"]))
        for rank, run in enumerate(windows):
            pools[split].append((rank, key("order-run", doc, run[0]["sentence"]), doc, run))
    out = []
    for split, pool in pools.items():
        pool.sort(key=lambda p: (p[0], p[1]))
        if len(pool) < ORDER_RUNS[split]:
            sys.exit("build_tasks: order: only %d %s runs" % (len(pool), split))
        chosen = pool[:ORDER_RUNS[split]]
        # written run by run (runs in seeded order, a run's examples in seeded order): the first 10k
        # examples of a split are k whole runs, so a prefix (max_train) keeps every balance above
        chosen.sort(key=lambda p: p[1])
        for _, run_key, doc, run in chosen:
            rows_run = []
            for a, b in zip(run, run[1:]):
                for label, first, second in (("in_order", a, b), ("swapped", b, a)):
                    rows_run.append({"split": split, "text": " ".join(first["words"]),
                                     "text_pair": " ".join(second["words"]), "label": label, "doc": doc,
                                     "text_sentence": first["sentence"], "pair_sentence": second["sentence"],
                                     "run": run[0]["sentence"]})
            rows_run.sort(key=lambda e: key("order-example", doc, e["text_sentence"], e["pair_sentence"]))
            out.extend(rows_run)
    return out


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/data")
    ap.add_argument("--out", default=None, help="default: <data>/tasks")
    ap.add_argument("--wordnet", default="/usr/share/wordnet")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(args.data, "tasks")
    os.makedirs(out_dir, exist_ok=True)
    rows = list(read_brown(os.path.join(args.data, "brown_pos.jsonl")))

    tasks = [
        ("pos", "token", POS_TAGS, "token_accuracy",
         "Universal part of speech (Petrov et al. 2012, '.' named PUNCT) of every word of Brown corpus "
         "sentences; validation from held-out Brown documents.", build_pos(rows)),
        ("agreement", "token", ["singular", "plural"], "token_accuracy",
         "Brown sentences with a number-marked verb replaced by [MASK], labelled at the [MASK] only: is the "
         "verb singular or plural? group: "
         "nouns of the other number between the subject and the verb.", build_agreement(rows)),
        ("definition", "sequence", ["mismatch", "match"], "accuracy",
         "WordNet 3.0 (lemma, definition) pairs: does the definition define a sense of the lemma? Every "
         "lemma and definition occurs once matched and once mismatched.", build_definition(args.wordnet)),
        ("order", "sequence", ["in_order", "swapped"], "accuracy",
         "Two consecutive sentences of a Brown document, in their order or swapped. Every pair occurs once "
         "per label; validation from held-out Brown documents.", build_order(rows)),
    ]
    for task, kind, labels, metric, description, examples in tasks:
        header = write_task(os.path.join(out_dir, task + ".jsonl"), task, kind, labels, metric, description,
                            examples)
        print("tasks: %-10s train=%d validation=%d sha256=%s" % (task, header["counts"]["train"],
              header["counts"]["validation"], header["sha256"]), file=sys.stderr)


if __name__ == "__main__":
    main()
