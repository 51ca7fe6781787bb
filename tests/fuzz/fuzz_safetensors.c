/* fuzz_safetensors.c: any bytes as a model.safetensors (al_safetensors_read). Promises (fuzz_tensors.h): an
 * error names the file and lists nothing; an accepted file lists tensors inside the buffer, matching dtype x
 * shape, never overlapping, with distinct names, converting to float32 when F32/F16/BF16. */
#include "fuzz_tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_weights_file(al_safetensors_read, data, size, "model.safetensors", 0);
    return 0;
}
