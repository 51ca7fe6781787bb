/* gemm_block.h: the blocking the GEMM driver (gemm.c) and every path's block code share. B is packed
 * in blocks of NC columns by KC depth, as panels of NR columns ([k][NR], zero past the block's
 * columns). KC fixes the rounding (each block's sum is added to C on its own), so it must be the
 * same on every path; NR and NC only fix the packed layout. */
#ifndef AL_KERNELS_GEMM_BLOCK_H
#define AL_KERNELS_GEMM_BLOCK_H

#define AL_GEMM_NR 8
#define AL_GEMM_KC 256
#define AL_GEMM_NC 128

#endif
