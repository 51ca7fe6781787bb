/* fuzz_encode.c: arbitrary bytes through al_tokenizer_encode and al_tokenizer_encode_words with four fixed
 * tokenizers (a small WordPiece vocabulary, the byte-level BPE of tests/fixtures/tokenizers/bpe_small with GPT-2's
 * and with Qwen2's pre-tokenizer pattern, and a small SentencePiece BPE tokenizer.json written here).
 * Byte 0 picks the tokenizer (bits 0 and 6) and options, byte 1 the max_length; the rest is the text, a NUL byte, the pair
 * (or, for words, NUL-separated words). Promises: invalid UTF-8 (by an independent strict decoder) is refused
 * naming "invalid UTF-8" and valid text never is; otherwise every promise of fuzz_check_encoding; the same
 * call gives the same encoding; with add_special_tokens the sequence tokens are those of the plain encoding
 * (the template only adds); padding only appends pad entries. */
#include "fuzz_tokenizer_options.h"

static al_tokenizer *tokenizers[4];

/* Llama's shape in small: <unk> <s> </s>, the 256 byte pieces, "▁", the letters, and merges toward a few words;
 * normalizer Prepend("▁") + Replace(" ", "▁"), byte fallback, <s> $A. */
static char *spm_bpe_json(void) {
    static const char *const merges[] = {"▁ t", "h e", "▁t he", "a t", "▁ c", "▁c at", "▁ s", "▁s at", "o n", "▁ on",
                                         "▁ m", "▁m at", "e r", "i n", "▁ a"};
    size_t cap = 32768, n = 0;
    char *j = malloc(cap);
    FUZZ_REQUIRE(j != NULL, "out of memory");
    n += (size_t)snprintf(j + n, cap - n,
                          "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, {\"id\": 1, "
                          "\"content\": \"<s>\", \"special\": true}, {\"id\": 2, \"content\": \"</s>\", \"special\": true}], "
                          "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": "
                          "\"\u2581\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\u2581\"}]}, "
                          "\"pre_tokenizer\": null, \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": "
                          "[{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], "
                          "\"pair\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", "
                          "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], \"special_tokens\": {\"<s>\": "
                          "{\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}}, \"model\": {\"type\": \"BPE\", "
                          "\"unk_token\": \"<unk>\", \"byte_fallback\": true, \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2");
    int id = 3;
    for (int b = 0; b < 256; b++) n += (size_t)snprintf(j + n, cap - n, ", \"<0x%02X>\": %d", b, id++);
    n += (size_t)snprintf(j + n, cap - n, ", \"\u2581\": %d", id++);
    for (char c = 'a'; c <= 'z'; c++) n += (size_t)snprintf(j + n, cap - n, ", \"%c\": %d", c, id++);
    for (size_t m = 0; m < sizeof merges / sizeof merges[0]; m++) { /* each merge's result */
        n += (size_t)snprintf(j + n, cap - n, ", \"");
        for (const char *p = merges[m]; *p; p++)
            if (*p != ' ') j[n++] = *p;
        n += (size_t)snprintf(j + n, cap - n, "\": %d", id++);
    }
    n += (size_t)snprintf(j + n, cap - n, "}, \"merges\": [");
    for (size_t m = 0; m < sizeof merges / sizeof merges[0]; m++)
        n += (size_t)snprintf(j + n, cap - n, "%s\"%s\"", m ? ", " : "", merges[m]);
    n += (size_t)snprintf(j + n, cap - n, "]}}");
    FUZZ_REQUIRE(n < cap, "the SentencePiece BPE fixture outgrew its buffer");
    return j;
}

static al_tokenizer *load_fixed(int kind) {
    static uint8_t *v, *m;
    static size_t vs, ms;
    /* Qwen2's pattern and NFC by tokenizer_class, and one added token past vocab.json (id 581) */
    static const char qwen2_config[] = "{\"tokenizer_class\": \"Qwen2Tokenizer\", \"added_tokens_decoder\": "
                                       "{\"581\": {\"content\": \"<|endoftext|>\", \"special\": true}}, "
                                       "\"eos_token\": \"<|endoftext|>\", \"pad_token\": \"<|endoftext|>\"}";
    const char *names[3] = {"vocab.txt", NULL, NULL};
    const uint8_t *datas[3] = {(const uint8_t *)fuzz_wordpiece_vocab, NULL, NULL};
    size_t sizes[3] = {sizeof fuzz_wordpiece_vocab - 1, 0, 0};
    int n = 1;
    char *json = NULL;
    if (kind == 1 || kind == 2) {
        if (!v) {
            v = fuzz_read_repo_file("tests/fixtures/tokenizers/bpe_small/vocab.json", &vs);
            m = fuzz_read_repo_file("tests/fixtures/tokenizers/bpe_small/merges.txt", &ms);
        }
        names[0] = "vocab.json", datas[0] = v, sizes[0] = vs;
        names[1] = "merges.txt", datas[1] = m, sizes[1] = ms;
        names[2] = "tokenizer_config.json", datas[2] = (const uint8_t *)qwen2_config, sizes[2] = sizeof qwen2_config - 1;
        n = kind == 2 ? 3 : 2;
    } else if (kind == 3) {
        json = spm_bpe_json();
        names[0] = "tokenizer.json", datas[0] = (const uint8_t *)json, sizes[0] = strlen(json);
    }
    al_tokenizer *tok = fuzz_load_tokenizer(names, datas, sizes, n, NULL);
    free(json);
    FUZZ_REQUIRE(tok != NULL, "the fixed tokenizer %d does not load", kind);
    return tok;
}

/* Encodes and checks; returns the status (the encoding is kept in *e on success). */
static al_status encode(const al_tokenizer *tok, const char *a, const char *b, const char *const *words, int n_words,
                        const size_t *word_len, const al_encode_options *o, al_encoding *e) {
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = words ? al_tokenizer_encode_words(tok, words, n_words, o, e, &err)
                         : al_tokenizer_encode(tok, a, b, o, e, &err);
    int valid = 1;
    if (words)
        for (int w = 0; w < n_words; w++) valid &= fuzz_utf8_valid(words[w], word_len[w]);
    else valid = fuzz_utf8_valid(a, strlen(a)) && (!b || fuzz_utf8_valid(b, strlen(b)));
    if (st != AL_OK) {
        fuzz_check_error(st, &err, NULL);
        int utf8_error = strstr(err.message, "invalid UTF-8 at byte") != NULL;
        FUZZ_REQUIRE(!valid || !utf8_error, "valid UTF-8 refused: %s", err.message);
        FUZZ_REQUIRE(valid || utf8_error, "invalid UTF-8 gave another error: %s", err.message);
        return st;
    }
    FUZZ_REQUIRE(valid, "invalid UTF-8 was encoded");
    fuzz_check_encoding(tok, e, o, a, b, word_len, n_words);
    return AL_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    if (!tokenizers[0])
        for (int k = 0; k < 4; k++) tokenizers[k] = load_fixed(k);
    const uint8_t flags = data[0];
    const al_tokenizer *tok = tokenizers[(flags & 1) | ((flags >> 5) & 2)];
    al_encode_options o = al_encode_default_options();
    o.add_special_tokens = (flags >> 1) & 1;
    o.truncation = (flags >> 2) & 1;
    o.max_length = o.truncation ? data[1] % 64 : 0;
    const int pair = (flags >> 3) & 1, as_words = (flags >> 4) & 1, padded = (flags >> 5) & 1;
    char *text = fuzz_cstr(data + 2, size - 2);
    const size_t n = size - 2;
    const char *a = text, *b = NULL;
    const char *words[16];
    size_t word_len[16];
    int n_words = 0;
    if (as_words) { /* NUL-separated words, at most 16 */
        for (size_t at = 0; at <= n && n_words < 16;) {
            words[n_words] = text + at;
            word_len[n_words] = strlen(text + at);
            at += word_len[n_words++] + 1;
        }
    } else if (pair) {
        size_t la = strlen(text);
        b = la < n ? text + la + 1 : "";
    }
    al_encoding e, again;
    al_status st = encode(tok, a, b, as_words ? words : NULL, n_words, as_words ? word_len : NULL, &o, &e);
    if (st == AL_OK) {
        /* the same call, the same encoding */
        FUZZ_REQUIRE(encode(tok, a, b, as_words ? words : NULL, n_words, as_words ? word_len : NULL, &o, &again) == AL_OK,
                     "second call failed");
        FUZZ_REQUIRE(fuzz_same_encoding(&e, &again), "two calls differ");
        al_encoding_free(&again);
        /* the template only adds special tokens around the sequences (no truncation: same token counts) */
        if (o.add_special_tokens && !o.truncation) {
            al_encode_options plain = o;
            plain.add_special_tokens = 0;
            al_encoding p;
            FUZZ_REQUIRE(encode(tok, a, b, as_words ? words : NULL, n_words, as_words ? word_len : NULL, &plain, &p) == AL_OK,
                         "plain encoding failed");
            int k = 0;
            for (int i = 0; i < e.n_tokens && k < p.n_tokens; i++) {
                if (e.sequence_ids[i] < 0 || e.sequence_ids[i] != p.sequence_ids[k]) continue;
                FUZZ_REQUIRE(e.ids[i] == p.ids[k] && e.offsets[2 * i] == p.offsets[2 * k] &&
                                 e.word_ids[i] == p.word_ids[k],
                             "token %d differs from plain token %d", i, k);
                k++;
            }
            FUZZ_REQUIRE(k == p.n_tokens, "the template dropped sequence tokens (%d of %d)", k, p.n_tokens);
            al_encoding_free(&p);
        }
        /* padding appends pad entries and changes nothing else */
        if (padded && al_tokenizer_special_ids(tok).pad >= 0) {
            al_encode_options po = o;
            po.pad_to = e.n_tokens + 3;
            al_encoding p;
            FUZZ_REQUIRE(encode(tok, a, b, as_words ? words : NULL, n_words, as_words ? word_len : NULL, &po, &p) == AL_OK,
                         "padded encoding failed");
            FUZZ_REQUIRE(p.n_tokens == e.n_tokens && p.length == e.n_tokens + 3, "padding changed the tokens");
            FUZZ_REQUIRE(!memcmp(p.ids, e.ids, (size_t)e.n_tokens * sizeof(int32_t)), "padding changed the ids");
            for (int i = e.n_tokens; i < p.length; i++)
                FUZZ_REQUIRE(p.ids[i] == al_tokenizer_special_ids(tok).pad, "pad id");
            al_encoding_free(&p);
        }
        al_encoding_free(&e);
    }
    free(text);
    return 0;
}
