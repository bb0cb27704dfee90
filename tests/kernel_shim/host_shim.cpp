// CPU stand-in for the CuPy ElementwiseKernel that uses kernels/eye.cuh.
//
// Compiled by tests/test_kernel_source.py with
//   g++ -std=c++17 -O1 -I<repo>/kernels host_shim.cpp
// It includes the real header, supplies host versions of the two CuPy types
// the header must handle (float16, complex<T>), and runs the backend's
// operation strings verbatim inside a loop shaped like CuPy's CUPY_FOR, so a
// bug in the header or in the index arithmetic of those strings shows up here
// without a GPU.
//
// Protocol: one case per stdin line, one answer per stdout line.
//   E <dtype> <bits> <B> <R> <C> s <k>
//   E <dtype> <bits> <B> <R> <C> m <k_0> ... <k_{B-1}>
//       -> hex of the raw bytes of the whole (B, R, C) output, C order.
//   S <dtype> <bits> <B> <R> <C> s <k> <n> <i_1> ... <i_n>
//   S <dtype> <bits> <B> <R> <C> m <p> <b_1> <k_1> ... <b_p> <k_p> <n> <i_1> ...
//       -> hex of the raw bytes of the n sampled elements (flat indices i_j
//          into a virtual output that is never allocated); for `m` only the
//          listed matrices have a k, and an answer of MISSING means the
//          operation looked up another one (a wrong batch index).
// <dtype> is a NumPy dtype name, <bits> the index width (32: I = int,
// 64: I = long long). Input the host would never send (I = int with
// B*R*C >= 2**31, k outside [-R, C], ...) is rejected: exit status 2.

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <complex>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

// Host stand-ins with the names CuPy's typedefs use (`typedef float16 T;`,
// `typedef complex<float> T;`). _Float16 and std::complex share the storage
// layout of NumPy's float16 / complex64 / complex128, so bytes compare 1:1.
typedef _Float16 float16;
template <typename X>
using complex = std::complex<X>;

// Empty: plain host functions. Must come before the include.
#define EYELIKE_DEVICE
#include "eye.cuh"

// The backend's operation strings. The test passes its copies with -D so the
// strings checked here are the ones it holds; these defaults keep the file
// compilable on its own.
#ifndef EYELIKE_OP_SCALAR
#define EYELIKE_OP_SCALAR \
  out = eyelike_value<T, I>((I)(i % mat_size), n_cols, k);
#endif
#ifndef EYELIKE_OP_PER_MATRIX
#define EYELIKE_OP_PER_MATRIX                \
  I b = (I)i / mat_size;                     \
  out = eyelike_value<T, I>((I)i - b * mat_size, n_cols, kk[b]);
#endif

namespace {

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "host_shim: %s\n", msg.c_str());
  std::exit(2);
}

// Sample mode's `kk`: a sparse view of the per-matrix offsets, so a virtual
// batch of 2**40 matrices needs no storage. Indexed like CuPy's raw CArray.
template <typename I>
struct SparseOffsets {
  std::map<long long, I> known;
  mutable bool missing = false;
  I operator[](I b) const {
    auto it = known.find(static_cast<long long>(b));
    if (it == known.end()) {
      missing = true;
      return 0;
    }
    return it->second;
  }
};

// One element per j. `i` is ptrdiff_t as in CuPy's CUPY_FOR; `out`, `k`,
// `kk`, `mat_size`, `n_cols`, `T`, `I` carry the names the operation strings
// use. idx == nullptr means i = j (the full loop over the output).
template <typename T, typename I, typename KK>
void run_op(unsigned char* dst, std::ptrdiff_t count,
            const std::vector<std::ptrdiff_t>* idx, bool per_matrix,
            I mat_size, I n_cols, I k, const KK& kk) {
  T* _raw_out = reinterpret_cast<T*>(dst);
  for (std::ptrdiff_t j = 0; j < count; ++j) {
    std::ptrdiff_t i = idx ? (*idx)[j] : j;
    T& out = _raw_out[j];
    if (per_matrix) {
      EYELIKE_OP_PER_MATRIX
    } else {
      EYELIKE_OP_SCALAR
    }
  }
}

long long read_ll(std::istringstream& in) {
  std::string tok;
  if (!(in >> tok)) fail("missing number");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(tok.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') fail("bad number: " + tok);
  return v;
}

std::string to_hex(const unsigned char* p, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (std::size_t j = 0; j < n; ++j) {
    s[2 * j] = digits[p[j] >> 4];
    s[2 * j + 1] = digits[p[j] & 15];
  }
  return s;
}

struct Case {
  bool sample = false;
  bool per_matrix = false;
  long long B = 0, R = 0, C = 0, size = 0;
  long long k = 0;
  std::map<long long, long long> kk;  // batch index -> offset
  std::vector<std::ptrdiff_t> idx;    // sample mode only
};

template <typename T, typename I>
std::string run_case(const Case& c) {
  // What the host guarantees for this index width; refuse anything else.
  const long long imax = std::numeric_limits<I>::max();
  if (c.size > imax) fail("size does not fit the index type");
  auto check_k = [&](long long k) {
    if (k < -c.R || k > c.C) fail("k not clamped into [-R, C]");
  };
  check_k(c.k);
  for (const auto& bk : c.kk) check_k(bk.second);

  const I mat_size = static_cast<I>(c.R * c.C);
  const I n_cols = static_cast<I>(c.C);
  const I k = static_cast<I>(c.k);
  const std::ptrdiff_t count =
      c.sample ? static_cast<std::ptrdiff_t>(c.idx.size()) : c.size;
  // 0xA5 fill: an element the loop forgot to write cannot pass as 0 or 1.
  std::vector<unsigned char> buf(static_cast<std::size_t>(count) * sizeof(T),
                                 0xA5);
  const std::vector<std::ptrdiff_t>* idx = c.sample ? &c.idx : nullptr;
  if (c.sample) {
    SparseOffsets<I> kk;
    for (const auto& bk : c.kk) kk.known[bk.first] = static_cast<I>(bk.second);
    run_op<T, I>(buf.data(), count, idx, c.per_matrix, mat_size, n_cols, k,
                 kk);
    if (kk.missing) return "MISSING";
  } else {
    std::vector<I> kk(static_cast<std::size_t>(c.per_matrix ? c.B : 0));
    for (const auto& bk : c.kk) kk[bk.first] = static_cast<I>(bk.second);
    run_op<T, I>(buf.data(), count, idx, c.per_matrix, mat_size, n_cols, k,
                 kk);
  }
  return to_hex(buf.data(), buf.size());
}

template <typename T>
std::string run_width(const Case& c, long long bits) {
  if (bits == 32) return run_case<T, int>(c);
  if (bits == 64) return run_case<T, long long>(c);
  fail("index width must be 32 or 64");
}

// dtype names -> the C types CuPy's _scalar.pyx maps them to.
std::string dispatch(const std::string& dt, const Case& c, long long bits) {
  if (dt == "bool") return run_width<bool>(c, bits);
  if (dt == "int8") return run_width<signed char>(c, bits);
  if (dt == "int16") return run_width<short>(c, bits);
  if (dt == "int32") return run_width<int>(c, bits);
  if (dt == "int64") return run_width<long long>(c, bits);
  if (dt == "uint8") return run_width<unsigned char>(c, bits);
  if (dt == "uint16") return run_width<unsigned short>(c, bits);
  if (dt == "uint32") return run_width<unsigned int>(c, bits);
  if (dt == "uint64") return run_width<unsigned long long>(c, bits);
  if (dt == "float16") return run_width<float16>(c, bits);
  if (dt == "float32") return run_width<float>(c, bits);
  if (dt == "float64") return run_width<double>(c, bits);
  if (dt == "complex64") return run_width<complex<float> >(c, bits);
  if (dt == "complex128") return run_width<complex<double> >(c, bits);
  fail("unknown dtype: " + dt);
}

std::string handle(const std::string& line) {
  std::istringstream in(line);
  std::string kind, dt, mode;
  if (!(in >> kind >> dt)) fail("bad line: " + line);
  Case c;
  if (kind == "S") {
    c.sample = true;
  } else if (kind != "E") {
    fail("unknown command: " + kind);
  }
  const long long bits = read_ll(in);
  c.B = read_ll(in);
  c.R = read_ll(in);
  c.C = read_ll(in);
  if (c.B <= 0 || c.R <= 0 || c.C <= 0)
    fail("empty outputs are never launched");
  long long rc = 0;
  if (__builtin_mul_overflow(c.R, c.C, &rc) ||
      __builtin_mul_overflow(rc, c.B, &c.size))
    fail("B*R*C does not fit ptrdiff_t");
  if (!(in >> mode)) fail("missing mode");
  if (mode == "s") {
    c.k = read_ll(in);
  } else if (mode == "m") {
    c.per_matrix = true;
    if (c.sample) {
      const long long p = read_ll(in);
      for (long long j = 0; j < p; ++j) {
        const long long b = read_ll(in);
        c.kk[b] = read_ll(in);
      }
    } else {
      if (c.B > (1LL << 24)) fail("batch too large for E mode");
      for (long long b = 0; b < c.B; ++b) c.kk[b] = read_ll(in);
    }
  } else {
    fail("mode must be s or m");
  }
  if (c.sample) {
    const long long n = read_ll(in);
    for (long long j = 0; j < n; ++j) {
      const long long i = read_ll(in);
      if (i < 0 || i >= c.size) fail("sample index out of range");
      c.idx.push_back(static_cast<std::ptrdiff_t>(i));
    }
  } else if (c.size > (1LL << 24)) {
    fail("E mode output too large; use S mode");
  }
  std::string extra;
  if (in >> extra) fail("trailing input: " + extra);
  return dispatch(dt, c, bits);
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const std::string answer = handle(line);
    std::fwrite(answer.data(), 1, answer.size(), stdout);
    std::fputc('\n', stdout);
  }
  return 0;
}
