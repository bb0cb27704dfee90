// Device-side compile check for kernels/eye.cuh (no GPU needed):
//   nvcc --ptx -arch=sm_90 -I<repo>/kernels ptx_check.cu
// It lays the source out the way CuPy's ElementwiseKernel does (see
// cupy/_core/_kernel.pyx, _get_simple_elementwise_kernel_code):
//   typedef <ctype> T; typedef <ctype> I;   <- global, before the preamble
//   <preamble = eye.cuh>
//   extern "C" __global__ void name(...) { CUPY_FOR(i, size) { op; } }
// and instantiates the five operation strings (element path: scalar and
// per-matrix k; vector path: scalar k, per-matrix k, per-matrix k over
// small matrices) for every output type CuPy can ask for. The test
// then reads the PTX (e.g. no 64-bit division with I=int / U=unsigned int).
// test_kernel_nvrtc.py builds CuPy's own generated source with NVRTC; this
// file checks the header under nvcc as well.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Stand-ins for CuPy's float16 (cupy/_core/include/cupy/float16.cuh) and
// complex<T> (cupy/_core/include/cupy/complex/complex.h, thrust-derived).
// They copy the constructor sets, implicit vs explicit, of the real classes,
// because that is what decides whether the header's T(...) calls compile.
// They live here, not in the header, which must use CuPy's own classes.
class float16 {
 private:
  __half data_;

 public:
  __device__ float16() {}
  __device__ float16(float v) : data_(__float2half_rn(v)) {}
  explicit __device__ float16(bool v) : data_(__float2half_rn(float(v))) {}
  explicit __device__ float16(double v) : data_(__double2half(v)) {}
  explicit __device__ float16(int v) : data_(__float2half_rn(float(v))) {}
  explicit __device__ float16(unsigned int v)
      : data_(__float2half_rn(float(v))) {}
  explicit __device__ float16(long long v)
      : data_(__float2half_rn(float(v))) {}
  explicit __device__ float16(unsigned long long v)
      : data_(__float2half_rn(float(v))) {}
  __device__ operator float() const { return __half2float(data_); }
};

// CuPy's bfloat16 (cupy/_core/include/cupy/bfloat16.cuh): implicit from
// float, explicit from the rest.
class bfloat16 {
 private:
  __nv_bfloat16 data_;

 public:
  __device__ bfloat16() : data_() {}
  __device__ bfloat16(float v) : data_(v) {}
  explicit __device__ bfloat16(bool v) : data_(float(v)) {}
  explicit __device__ bfloat16(double v) : data_(float(v)) {}
  explicit __device__ bfloat16(int v) : data_(float(v)) {}
  explicit __device__ bfloat16(long long v) : data_(float(v)) {}
  __device__ operator float() const { return float(data_); }
};

template <typename X>
struct __align__(sizeof(X) * 2) complex {
 public:
  typedef X value_type;
  __host__ __device__ complex(const X& re) : m_data{re, X()} {}
  __host__ __device__ complex(const X& re, const X& im) : m_data{re, im} {}
  complex() = default;
  complex(const complex<X>& z) = default;
  template <typename Y>
  __host__ __device__ complex(const complex<Y>& z)
      : m_data{X(z.real()), X(z.imag())} {}
  __host__ __device__ complex& operator=(const X& re) {
    m_data[0] = re;
    m_data[1] = X();
    return *this;
  }
  complex& operator=(const complex<X>& z) = default;
  __host__ __device__ X real() const { return m_data[0]; }
  __host__ __device__ X imag() const { return m_data[1]; }

 private:
  X m_data[2];
};

// CuPy's loop macro, verbatim from cupy/_core/include/cupy/carray.cuh:
// `i` is ptrdiff_t whatever the array size. CuPy puts `#pragma unroll 1`
// before it ("No loop unrolling due to avoid 64-bit division"): unrolling
// makes nvcc compute a 64-bit trip count with div.u64. The kernels below do
// the same (as _Pragma, since they are built by a macro).
#define CUPY_FOR(i, n)                                              \
  for (ptrdiff_t i =                                                \
           static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; \
       i < (n); i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)

// CuPy emits the type-placeholder typedefs at global scope *before* the
// preamble, so the header's template parameters must tolerate global T / I.
typedef float16 T;
typedef long long I;
typedef unsigned long long U;

#include "eye.cuh"

// The backend's operation strings, exactly as it holds them: the test makes
// a header of them (tests/kernel/test_kernel_source.py, ops_header) and
// passes it with -include. No copy here, which could drift from them.
#if !defined(EYELIKE_OP_SCALAR) || !defined(EYELIKE_OP_PER_MATRIX) ||         \
    !defined(EYELIKE_OP_VECTOR) || !defined(EYELIKE_OP_VECTOR_PER_MATRIX) || \
    !defined(EYELIKE_OP_VECTOR_PER_SMALL_MATRIX)
#error "compile with -include of the backend's operations (see ops_header)"
#endif

// One kernel per (output type, index type, operation). Local typedefs give
// each kernel its own T / I / U, as each CuPy compilation unit would. The
// vector kernels take their output as a raw pointer (CuPy passes a raw 1-D
// CArray, whose `&out[0]` is that pointer) and their parameters by the
// names the operation strings use.
#define EYELIKE_VECTOR_KERNELS(NAME, TT, II, UU)                          \
  extern "C" __global__ void eyelike_vector_##NAME(                       \
      TT* _raw_out, ptrdiff_t _size, UU n, UU head, UU mat_size,          \
      UU mat_magic, UU mat_shift, UU step, UU step_magic, UU step_shift,  \
      unsigned long long comb, UU lo, UU end, unsigned long long rep_lo,  \
      unsigned long long rep_hi) {                                        \
    typedef TT T;                                                         \
    typedef UU U;                                                         \
    TT* out = _raw_out;                                                   \
    _Pragma("unroll 1") CUPY_FOR(i, _size) { EYELIKE_OP_VECTOR }          \
  }                                                                       \
  extern "C" __global__ void eyelike_vector_per_matrix_##NAME(            \
      TT* _raw_out, ptrdiff_t _size, UU n, UU head, UU mat_size,          \
      UU mat_magic, UU mat_shift, UU step, UU step_magic, UU step_shift,  \
      unsigned long long comb, UU n_rows, const II* kk) {                 \
    typedef TT T;                                                         \
    typedef UU U;                                                         \
    TT* out = _raw_out;                                                   \
    _Pragma("unroll 1") CUPY_FOR(i, _size) {                              \
      EYELIKE_OP_VECTOR_PER_MATRIX                                        \
    }                                                                     \
  }                                                                       \
  extern "C" __global__ void eyelike_vector_small_##NAME(                 \
      TT* _raw_out, ptrdiff_t _size, UU n, UU head, UU mat_size,          \
      UU mat_magic, UU mat_shift, UU step, unsigned long long comb,       \
      UU n_rows, const II* kk) {                                          \
    typedef TT T;                                                         \
    typedef UU U;                                                         \
    TT* out = _raw_out;                                                   \
    _Pragma("unroll 1") CUPY_FOR(i, _size) {                              \
      EYELIKE_OP_VECTOR_PER_SMALL_MATRIX                                  \
    }                                                                     \
  }

#define EYELIKE_KERNELS(NAME, TT, II)                                     \
  extern "C" __global__ void eyelike_scalar_##NAME(                       \
      TT* _raw_out, ptrdiff_t _size, II mat_size, II n_cols, II k) {      \
    typedef TT T;                                                         \
    typedef II I;                                                         \
    _Pragma("unroll 1") CUPY_FOR(i, _size) {                              \
      T& out = _raw_out[i];                                               \
      EYELIKE_OP_SCALAR                                                   \
    }                                                                     \
  }                                                                       \
  extern "C" __global__ void eyelike_per_matrix_##NAME(                   \
      TT* _raw_out, ptrdiff_t _size, II mat_size, II n_cols,              \
      const II* kk) {                                                     \
    typedef TT T;                                                         \
    typedef II I;                                                         \
    _Pragma("unroll 1") CUPY_FOR(i, _size) {                              \
      T& out = _raw_out[i];                                               \
      EYELIKE_OP_PER_MATRIX                                               \
    }                                                                     \
  }                                                                       \
  /* The header alone, fed in-matrix indices: isolates its arithmetic. */ \
  extern "C" __global__ void eyelike_value_##NAME(                        \
      TT* out, const II* r, ptrdiff_t n, II n_cols, II k) {               \
    _Pragma("unroll 1") CUPY_FOR(j, n) {                                  \
      out[j] = eyelike_value<TT, II>(r[j], n_cols, k);                    \
    }                                                                     \
  }

#define EYELIKE_BOTH_WIDTHS(NAME, TT)                                 \
  EYELIKE_KERNELS(NAME##_i32, TT, int)                                \
  EYELIKE_KERNELS(NAME##_i64, TT, long long)                          \
  EYELIKE_VECTOR_KERNELS(NAME##_i32, TT, int, unsigned int)           \
  EYELIKE_VECTOR_KERNELS(NAME##_i64, TT, long long, unsigned long long)

// Names are NumPy dtype names; types are CuPy's (_scalar.pyx typenames).
EYELIKE_BOTH_WIDTHS(bool, bool)
EYELIKE_BOTH_WIDTHS(int8, signed char)
EYELIKE_BOTH_WIDTHS(int16, short)
EYELIKE_BOTH_WIDTHS(int32, int)
EYELIKE_BOTH_WIDTHS(int64, long long)
EYELIKE_BOTH_WIDTHS(uint8, unsigned char)
EYELIKE_BOTH_WIDTHS(uint16, unsigned short)
EYELIKE_BOTH_WIDTHS(uint32, unsigned int)
EYELIKE_BOTH_WIDTHS(uint64, unsigned long long)
EYELIKE_BOTH_WIDTHS(float16, float16)
EYELIKE_BOTH_WIDTHS(float32, float)
EYELIKE_BOTH_WIDTHS(float64, double)
EYELIKE_BOTH_WIDTHS(complex64, complex<float>)
EYELIKE_BOTH_WIDTHS(complex128, complex<double>)
EYELIKE_BOTH_WIDTHS(bfloat16, bfloat16)
