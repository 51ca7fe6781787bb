"""Writes a random checkpoint with a real decoder's config (Qwen2.5-0.5B by default) in Hugging Face layout, as the
Hub ships its weights (BF16, tied head), for measuring how much memory loading and running it takes
(docs/decoders.md, "Memory"). The weights are random normals (std 0.02): only their size matters here.

    /usr/bin/python3 bench/decoder_memory.py ../shared/decoders/qwen2.5-0.5b/config.json OUT_DIR
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
from make_goldens import write_safetensors  # noqa: E402


def main():
    cfg_path, out = sys.argv[1], sys.argv[2]
    with open(cfg_path) as f:
        c = json.load(f)
    assert c["model_type"] in ("qwen2", "llama"), c["model_type"]
    D, I, NL, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
    H = c["num_attention_heads"]
    KV = c.get("num_key_value_heads") or H
    hd = c.get("head_dim") or D // H
    g = torch.Generator().manual_seed(1)

    def w(*shape):
        return (torch.randn(*shape, generator=g) * 0.02).to(torch.bfloat16)

    t = [("model.embed_tokens.weight", w(V, D)), ("model.norm.weight", torch.ones(D, dtype=torch.bfloat16))]
    for l in range(NL):
        p = "model.layers.%d." % l
        t += [(p + "input_layernorm.weight", torch.ones(D, dtype=torch.bfloat16)),
              (p + "post_attention_layernorm.weight", torch.ones(D, dtype=torch.bfloat16)),
              (p + "self_attn.q_proj.weight", w(H * hd, D)), (p + "self_attn.k_proj.weight", w(KV * hd, D)),
              (p + "self_attn.v_proj.weight", w(KV * hd, D)), (p + "self_attn.o_proj.weight", w(D, H * hd)),
              (p + "mlp.gate_proj.weight", w(I, D)), (p + "mlp.up_proj.weight", w(I, D)),
              (p + "mlp.down_proj.weight", w(D, I))]
        if c["model_type"] == "qwen2":
            t += [(p + "self_attn.q_proj.bias", w(H * hd)), (p + "self_attn.k_proj.bias", w(KV * hd)),
                  (p + "self_attn.v_proj.bias", w(KV * hd))]
    if not c.get("tie_word_embeddings", False):
        t.append(("lm_head.weight", w(V, D)))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), t, "BF16", {"format": "pt"})
    print(out, sum(x.numel() for _, x in t), "weights")


if __name__ == "__main__":
    main()
