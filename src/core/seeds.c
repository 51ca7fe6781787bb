/* seeds.c: the derivations of seeds.h. */
#include "seeds.h"

uint64_t al_mlm_derive_seed(uint64_t seed, uint64_t purpose, uint64_t index) {
    uint64_t x = seed;
    uint64_t parts[2] = {purpose, index};
    for (int i = 0; i < 2; i++) {
        x ^= parts[i] + 0x9E3779B97F4A7C15ull + (x << 6) + (x >> 2);
        x += 0x9E3779B97F4A7C15ull;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        x ^= x >> 31;
    }
    return x;
}

uint64_t al_probe_stream_seed(uint64_t seed, int epoch, int stream) {
    return seed ^ (0x9E3779B97F4A7C15ull * (2ull * (uint64_t)epoch + (uint64_t)stream + 1ull));
}
