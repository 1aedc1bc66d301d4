// scalescope's benchmark kernels.
//
// Compiled at run time by NVRTC (src/cuda/nvrtc.rs) for the device's compute capability,
// or shipped precompiled as bench.ptx: nvcc -ptx -arch=compute_90 bench.cu -o bench.ptx
// Every kernel is extern "C" so that cuModuleGetFunction finds it by its plain name.
// The data pattern must stay identical to `pattern` in src/bench/cuda/pattern.rs.

typedef unsigned int u32;
typedef unsigned long long u64;

// A value that differs per element and per seed (an odd multiply-add of the index, then
// murmur3's finalizer, a bijection) and is never 0xFFFFFFFF, the poison written to
// destinations before a copy.
__device__ __forceinline__ u32 scalescope_pattern(u64 i, u32 seed) {
    u32 x = (u32)i * 0x9E3779B1u + (u32)(i >> 32) * 0x7FEB352Du + seed * 0x85EBCA77u + 0x165667B1u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x == 0xFFFFFFFFu ? 0u : x;
}

__device__ __forceinline__ u64 scalescope_globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Holds its stream until the host writes a non-zero *flag, or gives up after timeout_ns
// (then sets *timed_out) so that a stuck host can never hang the GPU. One thread.
extern "C" __global__ void spin_wait(volatile int* flag, u64 timeout_ns, volatile int* timed_out) {
    const u64 start = scalescope_globaltimer();
    while (*flag == 0) {
        if (scalescope_globaltimer() - start > timeout_ns) {
            *timed_out = 1;
            break;
        }
#if __CUDA_ARCH__ >= 700
        __nanosleep(256);
#endif
    }
}

// Writes the pattern for `seed` over `bytes` bytes: whole words, then the trailing bytes taken
// from the pattern word that would follow.
extern "C" __global__ void fill_pattern(u32* p, u64 bytes, u32 seed) {
    const u64 n = bytes / 4;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] = scalescope_pattern(i, seed);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const u32 t = scalescope_pattern(n, seed);
        unsigned char* b = (unsigned char*)(p + n);
        for (u64 k = 0; k < bytes % 4; ++k) {
            b[k] = (unsigned char)(t >> (8 * k));
        }
    }
}

// Counts words (and trailing bytes) that differ from the pattern, into *wrong. Every word is
// read. Block size must be a multiple of 32 (the count is summed per warp first).
extern "C" __global__ void check_pattern(const u32* p, u64 bytes, u32 seed, u64* wrong) {
    const u64 n = bytes / 4;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 bad = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        bad += (p[i] != scalescope_pattern(i, seed)) ? 1 : 0;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const u32 t = scalescope_pattern(n, seed);
        const unsigned char* b = (const unsigned char*)(p + n);
        for (u64 k = 0; k < bytes % 4; ++k) {
            bad += (b[k] != (unsigned char)(t >> (8 * k))) ? 1 : 0;
        }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        bad += __shfl_down_sync(0xFFFFFFFFu, bad, offset);
    }
    if ((threadIdx.x & 31) == 0 && bad != 0) {
        atomicAdd(wrong, bad);
    }
}

// Loads in flight per thread; `bench bandwidth --copy-unroll N` overrides it (for tuning).
#ifndef SCALESCOPE_UNROLL
#define SCALESCOPE_UNROLL 8
#endif

// Cache hints on the copy kernel's loads and stores (`bench bandwidth --copy-variant N`):
// 0: plain (the read-only path where the compiler picks it); 1, the default: streaming (.cs)
// both, evict-first, as each line is used once (2026-11-27, nvidia-h200-x2, one launch per
// sample: p2p_read_sm 378.1–378.3 GB/s against 375.5–375.9 plain and nvbandwidth's
// 376.1–376.2); 2: L2 only (.cg) both; 3: loads through the non-coherent path asking L2 for
// 256-byte fetches; 4: the same with 128 bytes; 5: write-through stores; 6: coherent loads
// (ld.global) instead of the read-only path.
#ifndef SCALESCOPE_COPY_VARIANT
#define SCALESCOPE_COPY_VARIANT 1
#endif
// SCALESCOPE_COPY_LAYOUT 1 (`--copy-contiguous`): each block copies one contiguous range
// instead of grid-stride.
#ifndef SCALESCOPE_COPY_LAYOUT
#define SCALESCOPE_COPY_LAYOUT 0
#endif

__device__ __forceinline__ uint4 copy_load(const uint4* p) {
#if SCALESCOPE_COPY_VARIANT == 1
    return __ldcs(p);
#elif SCALESCOPE_COPY_VARIANT == 2
    return __ldcg(p);
#elif SCALESCOPE_COPY_VARIANT == 3 && __CUDA_ARCH__ >= 800
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
#elif SCALESCOPE_COPY_VARIANT == 4 && __CUDA_ARCH__ >= 800
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
#elif SCALESCOPE_COPY_VARIANT == 6
    // Coherent loads (ld.global, not the read-only path `__restrict__` lets the compiler pick),
    // as nvbandwidth's `stridingMemcpyKernel` compiles.
    uint4 v;
    asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
#else
    return *p;
#endif
}

__device__ __forceinline__ void copy_store(uint4* p, uint4 v) {
#if SCALESCOPE_COPY_VARIANT == 1
    __stcs(p, v);
#elif SCALESCOPE_COPY_VARIANT == 2
    __stcg(p, v);
#elif SCALESCOPE_COPY_VARIANT == 5
    __stwt(p, v);
#else
    *p = v;
#endif
}

// dst[0..bytes) = src[0..bytes), `passes` times over: 16-byte accesses, grid-stride,
// SCALESCOPE_UNROLL independent loads in flight per thread before the first store; one thread
// copies the last bytes % 16. Either pointer may be a peer GPU's memory (the SM copy tests).
// A sample's copies run as passes of one launch, as nvbandwidth's `stridingMemcpyKernel` loops
// `loopCount` times inside one kernel (kernels.cu, v0.8): no launch gap or tail between copies.
extern "C" __global__ void __launch_bounds__(512)
copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 bytes, u64 passes) {
    const u64 n = bytes / 16;
    for (u64 pass = 0; pass < passes; ++pass) {
#if SCALESCOPE_COPY_LAYOUT == 1
        // This block's range [lo, hi), threads striding by the block size within it.
        const u64 per = (n + gridDim.x - 1) / gridDim.x;
        const u64 lo = (u64)blockIdx.x * per;
        const u64 hi = lo + per < n ? lo + per : n;
        const u64 stride = blockDim.x;
        u64 i = lo + threadIdx.x;
        const u64 end = hi;
#else
        const u64 stride = (u64)gridDim.x * blockDim.x;
        u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
        const u64 end = n;
#endif
        for (; i + (SCALESCOPE_UNROLL - 1) * stride < end; i += SCALESCOPE_UNROLL * stride) {
            uint4 v[SCALESCOPE_UNROLL];
#pragma unroll
            for (int k = 0; k < SCALESCOPE_UNROLL; ++k) {
                v[k] = copy_load(src + i + k * stride);
            }
#pragma unroll
            for (int k = 0; k < SCALESCOPE_UNROLL; ++k) {
                copy_store(dst + i + k * stride, v[k]);
            }
        }
        for (; i < end; i += stride) {
            copy_store(dst + i, copy_load(src + i));
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            const unsigned char* s = (const unsigned char*)(src + n);
            unsigned char* d = (unsigned char*)(dst + n);
            for (u64 k = 0; k < bytes % 16; ++k) {
                d[k] = s[k];
            }
        }
    }
}

// The same copy through Hopper's bulk copy engine (TMA, sm_90+): one thread per block moves
// BULK_CHUNK-byte pieces global → shared (cp.async.bulk, completing on an mbarrier) and shared →
// global (cp.async.bulk ... bulk_group), BULK_STAGES pieces in flight, so each NVLink transfer
// is a large bulk transaction rather than many 16-byte stores. Needs 16-byte aligned pointers; a
// warp of block 0 copies the last bytes % BULK_CHUNK. Below sm_90 it does nothing (the host
// never launches it there).
#define BULK_CHUNK 8192
#define BULK_STAGES 4
extern "C" __global__ void __launch_bounds__(32)
copy_bulk(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, u64 bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ __align__(128) unsigned char buf[BULK_STAGES][BULK_CHUNK];
    __shared__ __align__(8) u64 bar[BULK_STAGES];
    const u64 chunks = bytes / BULK_CHUNK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < BULK_STAGES; ++s) {
            u32 b = (u32)__cvta_generic_to_shared(&bar[s]);
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // This block's pieces: blockIdx.x, blockIdx.x + gridDim.x, ...
        const u64 first = blockIdx.x;
        const u64 step = gridDim.x;
        const u64 mine = first < chunks ? (chunks - first + step - 1) / step : 0;
        u32 parity[BULK_STAGES];
        for (int s = 0; s < BULK_STAGES; ++s) parity[s] = 0;
        // Prologue: start the first loads.
        for (u64 i = 0; i < mine && i < BULK_STAGES; ++i) {
            const int s = (int)i;
            u32 b = (u32)__cvta_generic_to_shared(&bar[s]);
            u32 d = (u32)__cvta_generic_to_shared(&buf[s][0]);
            const unsigned char* from = src + (first + i * step) * BULK_CHUNK;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(BULK_CHUNK) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         ::"r"(d), "l"(from), "r"(BULK_CHUNK), "r"(b) : "memory");
        }
        for (u64 i = 0; i < mine; ++i) {
            const int s = (int)(i % BULK_STAGES);
            u32 b = (u32)__cvta_generic_to_shared(&bar[s]);
            u32 d = (u32)__cvta_generic_to_shared(&buf[s][0]);
            // Wait for piece i to land in shared memory.
            u32 done = 0;
            while (!done) {
                asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                             : "=r"(done) : "r"(b), "r"(parity[s]) : "memory");
            }
            parity[s] ^= 1u;
            unsigned char* to = dst + (first + i * step) * BULK_CHUNK;
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(to), "r"(d), "r"(BULK_CHUNK) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            const u64 next = i + BULK_STAGES;
            if (next < mine) {
                // The store must have read stage s before the next load overwrites it.
                asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                const unsigned char* from = src + (first + next * step) * BULK_CHUNK;
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(BULK_CHUNK) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                             ::"r"(d), "l"(from), "r"(BULK_CHUNK), "r"(b) : "memory");
            }
        }
        // Every store complete (written, not only read from shared memory) before exiting.
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    // The tail: one warp of block 0, 16 bytes at a time, then single bytes.
    if (blockIdx.x == 0) {
        const u64 start = chunks * BULK_CHUNK;
        const u64 vec_end = start + (bytes - start) / 16 * 16;
        for (u64 o = start + threadIdx.x * 16; o < vec_end; o += 32 * 16) {
            *(uint4*)(dst + o) = *(const uint4*)(src + o);
        }
        for (u64 o = vec_end + threadIdx.x; o < bytes; o += 32) {
            dst[o] = src[o];
        }
    }
#endif
}

// How the chase loads (`bench bandwidth --chase-load`): 0 plain loads, as nvbandwidth's
// `ptrChasingKernel` (kernels.cu, v0.8; a launch never revisits a line, and L1 starts each
// launch empty, so no load is served from this SM's L1); 1 volatile (ld.global.cv, fetched
// again); 2 L2 only (ld.global.cg).
#ifndef SCALESCOPE_CHASE_LOAD
#define SCALESCOPE_CHASE_LOAD 0
#endif

// One thread, of block `target` (the others leave at once: launched with one block per SM, the
// host moves the chase from SM to SM by launching it with each target in turn, as nvbandwidth's
// `latencyPtrChaseKernel` does), follows `steps` links of a chain whose every slot holds the
// address of the next; each load depends on the previous one. *sink receives the address
// reached, which the host checks.
extern "C" __global__ void pointer_chase(const u64* start, u64 steps, u64* sink, u32 target) {
    if (blockIdx.x != target) {
        return;
    }
    const u64* p = start;
    for (u64 s = 0; s < steps; ++s) {
#if SCALESCOPE_CHASE_LOAD == 1
        p = (const u64*)__ldcv(p);
#elif SCALESCOPE_CHASE_LOAD == 2
        p = (const u64*)__ldcg(p);
#else
        p = (const u64*)*p;
#endif
    }
    *sink = (u64)p;
}

// buf[i * stride_words] = next[i] for every slot i: lays a chain built on the host into
// device memory without copying the whole (mostly unused) buffer.
extern "C" __global__ void scatter_chain(const u64* next, u64 slots, u64* buf, u64 stride_words) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < slots; i += stride) {
        buf[i * stride_words] = next[i];
    }
}
