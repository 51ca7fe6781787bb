/* test_decoder_tokenizers.c: the tokenizers the decoder families ship (GPT-2, Qwen2, GPT-NeoX/Pythia, Llama)
 * against the test vectors of ../shared/decoders/testvectors (40 strings each, made with the Hugging Face JS
 * tokenizers; README.md there): ids without special tokens and with them, for every tokenizer file of
 * ../shared/decoders. The real files are read from AL_DECODERS when set (a worktree elsewhere), else from
 * ../shared/decoders relative to the repository's root; without them the test says so and skips them. The two
 * pre-tokenizer patterns and the refusal of another are also checked on small inputs that need no shared file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "read_file.h"

static char decoders[512];
static const char *dec(const char *rel) {
    static char buf[8][768];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", decoders, rel);
    return buf[k];
}

/* One tokenizer: the names the loader sees, the shared files they come from, the vectors they must give. */
typedef struct vec_set {
    const char *label;
    const char *names[4], *files[4];
    const char *vectors;
} vec_set;

static al_tokenizer *load_set(const vec_set *s, al_error *err, al_status *st) {
    al_fileset *fs = al_fileset_new();
    for (int i = 0; i < 4 && s->names[i]; i++) {
        size_t size;
        uint8_t *data = read_file(dec(s->files[i]), &size);
        CHECK_MSG(data != NULL, "%s: cannot read %s", s->label, dec(s->files[i]));
        if (data) al_fileset_add(fs, s->names[i], data, size, 1, err);
        free(data);
    }
    al_tokenizer *tok = NULL;
    *st = al_tokenizer_load(fs, &tok, err);
    al_fileset_free(fs);
    return tok;
}

static int same_ids(const al_encoding *enc, const cJSON *want) {
    if (!cJSON_IsArray(want) || cJSON_GetArraySize(want) != enc->n_tokens) return 0;
    for (int i = 0; i < enc->n_tokens; i++)
        if (cJSON_GetArrayItem(want, i)->valueint != enc->ids[i]) return 0;
    return 1;
}

static void print_ids(const char *what, const int32_t *ids, int n, const cJSON *want) {
    fprintf(stderr, "    %s got ", what);
    for (int i = 0; i < n && i < 40; i++) fprintf(stderr, "%d ", ids[i]);
    fprintf(stderr, "\n    %s want ", what);
    const cJSON *v;
    int i = 0;
    cJSON_ArrayForEach(v, want) if (i++ < 40) fprintf(stderr, "%d ", v->valueint);
    fputc('\n', stderr);
}

/* Encodes every case with and without special tokens; returns how many agree on both. */
static int check_set(const vec_set *s, int *n_cases) {
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load_set(s, &err, &st);
    CHECK_MSG(st == AL_OK, "%s: %s", s->label, err.message);
    *n_cases = 0;
    if (!tok) return 0;
    size_t size;
    char *text = (char *)read_file(dec(s->vectors), &size);
    cJSON *root = text ? cJSON_ParseWithLength(text, size) : NULL;
    free(text);
    CHECK_MSG(root != NULL, "%s: unreadable", s->vectors);
    int agree = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
        const char *input = cJSON_GetStringValue(cJSON_GetObjectItem(c, "text"));
        int ok = 1;
        for (int special = 0; special < 2; special++) {
            al_encode_options opt = al_encode_default_options();
            opt.add_special_tokens = special;
            al_encoding enc;
            st = al_tokenizer_encode(tok, input, NULL, &opt, &enc, &err);
            const cJSON *want = cJSON_GetObjectItem(c, special ? "ids_with_special" : "ids");
            int same = st == AL_OK && same_ids(&enc, want);
            if (!same) {
                fprintf(stderr, "  %s: case %d '%.50s' %s: %s\n", s->label, *n_cases, input,
                        special ? "ids_with_special" : "ids", st ? err.message : "differ");
                if (st == AL_OK) print_ids("", enc.ids, enc.n_tokens, want);
            }
            ok &= same;
            if (st == AL_OK) al_encoding_free(&enc);
        }
        /* decode(ids) is the vectors' "decoded" text */
        const cJSON *ids = cJSON_GetObjectItem(c, "ids");
        const char *decoded = cJSON_GetStringValue(cJSON_GetObjectItem(c, "decoded"));
        if (cJSON_IsArray(ids) && decoded) {
            const int n = cJSON_GetArraySize(ids);
            int32_t *v = malloc(sizeof(int32_t) * (size_t)(n + 1));
            for (int i = 0; v && i < n; i++) v[i] = cJSON_GetArrayItem(ids, i)->valueint;
            char *back = NULL;
            st = v ? al_tokenizer_decode(tok, v, n, 0, &back, &err) : AL_ERR_OOM;
            const int same = st == AL_OK && !strcmp(back, decoded);
            if (!same) fprintf(stderr, "  %s: case %d decode '%.60s' want '%.60s'\n", s->label, *n_cases, back ? back : err.message, decoded);
            ok &= same;
            free(back), free(v);
        }
        agree += ok;
        (*n_cases)++;
    }
    cJSON_Delete(root);
    al_tokenizer_free(tok);
    return agree;
}

static al_tokenizer *load_text(const char *name, const char *text, al_error *err, al_status *st) {
    al_fileset *fs = al_fileset_new();
    al_fileset_add(fs, name, (const uint8_t *)text, strlen(text), 1, err);
    al_tokenizer *tok = NULL;
    *st = al_tokenizer_load(fs, &tok, err);
    al_fileset_free(fs);
    return tok;
}

/* A Split pattern other than GPT-2's and Qwen2's is refused naming the file and the field. */
static void test_unknown_pattern(void) {
    static const char json[] =
        "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": "
        "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": "
        "\"\\\\p{N}{1,3}\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
        "\"use_regex\": false}]}}";
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load_text("tokenizer.json", json, &err, &st);
    CHECK(st == AL_ERR_UNSUPPORTED && tok == NULL);
    CHECK_MSG(strstr(err.message, "tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex '\\p{N}{1,3}'") != NULL,
              "%s", err.message);
    al_tokenizer_free(tok);
}

/* The two byte-level patterns on the small BPE fixture (tests/fixtures/tokenizers/bpe_small): GPT-2's splits
 * DON | ' | T | " 123" | \r\n\r\n | " x", Qwen2's (chosen by tokenizer_class) DON | 'T | " " | 1 | 2 | 3 |
 * \r\n\r\n | " x": each piece of the pattern is one word. */
static void test_patterns_on_fixture(void) {
    static const char qwen2[] = "{\"tokenizer_class\": \"Qwen2Tokenizer\"}";
    size_t vs, ms;
    uint8_t *v = read_file("tests/fixtures/tokenizers/bpe_small/vocab.json", &vs);
    uint8_t *m = read_file("tests/fixtures/tokenizers/bpe_small/merges.txt", &ms);
    CHECK(v && m);
    for (int q = 0; v && m && q < 2; q++) {
        al_error err = {0};
        al_fileset *fs = al_fileset_new();
        al_fileset_add(fs, "vocab.json", v, vs, 1, &err);
        al_fileset_add(fs, "merges.txt", m, ms, 1, &err);
        if (q) al_fileset_add(fs, "tokenizer_config.json", (const uint8_t *)qwen2, sizeof qwen2 - 1, 1, &err);
        al_tokenizer *tok = NULL;
        al_status st = al_tokenizer_load(fs, &tok, &err);
        al_fileset_free(fs);
        CHECK_MSG(st == AL_OK, "%s", err.message);
        if (!tok) continue;
        al_encoding enc;
        al_encode_options opt = al_encode_default_options();
        st = al_tokenizer_encode(tok, "DON'T 123\r\n\r\n x", NULL, &opt, &enc, &err);
        CHECK_MSG(st == AL_OK, "%s", err.message);
        if (st == AL_OK) {
            int words = 0, specials = 0;
            for (int i = 0; i < enc.n_tokens; i++) {
                if (enc.word_ids[i] + 1 > words) words = enc.word_ids[i] + 1;
                specials += enc.sequence_ids[i] < 0;
            }
            CHECK_MSG(words == (q ? 8 : 6), "%s pattern: %d words", q ? "Qwen2's" : "GPT-2's", words);
            /* bpe_small is RoBERTa's shape: <s> A </s> unless a decoder's class says otherwise */
            CHECK_MSG(specials == (q ? 0 : 2), "%d special tokens added", specials);
            al_encoding_free(&enc);
        }
        al_tokenizer_free(tok);
    }
    free(v);
    free(m);
}

/* What each decoder names as its special tokens: never a plain vocabulary token that looks like one. */
static void check_specials(const vec_set *s, int cls, int sep, int pad, int unk) {
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load_set(s, &err, &st);
    if (!tok) return;
    al_special_ids sp = al_tokenizer_special_ids(tok);
    CHECK_MSG(sp.cls == cls && sp.sep == sep && sp.pad == pad && sp.unk == unk, "%s: cls %d sep %d pad %d unk %d",
              s->label, sp.cls, sp.sep, sp.pad, sp.unk);
    al_tokenizer_free(tok);
}

int main(void) {
    test_unknown_pattern();
    test_patterns_on_fixture();
    const char *env = getenv("AL_DECODERS");
    snprintf(decoders, sizeof decoders, "%s", env && env[0] ? env : "../shared/decoders");
    size_t size;
    uint8_t *probe = read_file(dec("testvectors/gpt2.json"), &size);
    if (!probe) {
        printf("skipped the real files: no %s (set AL_DECODERS to the decoders' folder)\n",
               dec("testvectors/gpt2.json"));
        return check_summary("decoder_tokenizers");
    }
    free(probe);
    static const vec_set sets[] = {
        {"gpt2 vocab.json + merges.txt",
         {"vocab.json", "merges.txt", "tokenizer_config.json"},
         {"gpt2/vocab.json", "gpt2/merges.txt", "gpt2/tokenizer_config.json"},
         "testvectors/gpt2.json"},
        {"gpt2 tokenizer.json",
         {"tokenizer.json", "tokenizer_config.json"},
         {"gpt2/tokenizer.json", "gpt2/tokenizer_config.json"},
         "testvectors/gpt2.json"},
        {"gpt-neox-20b 20B_tokenizer.json", {"tokenizer.json"}, {"gpt-neox-20b/20B_tokenizer.json"},
         "testvectors/pythia.json"},
        {"qwen2.5-0.5b vocab.json + merges.txt",
         {"vocab.json", "merges.txt", "tokenizer_config.json", "config.json"},
         {"qwen2.5-0.5b/vocab.json", "qwen2.5-0.5b/merges.txt", "qwen2.5-0.5b/tokenizer_config.json",
          "qwen2.5-0.5b/config.json"},
         "testvectors/qwen2.5-0.5b.json"},
        {"llama-spm tokenizer.model", {"tokenizer.model"}, {"llama-spm/tokenizer.model"},
         "testvectors/tinyllama-1.1b.json"},
        {"llama-spm tokenizer.model + tinyllama tokenizer_config.json",
         {"tokenizer.model", "tokenizer_config.json"},
         {"llama-spm/tokenizer.model", "tinyllama-1.1b/tokenizer_config.json"},
         "testvectors/tinyllama-1.1b.json"},
        {"tinyllama-1.1b tokenizer.json",
         {"tokenizer.json", "tokenizer_config.json"},
         {"tinyllama-1.1b/tokenizer.json", "tinyllama-1.1b/tokenizer_config.json"},
         "testvectors/tinyllama-1.1b.json"},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        int n = 0, agree = check_set(&sets[i], &n);
        printf("%s: %d of %d agree\n", sets[i].label, agree, n);
        CHECK_MSG(agree == n && n == 40, "%s: %d of %d agree", sets[i].label, agree, n);
    }
    check_specials(&sets[0], -1, -1, -1, -1);               /* GPT-2: <|endoftext|> is BOS and EOS only */
    check_specials(&sets[1], -1, -1, -1, -1);
    check_specials(&sets[3], -1, -1, 151643, -1);           /* Qwen2: <s> and </s> of its vocabulary are text */
    check_specials(&sets[4], 1, 2, -1, 0);                  /* Llama: <s> </s> <unk>, no padding token */
    check_specials(&sets[5], 1, 2, 2, 0);                   /* TinyLlama pads with </s> */
    return check_summary("decoder_tokenizers");
}
