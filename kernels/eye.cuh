// eyelike: the per-element value of an identity / shifted-diagonal matrix.
//
// Used as the `preamble` of the CuPy ElementwiseKernel backend (NVRTC puts it
// after CuPy's own headers and after the kernel's `typedef ... T;` lines) and
// compiled as plain C++ by the CPU test shim. It therefore includes nothing,
// relies on no CUDA-only type, and prefixes every name with `eyelike_`.
//
// Host-side contract (done in Python before launching):
//   * the output has shape (..., R, C) and size > 0, in any memory layout:
//     CuPy's `i` is the element's position in C order over the logical
//     shape (its indexer maps that to the strided address), so `i % (R*C)`
//     is the position inside the matrix and `i / (R*C)` the matrix, for a
//     contiguous, strided or transposed output alike;
//   * k has been clamped into [-R, C];
//   * the index type I is `int` when B*R*C < 2**31, else `long long`, so the
//     only division here is 32-bit whenever the output allows it.

#ifndef EYELIKE_EYE_CUH_
#define EYELIKE_EYE_CUH_

#ifndef EYELIKE_DEVICE
#define EYELIKE_DEVICE __device__
#endif

// T(1) or T(0) for every supported output type. Built from a float literal
// because `float` is the one conversion all of them accept: CuPy's `float16`
// has an implicit float16(float) constructor (its int/bool ones are explicit),
// CuPy's `complex<T>` (thrust-style) has complex(const T& re) with imag = 0,
// and bool / integer / floating types convert exactly from 0.0f and 1.0f.
template <typename OutT>
EYELIKE_DEVICE inline OutT eyelike_from_flag(bool on) {
  return on ? OutT(1.0f) : OutT(0.0f);
}

// r: flat index inside one matrix (0 <= r < R*C); n_cols = C (> 0);
// k already clamped into [-R, C]. Returns T(1) when col - row == k, else T(0).
template <typename OutT, typename IdxT>
EYELIKE_DEVICE inline OutT eyelike_value(IdxT r, IdxT n_cols, IdxT k) {
  const IdxT row = r / n_cols;         // the only division, in IdxT width
  const IdxT col = r - row * n_cols;   // row * n_cols <= r: cannot overflow
  // row and col are both in [0, max(IdxT)], so col - row cannot overflow
  // whatever k is; `col == row + k` would only be safe because k is clamped.
  return eyelike_from_flag<OutT>(col - row == k);
}

#endif  // EYELIKE_EYE_CUH_
