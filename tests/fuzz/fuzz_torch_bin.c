/* fuzz_torch_bin.c: any bytes as a pytorch_model.bin (al_torch_bin_read): the zip container (ZIP64 too), the
 * legacy stream (docs/checkpoints.md), the restricted unpickler, the storages and their views. Promises as
 * fuzz_safetensors.c, except that tensors may share a storage and a strided view may be a copy the list owns. */
#include "fuzz_tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_weights_file(al_torch_bin_read, data, size, "pytorch_model.bin", 1);
    return 0;
}
