#!/usr/bin/env python3
"""spm_fixture.py [OUT_DIR]: writes a small SentencePiece model (spm.model, a ModelProto in protobuf wire format)
made here, for tests/c/test_spm.c and the spm_model fuzz harness's seeds (scripts/fuzz_corpus.py imports
spm_model). Its precompiled charsmap is a darts-clone double-array trie built here for a few rules, the layout
src/text/spm_charsmap.c reads: a uint32 trie size, the trie's units, then the NUL-terminated replacements.
Default OUT_DIR: tests/fixtures/tokenizers/spm_small."""
import os
import struct
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return varint(num << 3 | 2) + varint(len(data)) + data


def field_float(num, value):
    return varint(num << 3 | 5) + struct.pack("<f", value)


def charsmap(rules):
    """rules: {bytes key: bytes replacement}. Each trie node gets its own 256-unit block, so a child with label c
    of a node whose block starts at b sits at b ^ c = b + c and the node's value (a leaf unit) at b."""
    strings = bytearray()
    values = {}
    for key, repl in sorted(rules.items()):
        values[key] = len(strings)
        strings += repl + b"\0"
    nodes = {b""}
    for key in rules:
        nodes.update(key[:i] for i in range(1, len(key) + 1))
    block = {node: 256 * (i + 1) for i, node in enumerate(sorted(nodes))}
    units = [0] * (256 * (len(block) + 1))
    units[0] = (block[b""] << 10)  # the root: offset to its block (position 0 ^ offset)
    for node in sorted(nodes):
        if node:
            parent, label = node[:-1], node[-1]
            pos = block[parent] + label
            offset = pos ^ block[node]
            assert offset < 1 << 21
            units[pos] = offset << 10 | (1 << 8 if node in rules else 0) | label
        if node in rules:
            units[block[node]] = values[node] | 1 << 31  # a leaf: bit 31 keeps it from matching any label
    trie = b"".join(struct.pack("<I", u) for u in units)
    return struct.pack("<I", len(trie)) + trie + bytes(strings)


def spm_model(pieces, rules=None, byte_fallback=True, flags=(1, 1, 1), model_type=1):
    """pieces: [(piece, score, type)]; flags: add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
    model_type: UNIGRAM 1, BPE 2."""
    out = bytearray()
    for piece, score, kind in pieces:
        out += field_bytes(1, field_bytes(1, piece) + field_float(2, score) + field_varint(3, kind))
    out += field_bytes(2, field_varint(3, model_type) + field_varint(35, 1 if byte_fallback else 0) + field_varint(40, 3))
    norm = field_bytes(1, "nmt_nfkc")
    if rules:
        norm += field_bytes(2, charsmap(rules))
    norm += field_varint(3, flags[0]) + field_varint(4, flags[1]) + field_varint(5, flags[2])
    out += field_bytes(3, norm)
    return bytes(out)


# A vocabulary in the shape of DeBERTa-v3's: [PAD] [CLS] [SEP] [UNK], the 256 byte pieces, then words.
WORDS = [("\u2581the", -3.0), ("\u2581cat", -5.0), ("\u2581c", -6.0), ("at", -6.5), ("\u2581", -4.0),
         ("\u2581sat", -5.5), ("\u2581on", -4.5), ("\u2581mat", -6.0), (".", -3.5), ("a", -7.0), ("t", -7.0),
         ("c", -7.0), ("s", -7.0), ("m", -7.0), ("h", -7.0), ("e", -7.0), ("\u2581A", -6.0), ("\u2581ca", -5.2),
         ("\u2581cafe", -8.0), ("\u2581caf\u00e9", -7.0), ("\u00e9", -8.0), ("f", -8.0), ("...", -6.0)]
# nmt_nfkc-like rules: a full-width letter, a ligature, an ellipsis, a zero-width space removed, a no-break
# space to a space, e + combining acute composed
RULES = {"\uff21".encode(): b"A", "\ufb01".encode(): b"fi", "\u2026".encode(): b"...", "\u200b".encode(): b"",
         "\u00a0".encode(): b" ", "e\u0301".encode(): "\u00e9".encode()}


def small_pieces():
    pieces = [("[PAD]", 0.0, CONTROL), ("[CLS]", 0.0, CONTROL), ("[SEP]", 0.0, CONTROL), ("[UNK]", 0.0, UNKNOWN)]
    pieces += [("<0x%02X>" % b, 0.0, BYTE) for b in range(256)]
    pieces += [(w, s, NORMAL) for w, s in WORDS]
    return pieces


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fixtures", "tokenizers", "spm_small")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "spm.model"), "wb") as f:
        f.write(spm_model(small_pieces(), RULES))
    with open(os.path.join(out, "added_tokens.json"), "w") as f:
        f.write('{"[MASK]": %d}\n' % len(small_pieces()))


if __name__ == "__main__":
    main()
