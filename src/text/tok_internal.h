/* tok_internal.h: the tokenizer object shared by the loaders (tok_load*.c), the models
 * (tok_wordpiece.c, tok_bpe.c) and the encoder (tok_encode.c). */
#ifndef AL_TEXT_TOK_INTERNAL_H
#define AL_TEXT_TOK_INTERNAL_H

#include <stdint.h>

#include "../attnlab.h"
#include "strmap.h"
#include "unicode.h"

/* A token added on top of the model vocabulary (tokenizer.json added_tokens, or the special tokens
 * of vocab.txt / vocab.json). Split out of the text before normalisation, matched exactly. */
typedef struct al_added_token {
    char *content;
    int id;
    int lstrip, rstrip, special;
} al_added_token;

/* One item of a post-processing template: a special token id, or sequence A (0) / B (1). */
typedef struct al_tmpl_item { int special_id; int seq; int type_id; } al_tmpl_item;
typedef struct al_template { al_tmpl_item items[8]; int n; } al_template;

struct al_tokenizer {
    al_tokenizer_kind kind;
    char source[64];          /* file the vocabulary came from, for error messages */
    char **vocab;             /* [vocab_size] id -> token (NULL for holes) */
    int vocab_size;
    int vocab_cap;            /* entries allocated in vocab (grows by doubling: a 30,522-line vocab.txt loads in linear time) */
    al_strmap token_ids;      /* token -> id (model vocabulary plus added tokens) */
    al_added_token *added;
    int n_added;
    al_special_ids specials;
    int bos, eos;             /* BPE: <s> / </s> (-1 when absent) */
    /* normaliser (BertNormalizer) */
    int clean_text, handle_chinese_chars, lowercase, strip_accents;
    int nfc;                  /* tokenizer.json normalizer NFC (ModernBERT) */
    /* WordPiece */
    char continuing_prefix[16];
    int max_input_chars_per_word;
    int unk_id;
    /* BPE */
    al_strmap merge_ranks;    /* "left\xffright" -> rank */
    int add_prefix_space;
    int pretok;               /* byte-level BPE's pre-tokenizer pattern: AL_PRETOK_GPT2 or AL_PRETOK_QWEN2 */
    /* SentencePiece BPE (Llama's tokenizer.model, or tokenizer.json BPE behind Prepend("▁") + Replace(" ", "▁")):
     * symbols are the characters of the SentencePiece-normalised text (the Unigram fields below say how),
     * merged by merge_ranks or, from tokenizer.model, by piece score; no pre-tokenizer */
    int spm_bpe;
    int *score_rank;          /* tokenizer.model: [n_pieces] rank of a mergeable piece by score (equal scores share
                                 a rank), -1 for the others; NULL: merges come from merge_ranks */
    /* post-processor */
    int has_template;
    al_template single, pair;
    int roberta_type_ids;     /* RoBERTa: all type ids 0 whatever the template says */
    /* Unigram (SentencePiece spm.model, or tokenizer.json model Unigram; docs/tokenizers.md) */
    int n_pieces;             /* ids below this are the model's pieces (added tokens may follow) */
    float *piece_score;       /* [n_pieces] log probability */
    uint8_t *piece_type;      /* [n_pieces] AL_SPM_NORMAL ... AL_SPM_BYTE */
    int max_piece_bytes;      /* longest matchable piece, bytes */
    float min_score, max_score; /* over the NORMAL pieces: the unknown's score is min_score - 10 */
    int byte_fallback;        /* unknown characters become their UTF-8 bytes' <0xNN> pieces */
    int byte_ids[256];        /* <0xNN> piece ids (-1 when absent) */
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
    uint8_t *charsmap;        /* precompiled_charsmap (owned copy), NULL: identity */
    uint32_t charsmap_size;
    const uint8_t *trie;      /* inside charsmap: the double-array trie's units (little-endian uint32) */
    uint32_t trie_units;
    const char *norm_strings; /* inside charsmap: NUL-terminated replacements the trie's values index */
    uint32_t norm_size;
};

/* SentencePiece piece types (sentencepiece_model.proto). */
enum { AL_SPM_NORMAL = 1, AL_SPM_UNKNOWN = 2, AL_SPM_CONTROL = 3, AL_SPM_USER_DEFINED = 4, AL_SPM_UNUSED = 5,
       AL_SPM_BYTE = 6 };

/* Normalised text: code points, each with the byte span of the source text it came from. */
typedef struct al_ntext {
    uint32_t *cp;
    int32_t *start, *end;
    int n, cap;
} al_ntext;

int al_ntext_push(al_ntext *t, uint32_t cp, int32_t start, int32_t end); /* 0 or -1 (OOM) */
void al_ntext_free(al_ntext *t);
/* NFC of in into out (a new text; tok_nfc.c): 0, or -1 when out of memory. */
int al_ntext_nfc(const al_ntext *in, al_ntext *out);

/* Tokens produced for one sequence before post-processing. */
typedef struct al_pieces {
    int32_t *id, *start, *end, *word;
    uint8_t *special;
    int n, cap;
    int n_words;             /* words numbered so far */
} al_pieces;

int al_pieces_push(al_pieces *p, int id, int start, int end, int word, int special);
void al_pieces_free(al_pieces *p);

/* Models: append the tokens of one plain (non-added-token) section. */
al_status al_wordpiece_section(const al_tokenizer *tok, const al_ntext *text, al_pieces *out,
                               al_error *err);
/* prefix_space: add a space in front unless there is one (ByteLevel add_prefix_space). */
al_status al_bpe_section(const al_tokenizer *tok, const al_ntext *text, int prefix_space, al_pieces *out,
                         al_error *err);

/* The printable character GPT-2's byte-level BPE writes byte b as (tok_bpe.c). */
uint32_t al_bpe_byte_char(int b);
/* Pre-tokenizer patterns of byte-level BPE (tok_pretok.c). */
enum { AL_PRETOK_GPT2 = 0, AL_PRETOK_QWEN2 = 1 };
/* The pattern a tokenizer.json Split regex names, -1 for any other string. */
int al_pretok_from_regex(const char *regex);
/* Length (>= 1) of the pattern's match at cp[i] of cp[0..n). */
int al_pretok_match(int pattern, const uint32_t *cp, int n, int i);

/* SentencePiece BPE of one plain section (tok_bpe.c; spm_bpe set). */
al_status al_spm_bpe_section(const al_tokenizer *tok, const al_ntext *text, al_pieces *out, al_error *err);
/* SentencePiece's normalisation of a section (tok_unigram.c: charsmap, remove_extra_whitespaces,
 * add_dummy_prefix, escape_whitespaces) into out as code points with their source spans: 0 / -1 OOM. */
int al_spm_normalize(const al_tokenizer *tok, const al_ntext *in, al_ntext *out);
/* The <0xNN> pieces of the vocabulary into byte_ids (-1 when absent). */
void al_tok_find_byte_pieces(al_tokenizer *tok);

/* Unigram (tok_unigram.c): SentencePiece normalisation (spm_charsmap.c) then the best segmentation. */
al_status al_unigram_section(const al_tokenizer *tok, const al_ntext *text, al_pieces *out, al_error *err);

/* spm_charsmap.c: takes a copy of a precompiled_charsmap blob (checked: sizes, trie bounds, strings
 * terminated); what names the blob's origin in errors. */
al_status al_spm_set_charsmap(al_tokenizer *tok, const uint8_t *data, size_t size, const char *what, al_error *err);
/* Longest charsmap rule matching s[0..n): returns the bytes it consumes (0: none) and its replacement. */
size_t al_spm_charsmap_match(const al_tokenizer *tok, const uint8_t *s, size_t n, const char **repl);

/* Unigram vocabulary: allocates the per-piece arrays for n pieces (0 / -1 OOM); finish computes the
 * scores' range, the byte pieces and the longest piece once every piece is set. */
int al_unigram_alloc(al_tokenizer *tok, int n);
void al_unigram_finish(al_tokenizer *tok);

/* Vocabulary building (tok_vocab.c). */
int al_tok_set_token(al_tokenizer *tok, const char *token, size_t len, int id); /* 0 / -1 OOM */
int al_tok_add_added(al_tokenizer *tok, const char *content, int id, int lstrip, int rstrip,
                     int special);
void al_tok_default_templates(al_tokenizer *tok);
void al_tok_find_specials(al_tokenizer *tok);

/* tok_load_decoder.c: the decoder families' tokenizer_config.json / config.json. */
typedef enum al_decoder_family { AL_DEC_NONE = 0, AL_DEC_GPT2, AL_DEC_QWEN2 } al_decoder_family;
/* The family a vocab.json + merges.txt belongs to, by tokenizer_class or model_type. */
al_decoder_family al_tok_decoder_family(const al_fileset *files);
/* tokenizer_config.json's added_tokens_decoder ({"151643": {"content": ..., "special": true}}) as added tokens. */
al_status al_tok_read_added_tokens_decoder(al_tokenizer *tok, const al_fileset *files, al_error *err);
/* The template [BOS] A [EOS] ([BOS] B [EOS]) by add_bos_token / add_eos_token of tokenizer_config.json (the
 * defaults given when absent; a token the vocabulary lacks is not added). */
void al_tok_bos_eos_template(al_tokenizer *tok, const al_fileset *files, int add_bos, int add_eos);

/* Loaders (tok_load_files.c, tok_load_json.c). */
al_status al_tok_load_vocab_txt(al_tokenizer *tok, const al_fileset *files, al_error *err);
al_status al_tok_load_bpe_files(al_tokenizer *tok, const al_fileset *files, al_error *err);
al_status al_tok_load_tokenizer_json(al_tokenizer *tok, const al_fileset *files, al_error *err);
/* tok_load_unigram.c: model Unigram of a parsed tokenizer.json (a cJSON root) with its normalizer and
 * pre_tokenizer; the caller loads added_tokens and post_processor. */
struct cJSON;
al_status al_tok_json_unigram(al_tokenizer *tok, const struct cJSON *root, int limit, al_error *err);
/* spm_model.c: spm.model or tokenizer.model (a SentencePiece ModelProto, protobuf; name is the file's, for
 * errors) -> pieces, scores, normaliser; a BPE model becomes kind BPE with spm_bpe and score_rank set. */
al_status al_tok_load_spm_model(al_tokenizer *tok, const char *name, const uint8_t *data, size_t size,
                                al_error *err);

/* UTF-8 decoding with validation: fills code points and byte spans. On invalid input returns -1
 * with *bad_byte set; -2 when out of memory. */
int al_utf8_decode(const char *s, size_t len, al_ntext *out, int32_t *bad_byte);
/* Appends the UTF-8 encoding of cp (1..4 bytes) to buf, returns bytes written. */
int al_utf8_encode(uint32_t cp, char *buf);

/* BERT's character classes (tok_util.c), shared by the tokenizer and the vocabulary learner. */
int al_bert_is_chinese_char(uint32_t cp); /* the CJK Unified Ideographs blocks, as _is_chinese_char */
int al_bert_is_control(uint32_t cp);      /* Cc, Cf, Co, Cs but tab, newline, carriage return (JS oracle) */
int al_bert_is_punct(uint32_t cp);        /* ASCII !-/ :-@ [-` {-~ and every Unicode P* */

#endif
