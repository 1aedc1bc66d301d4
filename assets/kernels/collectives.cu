// scalescope's collective kernels: the verification pattern (fill), the expected-result check,
// and the element-wise sum that scalescope's own ring and tree all-reduce run over P2P.
//
// Compiled at run time by NVRTC (src/bench/cuda/collectives/kernels.rs), like bench.cu, with no
// headers: f16 goes through PTX cvt instructions, bf16 through bit manipulation.
// Every kernel is extern "C" so that cuModuleGetFunction finds it by its plain name.
// `coll_value` and `coll_expected` must stay identical to src/bench/cuda/collectives/values.rs.

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

struct f16_t {
    u16 bits;
};
struct bf16_t {
    u16 bits;
};

// ---- conversions -------------------------------------------------------------------------

__device__ __forceinline__ float f16_to_float(f16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}

__device__ __forceinline__ f16_t float_to_f16(float f) {
    f16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
}

__device__ __forceinline__ float bf16_to_float(bf16_t b) {
    return __uint_as_float(((u32)b.bits) << 16);
}

// Round to nearest even; NaN stays a (quiet) NaN.
__device__ __forceinline__ bf16_t float_to_bf16(float f) {
    u32 u = __float_as_uint(f);
    bf16_t b;
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
        b.bits = (u16)((u >> 16) | 0x40u);
        return b;
    }
    u += 0x7FFFu + ((u >> 16) & 1u);
    b.bits = (u16)(u >> 16);
    return b;
}

// to_double / from_int: used by fill and check (exact for the small integers of the pattern).
__device__ __forceinline__ double to_double(float x) { return (double)x; }
__device__ __forceinline__ double to_double(double x) { return x; }
__device__ __forceinline__ double to_double(int x) { return (double)x; }
__device__ __forceinline__ double to_double(f16_t x) { return (double)f16_to_float(x); }
__device__ __forceinline__ double to_double(bf16_t x) { return (double)bf16_to_float(x); }

template <typename T> __device__ __forceinline__ T from_int(int v);
template <> __device__ __forceinline__ float from_int<float>(int v) { return (float)v; }
template <> __device__ __forceinline__ double from_int<double>(int v) { return (double)v; }
template <> __device__ __forceinline__ int from_int<int>(int v) { return v; }
template <> __device__ __forceinline__ f16_t from_int<f16_t>(int v) { return float_to_f16((float)v); }
template <> __device__ __forceinline__ bf16_t from_int<bf16_t>(int v) { return float_to_bf16((float)v); }

// a + b in the element type (half types add in float and round once, as NCCL does).
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ double add(double a, double b) { return a + b; }
__device__ __forceinline__ int add(int a, int b) { return a + b; }
__device__ __forceinline__ f16_t add(f16_t a, f16_t b) {
    return float_to_f16(f16_to_float(a) + f16_to_float(b));
}
__device__ __forceinline__ bf16_t add(bf16_t a, bf16_t b) {
    return float_to_bf16(bf16_to_float(a) + bf16_to_float(b));
}

template <typename T> struct IsInt { static const bool value = false; };
template <> struct IsInt<int> { static const bool value = true; };

// ---- the pattern -------------------------------------------------------------------------

// Input element i of rank r: a small integer in [-8, 8], exact in every dtype, and so are sums
// over up to 32 ranks.
__device__ __forceinline__ int coll_value(int rank, u64 i) {
    return (int)((i * 7ull + (u64)rank * 13ull) % 17ull) - 8;
}

// Ops, as numbered in values.rs.
#define OP_ALL_REDUCE 0
#define OP_ALL_GATHER 1
#define OP_REDUCE_SCATTER 2
#define OP_BROADCAST 3
#define OP_ALLTOALL 4
#define OP_SENDRECV 5

// The expected output element j of rank q for `op` over n ranks with `count` elements per rank
// (count as NCCL's call takes it: the per-rank block for all_gather, reduce_scatter, alltoall).
__device__ __forceinline__ int coll_expected(int op, int q, int n, u64 count, u64 j) {
    switch (op) {
    case OP_ALL_REDUCE: {
        int s = 0;
        for (int r = 0; r < n; ++r) s += coll_value(r, j);
        return s;
    }
    case OP_ALL_GATHER:
        return coll_value((int)(j / count), j % count);
    case OP_REDUCE_SCATTER: {
        int s = 0;
        for (int r = 0; r < n; ++r) s += coll_value(r, (u64)q * count + j);
        return s;
    }
    case OP_BROADCAST:
        return coll_value(0, j);
    case OP_ALLTOALL:
        return coll_value((int)(j / count), (u64)q * count + j % count);
    default: // OP_SENDRECV
        return coll_value((q - 1 + n) % n, j);
    }
}

// p[i] = value(rank, first + i) for i < n.
template <typename T> __device__ void fill_values(T* p, u64 n, u64 first, int rank) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] = from_int<T>(coll_value(rank, first + i));
    }
}

// Adds to *wrong the elements of p[0..n) that differ from the expected result: exactly for
// integers, within 1e-3 relative (at least 1e-3 absolute) for floating types; NaN never passes.
// Block size must be a multiple of 32.
template <typename T>
__device__ void check_values(const T* p, u64 n, int op, int q, int nranks, u64 count, u64* wrong) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 bad = 0;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {
        const double e = (double)coll_expected(op, q, nranks, count, j);
        const double v = to_double(p[j]);
        const double tol = IsInt<T>::value ? 0.0 : 1e-3 * fmax(1.0, fabs(e));
        bad += (fabs(v - e) <= tol) ? 0 : 1;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        bad += __shfl_down_sync(0xFFFFFFFFu, bad, offset);
    }
    if ((threadIdx.x & 31) == 0 && bad != 0) {
        atomicAdd(wrong, bad);
    }
}

// ---- the reduction -----------------------------------------------------------------------

// 16 bytes seen as a vector or as its elements (union punning is defined in CUDA C++).
template <typename T> union Pack16 {
    uint4 v;
    T e[16 / sizeof(T)];
};

template <typename T> __device__ __forceinline__ uint4 add16(uint4 x, uint4 y) {
    Pack16<T> a, b, c;
    a.v = x;
    b.v = y;
#pragma unroll
    for (int k = 0; k < (int)(16 / sizeof(T)); ++k) c.e[k] = add(a.e[k], b.e[k]);
    return c.v;
}

#define COLL_UNROLL 4

// dst[i] = a[i] + b[i] for i < n. Any pointer may be a peer GPU's memory (the ring and tree
// read their neighbour's partial sums through it); dst may equal a (in place). 16-byte
// accesses, COLL_UNROLL independent pairs of loads in flight per thread, grid-stride; a scalar
// path for the tail and for pointers that are not 16-byte aligned.
template <typename T> __device__ void reduce_sum(T* dst, const T* a, const T* b, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const int K = 16 / sizeof(T);
    u64 done = 0;
    if ((((u64)dst | (u64)a | (u64)b) & 15ull) == 0) {
        const u64 nv = n / K;
        const uint4* va = (const uint4*)a;
        const uint4* vb = (const uint4*)b;
        uint4* vd = (uint4*)dst;
        u64 i = tid;
        for (; i + (COLL_UNROLL - 1) * stride < nv; i += COLL_UNROLL * stride) {
            uint4 x[COLL_UNROLL], y[COLL_UNROLL];
#pragma unroll
            for (int k = 0; k < COLL_UNROLL; ++k) {
                x[k] = va[i + k * stride];
                y[k] = vb[i + k * stride];
            }
#pragma unroll
            for (int k = 0; k < COLL_UNROLL; ++k) {
                vd[i + k * stride] = add16<T>(x[k], y[k]);
            }
        }
        for (; i < nv; i += stride) {
            vd[i] = add16<T>(va[i], vb[i]);
        }
        done = nv * K;
    }
    for (u64 i = done + tid; i < n; i += stride) {
        dst[i] = add(a[i], b[i]);
    }
}

#define COLL_KERNELS(SUFFIX, T)                                                                  \
    extern "C" __global__ void coll_fill_##SUFFIX(T* p, u64 n, u64 first, int rank) {           \
        fill_values<T>(p, n, first, rank);                                                       \
    }                                                                                            \
    extern "C" __global__ void coll_check_##SUFFIX(const T* p, u64 n, int op, int q, int nranks, \
                                                   u64 count, u64* wrong) {                      \
        check_values<T>(p, n, op, q, nranks, count, wrong);                                      \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(512)                                            \
        coll_reduce_##SUFFIX(T* dst, const T* a, const T* b, u64 n) {                            \
        reduce_sum<T>(dst, a, b, n);                                                             \
    }

COLL_KERNELS(f32, float)
COLL_KERNELS(bf16, bf16_t)
COLL_KERNELS(f16, f16_t)
COLL_KERNELS(f64, double)
COLL_KERNELS(i32, int)
