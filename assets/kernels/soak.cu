// scalescope soak kernels: the GEMM result check of `check --soak`, and the test hook that
// alters a result on purpose. Built with NVRTC at run time (src/bench/cuda/soak.rs).

// Compares `words` 32-bit words of `a` with `b` (16-byte aligned, `words` a multiple of 4).
// report[0] += wrong words; the first thread to find one stores its index in report[1] (which
// starts at ~0) and the words found and expected in report[2] and report[3].
extern "C" __global__ void compare_words(const uint4* __restrict__ a,
                                         const uint4* __restrict__ b,
                                         unsigned long long words,
                                         unsigned long long* report) {
  unsigned long long n4 = words / 4;
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long wrong = 0;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    uint4 x = a[i];
    uint4 y = b[i];
    if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
      unsigned int xs[4] = {x.x, x.y, x.z, x.w};
      unsigned int ys[4] = {y.x, y.y, y.z, y.w};
      for (int k = 0; k < 4; ++k) {
        if (xs[k] != ys[k]) {
          ++wrong;
          if (atomicCAS(&report[1], ~0ull, i * 4 + k) == ~0ull) {
            report[2] = xs[k];
            report[3] = ys[k];
          }
        }
      }
    }
  }
  if (wrong) atomicAdd(&report[0], wrong);
}

// The test hook: flips the lowest mantissa bit of the upper bf16 of word `i`.
extern "C" __global__ void flip_word(unsigned int* p, unsigned long long i) {
  if (blockIdx.x == 0 && threadIdx.x == 0) p[i] ^= 0x00010000u;
}
