// autotrans: the one header every rendered unit includes; it pulls in the
// helpers the kernel templates share, one header per concern:
//   mem.cuh      memory primitives (lds, sts, ldg, stg) and the emulator's smem hook
//   shuffle.cuh  register byte shuffles (word, pack, perm, funnel, shift_bytes,
//                word_at, gather) and lds_span
//   pieces.cuh   partial global stores (stg_piece, stg_from, stg_upto)
//   async.cuh    cp.async copies
//   cast.cuh     element conversions of fused casts (KernelConfig.cast), bit-exact
//                as NumPy / ml_dtypes astype
//   tiles.cuh    the kernel arguments (Args), the grid (blocks), tiles (Tile,
//                locate) and the walk orders
//   kernel.cuh   the kernel skeleton (phases, run, has_mid), element-wise edge
//                paths, AT_KERNEL_ENTRY and the Python agreement checks
//   emulate.cuh  the host emulation driver (AT_EMULATE)
//
// Everything a kernel does to memory goes through these functions, and the
// kernels' index math lives in __host__ __device__ functions. The same code
// therefore runs on the GPU and, compiled for the host, in the emulator that
// the CPU tests use to check indexing and to count shared-memory bank conflicts.
#pragma once
#include "mem.cuh"
#include "shuffle.cuh"
#include "pieces.cuh"
#include "async.cuh"
#include "cast.cuh"
#include "tiles.cuh"
#include "kernel.cuh"
#include "emulate.cuh"
