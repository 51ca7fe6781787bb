/* fuzz_torch_legacy.c: any bytes as a legacy (pre-zip) torch.save file after its magic number: the harness
 * puts the magic number's pickle in front, so every input takes the legacy path of al_torch_bin_read (the
 * protocol version, sys_info, state_dict and storage-key pickles through the restricted unpickler, then the
 * storages; src/model/torch_legacy.c, docs/checkpoints.md). Promises as fuzz_torch_bin.c: an error names
 * the file and leaves no tensor; tensors lie in the file or in copies the list owns, never larger than the
 * file, and convert. */
#include "fuzz_tensors.h"

static const uint8_t k_magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                  0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *file = malloc(sizeof k_magic + size + 1);
    FUZZ_REQUIRE(file != NULL, "out of memory");
    memcpy(file, k_magic, sizeof k_magic);
    if (size) memcpy(file + sizeof k_magic, data, size);
    fuzz_weights_file(al_torch_bin_read, file, sizeof k_magic + size, "pytorch_model.bin", 1);
    free(file);
    return 0;
}
