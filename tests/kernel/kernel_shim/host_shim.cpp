// CPU stand-in for the CuPy ElementwiseKernels that use kernels/eye.cuh.
//
// Compiled by tests/kernel/test_kernel_source.py with
//   g++ -std=c++17 -O1 -I<repo>/kernels -include <ops.h> host_shim.cpp
// It includes the real header, supplies host versions of the CuPy types the
// header must handle (float16, bfloat16, complex<T>), and runs the
// backend's operation strings verbatim inside a loop shaped like CuPy's
// CUPY_FOR, with every kernel parameter a variable of the parameter's name,
// so a bug in the header or in the index arithmetic of those strings shows
// up here without a GPU. Nothing in it computes an expected value: the test
// compares its answers with NumPy.
//
// Protocol: one command per stdin line, one answer per stdout line.
//
// Element path (OP_SCALAR / OP_PER_MATRIX):
//   E <dtype> <bits> <B> <R> <C> s <k>
//   E <dtype> <bits> <B> <R> <C> m <k_0> ... <k_{B-1}>
//       -> hex of the raw bytes of the whole (B, R, C) output, C order.
//   S <dtype> <bits> <B> <R> <C> s <k> <n> <i_1> ... <i_n>
//   S <dtype> <bits> <B> <R> <C> m <p> <b_1> <k_1> ... <b_p> <k_p> <n> <i_1> ...
//       -> hex of the raw bytes of the n sampled elements (flat indices i_j
//          into a virtual output that is never allocated); for `m` only the
//          listed matrices have a k, and an answer of MISSING means the
//          operation looked up another one (a wrong batch index).
//
// Vector path (OP_VECTOR / OP_VECTOR_PER_MATRIX / OP_VECTOR_PER_SMALL_MATRIX),
// one launch of `plan`:
//   V <dtype> <bits> <B> <R> <C> <mode> <k...> threads=<t> [small=<w>]
//     <name>=<v> ...
//       (mode and k as for E; <name>=<v>: every scalar parameter of the
//       kernel, `head` included; small=<w,...>: the element widths in bytes
//       for which `plan` chose the small-matrix kernel, per-matrix k only.)
//       Runs the operation for i in [0, t), warp by warp (t: whole warps),
//       on an output whose address is
//       `head` elements past a 16-byte boundary, in a buffer filled with
//       0xA5; kk ends where an inaccessible page begins.
//       any_size=1 lets <bits> be 64 for matrices under 2**31 elements (the
//       64-bit kernel's arithmetic, checked byte for byte on small outputs).
//       -> hex of the buffer from 64 bytes before that boundary to 64 bytes
//          past the output's end: guard, head padding, output, guard.
//   O <dtype> <hex>
//       The bytes of T(1) for a dtype (from NumPy), for W. -> "ok".
//   M <R> <C> <k> <hex>
//       The value mask of one R x C matrix with offset k (from NumPy:
//       np.packbits(mask, bitorder="little")), for W. -> "ok".
//   W <bits> <B> <R> <C> <mode> <k...> cycle=<c> [small=<w,...>]
//     <name>=<v> ...
//       For every dtype given by O: runs the vector operation as V does,
//       with head = c % (16 / itemsize) and the thread count `plan` gives
//       (per-matrix k: the small-matrix kernel for the widths in small=,
//       the other per-matrix kernel for the rest; <name>=<v> are that one's
//       parameters, a superset of the small kernel's), then compares every
//       byte with the M masks and the O bytes, and the guards with 0xA5.
//       -> "ok", or what differed first.
//   X <dtype> <bits> <B> <R> <C> s <k> <name>=<v> ... ; <i_1> ... <i_n>
//   X <dtype> <bits> <B> <R> <C> m <p> <b_1> <k_1> ... [small=<w>]
//     <name>=<v> ... ; <i_1> ... <i_n>
//       Chunks i_j of a virtual output, through the header's per-thread
//       functions (eyelike_chunk_of, eyelike_chunk_mask or
//       eyelike_small_chunk_mask or, for a partial chunk,
//       eyelike_vector_edge), never allocated.
//       -> per chunk "<first>:<count>:<hex of the values' bits, little>",
//          space-separated; MISSING as for S.
//   D <bits> <magic> <shift> <n_1> ... <n_m>
//       -> eyelike_divide(n_j, magic, shift) for each n_j.
//   F <B> <j>
//       Reads element j of a fenced kk of B int32 offsets, as the vector
//       commands place it. -> its value (0) for j < B; j = B must crash
//       (SIGSEGV): the proof that the fence catches a read past kk's end.
//
// <dtype> is a NumPy dtype name, <bits> the index width (32: I = int and
// U = unsigned int; 64: long long and unsigned long long). Input the host
// would never send (I = int with B*R*C >= 2**31, k outside [-R, C], ...) is
// rejected: exit status 2.

#include <cerrno>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

// Host stand-ins with the names CuPy's typedefs use (`typedef float16 T;`,
// `typedef bfloat16 T;`, `typedef thrust::complex<float> T;`). _Float16 and
// std::complex share the storage layout of NumPy's float16 / complex64 /
// complex128; bfloat16 is the top half of a float (exact for 0 and 1, the
// only values the header makes), so bytes compare 1:1.
typedef _Float16 float16;
struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  bfloat16(float f) {  // NOLINT: implicit, as CuPy's bfloat16(float)
    unsigned int u = 0;
    std::memcpy(&u, &f, sizeof u);
    bits = static_cast<unsigned short>(u >> 16);
  }
};
template <typename X>
using complex = std::complex<X>;

// Empty: plain host functions. Must come before the include.
#define EYELIKE_DEVICE
#include "eye.cuh"

// The vector path's warp-wide exchange (eye.cuh declares it for host
// builds). The shim runs each warp's 32 lanes in turn, twice: the first
// pass records every lane's full flag and chunk mask (and stores nothing,
// its ballot answering "no lane is full"); the second answers from the
// record, as __ballot_sync and __shfl_sync would. A partial chunk's owner
// writes its elements in both passes, the same values. Each pass counts each
// lane's calls: the *_sync calls need every lane of the warp, each time, so
// a lane that skips or repeats one (its warp would hang or read garbage on
// a GPU) fails the shim.
struct WarpRecord {
  bool recording = false;
  unsigned int lane = 0;
  unsigned int fulls = 0;
  unsigned long long masks[32] = {};
  unsigned int ballots[32] = {};
  unsigned int shuffles[32] = {};
};
WarpRecord g_warp;

void check_warp_calls() {
  for (unsigned int l = 0; l < 32u; ++l) {
    if (g_warp.ballots[l] != 1u || g_warp.shuffles[l] != 4u) {
      std::fprintf(stderr,
                   "host_shim: lane %u made %u ballots and %u shuffles; "
                   "every lane makes 1 and 4\n",
                   l, g_warp.ballots[l], g_warp.shuffles[l]);
      std::exit(2);
    }
    g_warp.ballots[l] = 0u;
    g_warp.shuffles[l] = 0u;
  }
}

unsigned int eyelike_warp_ballot(bool full) {
  ++g_warp.ballots[g_warp.lane];
  if (g_warp.recording) {
    g_warp.fulls |= static_cast<unsigned int>(full) << g_warp.lane;
    return 0u;
  }
  return g_warp.fulls;
}

template <typename MaskT>
MaskT eyelike_warp_shuffle(MaskT mask, unsigned int lane) {
  if (lane >= 32u) {
    std::fprintf(stderr, "host_shim: shuffle from lane %u\n", lane);
    std::exit(2);
  }
  ++g_warp.shuffles[g_warp.lane];
  if (g_warp.recording) {
    g_warp.masks[g_warp.lane] = mask;
    return MaskT(0);
  }
  return static_cast<MaskT>(g_warp.masks[lane]);
}

// CuPy's loop over a vector launch, warp by warp in the two passes above;
// `i` is ptrdiff_t as in CUPY_FOR. The host launches whole warps.
#define EYELIKE_WARPS(threads, OP)                                  \
  if ((threads) % 32 != 0) fail("a vector launch is whole warps");  \
  for (std::ptrdiff_t w = 0; w < (threads); w += 32) {              \
    for (int pass = 0; pass < 2; ++pass) {                          \
      g_warp.recording = pass == 0;                                 \
      if (pass == 0) g_warp.fulls = 0u;                             \
      for (std::ptrdiff_t i = w; i < w + 32; ++i) {                 \
        g_warp.lane = static_cast<unsigned int>(i - w);             \
        OP                                                          \
      }                                                             \
      check_warp_calls();                                           \
    }                                                               \
  }

// The backend's operation strings, exactly as it holds them: the test makes
// a header of them (tests/kernel/test_kernel_source.py, ops_header) and
// passes it with -include. No copy here, which could drift from them.
#if !defined(EYELIKE_OP_SCALAR) || !defined(EYELIKE_OP_PER_MATRIX) ||         \
    !defined(EYELIKE_OP_VECTOR) || !defined(EYELIKE_OP_VECTOR_PER_MATRIX) || \
    !defined(EYELIKE_OP_VECTOR_PER_SMALL_MATRIX)
#error "compile with -include of the backend's operations (see ops_header)"
#endif

namespace {

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "host_shim: %s\n", msg.c_str());
  std::exit(2);
}

// Sample modes' `kk`: a sparse view of the per-matrix offsets, so a virtual
// batch of 2**40 matrices needs no storage. Indexed like CuPy's raw CArray;
// copies share the map and the flag (the header passes it by value).
template <typename I>
struct SparseOffsets {
  const std::map<long long, I>* known;
  bool* missing;
  I operator[](unsigned long long b) const {
    auto it = known->find(static_cast<long long>(b));
    if (it == known->end()) {
      *missing = true;
      return 0;
    }
    return it->second;
  }
};

// CuPy's CArray as the operation strings use it: a[j] is element j.
template <typename X>
struct FakeArray {
  X* data;
  X& operator[](std::ptrdiff_t j) const { return data[j]; }
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

long long parse_ll(const std::string& tok) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(tok.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || tok.empty()) fail("bad number: " + tok);
  return v;
}

unsigned long long parse_ull(const std::string& tok) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || tok.empty() || tok[0] == '-')
    fail("bad unsigned number: " + tok);
  return v;
}

long long read_ll(std::istringstream& in) {
  std::string tok;
  if (!(in >> tok)) fail("missing number");
  return parse_ll(tok);
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

std::vector<unsigned char> from_hex(const std::string& s) {
  if (s.size() % 2 != 0) fail("odd hex length");
  std::vector<unsigned char> out(s.size() / 2);
  for (std::size_t j = 0; j < out.size(); ++j) {
    out[j] = static_cast<unsigned char>(
        std::stoul(s.substr(2 * j, 2), nullptr, 16));
  }
  return out;
}

struct Case {
  bool sample = false;
  bool per_matrix = false;
  long long B = 0, R = 0, C = 0, size = 0;
  long long k = 0;
  std::map<long long, long long> kk;  // batch index -> offset
  std::vector<std::ptrdiff_t> idx;    // sample mode only
  // Vector path: the kernel's scalar parameters by name, the launch size.
  std::map<std::string, unsigned long long> scalars;
  long long threads = 0;
  long long cycle = 0;
  // V only: run a 64-bit launch on matrices the host would give a 32-bit
  // one (its arithmetic is exact at any size): the 64-bit kernel's stores
  // on outputs small enough to compare byte for byte.
  bool any_size = false;
  // Element widths for which the host chose the small-matrix kernel.
  std::set<std::size_t> small;
};

template <typename T, typename I>
std::string run_case(const Case& c) {
  // What the host guarantees for this index width; refuse anything else.
  const long long imax = std::numeric_limits<I>::max();
  if (c.size > imax) fail("size does not fit the index type");
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
    std::map<long long, I> known;
    bool missing = false;
    for (const auto& bk : c.kk) known[bk.first] = static_cast<I>(bk.second);
    SparseOffsets<I> kk{&known, &missing};
    run_op<T, I>(buf.data(), count, idx, c.per_matrix, mat_size, n_cols, k,
                 kk);
    if (missing) return "MISSING";
  } else {
    std::vector<I> kk(static_cast<std::size_t>(c.per_matrix ? c.B : 0));
    for (const auto& bk : c.kk) kk[bk.first] = static_cast<I>(bk.second);
    run_op<T, I>(buf.data(), count, idx, c.per_matrix, mat_size, n_cols, k,
                 kk);
  }
  return to_hex(buf.data(), buf.size());
}

// ------------------------------------------------------------ vector path

unsigned long long scalar(const Case& c, const char* name) {
  auto it = c.scalars.find(name);
  if (it == c.scalars.end()) fail(std::string("missing parameter ") + name);
  return it->second;
}

// The per-matrix offsets of a vector launch, ending exactly where an
// inaccessible page begins: a read of kk past its last element (which the
// header promises never to make) crashes the shim instead of passing.
template <typename K>
class FencedOffsets {
 public:
  explicit FencedOffsets(const Case& c) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t n = static_cast<std::size_t>(c.per_matrix ? c.B : 0);
    const std::size_t pages = (n * sizeof(K) + page - 1) / page + 1;
    bytes_ = (pages + 1) * page;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail("mmap failed");
    base_ = static_cast<unsigned char*>(p);
    if (mprotect(base_ + pages * page, page, PROT_NONE) != 0)
      fail("mprotect failed");
    data_ = reinterpret_cast<K*>(base_ + pages * page) - n;
    for (const auto& bk : c.kk) data_[bk.first] = static_cast<K>(bk.second);
  }
  ~FencedOffsets() { munmap(base_, bytes_); }
  FencedOffsets(const FencedOffsets&) = delete;
  FencedOffsets& operator=(const FencedOffsets&) = delete;
  const K* data() const { return data_; }

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
  K* data_ = nullptr;
};

// Whether the host chose the small-matrix kernel for T, refusing what it
// never sends: that kernel for scalar k or matrices of a chunk or more, the
// other per-matrix one for matrices under a chunk.
template <typename T>
bool small_kernel(const Case& c) {
  const bool small = c.small.count(sizeof(T)) != 0;
  // R*C * sizeof(T) < 64, without overflow for virtual outputs.
  const bool under =
      c.R * c.C < static_cast<long long>(EYELIKE_CHUNK_BYTES / sizeof(T));
  if (small && !c.per_matrix) fail("the small-matrix kernel is per-matrix k");
  if (c.per_matrix && small != under)
    fail(small ? "the small-matrix kernel for matrices of a chunk or more"
               : "the per-matrix kernel for matrices under one chunk");
  return small;
}

// Runs the vector operation for i in [0, threads) with `out` at `dst`, the
// kernel's parameters bound to variables of their names (U-typed ones
// narrowed as CuPy's uint32 parameters would be, refused if they do not
// fit).
template <typename T, typename U, typename K>
void run_vector_op(unsigned char* dst, const Case& c,
                   const FencedOffsets<K>& kk_store) {
  auto u = [&](const char* name) {
    const unsigned long long v = scalar(c, name);
    if (v > std::numeric_limits<U>::max()) fail("parameter too wide for U");
    return static_cast<U>(v);
  };
  const U n = u("n");
  const U head = u("head");
  const U mat_size = u("mat_size");
  const U mat_magic = u("mat_magic");
  const U mat_shift = u("mat_shift");
  const U step = u("step");
  const unsigned long long comb = scalar(c, "comb");
  FakeArray<T> out{reinterpret_cast<T*>(dst)};
  if (small_kernel<T>(c)) {
    const U n_rows = u("n_rows");
    FakeArray<const K> kk{kk_store.data()};
    EYELIKE_WARPS(c.threads, EYELIKE_OP_VECTOR_PER_SMALL_MATRIX)
    return;
  }
  const U step_magic = u("step_magic");
  const U step_shift = u("step_shift");
  if (c.per_matrix) {
    const U n_rows = u("n_rows");
    FakeArray<const K> kk{kk_store.data()};
    EYELIKE_WARPS(c.threads, EYELIKE_OP_VECTOR_PER_MATRIX)
  } else {
    const U lo = u("lo");
    const U end = u("end");
    const unsigned long long rep_lo = scalar(c, "rep_lo");
    const unsigned long long rep_hi = scalar(c, "rep_hi");
    EYELIKE_WARPS(c.threads, EYELIKE_OP_VECTOR)
  }
}

constexpr std::size_t kGuard = 64;  // bytes of 0xA5 on either side

// A 0xA5-filled buffer with a 16-byte aligned point `kGuard` bytes in.
struct Arena {
  std::vector<unsigned char> raw;
  unsigned char* boundary = nullptr;
  std::size_t span = 0;  // bytes from boundary - kGuard to the end guard
  void reset(std::size_t head_bytes, std::size_t out_bytes) {
    span = kGuard + head_bytes + out_bytes + kGuard;
    raw.assign(span + 16, 0xA5);
    auto addr = reinterpret_cast<std::uintptr_t>(raw.data()) + kGuard;
    boundary = raw.data() + kGuard + ((16 - addr % 16) % 16);
  }
  unsigned char* begin() const { return boundary - kGuard; }
};


void check_vector_case(const Case& c, long long bits) {
  if (bits == 32 && c.size >= (1LL << 31))
    fail("a 32-bit vector launch covers fewer than 2**31 elements");
  if (bits == 64 && c.R * c.C < (1LL << 31) && !c.any_size)
    fail("the 64-bit vector kernel is for matrices of 2**31+ elements");
  if (static_cast<long long>(scalar(c, "n")) != c.size) fail("n != B*R*C");
}

template <typename T, typename U>
std::string run_vector(const Case& c, long long bits) {
  typedef typename std::conditional<sizeof(U) == 4, int, long long>::type K;
  check_vector_case(c, bits);
  const std::size_t head = scalar(c, "head");
  if (head * sizeof(T) >= 16) fail("head is at most 15 bytes");
  Arena a;
  a.reset(head * sizeof(T), static_cast<std::size_t>(c.size) * sizeof(T));
  const FencedOffsets<K> kk(c);
  run_vector_op<T, U, K>(a.boundary + head * sizeof(T), c, kk);
  return to_hex(a.begin(), a.span);
}

// W: the references (M) and T(1) bytes (O) it compares with.
std::map<std::string, std::vector<unsigned char>> g_one;
std::map<std::string, std::vector<unsigned char>> g_masks;

std::string mask_key(long long R, long long C, long long k) {
  return std::to_string(R) + " " + std::to_string(C) + " " + std::to_string(k);
}

template <typename T, typename U>
std::string sweep_dtype(const Case& c, const std::string& dt, Case& run) {
  typedef typename std::conditional<sizeof(U) == 4, int, long long>::type K;
  const std::size_t size = sizeof(T);
  const auto& one = g_one.at(dt);
  if (one.size() != size) fail("O bytes of the wrong size for " + dt);
  const long long mat = c.R * c.C;
  // What `plan` gives for an address `head` elements past a boundary.
  const long long head = c.cycle % static_cast<long long>(16 / size);
  run.scalars["head"] = static_cast<unsigned long long>(head);
  const long long chunks =
      ((c.size + head) * static_cast<long long>(size) + 63) / 64;
  run.threads = (chunks + 31) / 32 * 32;  // whole warps
  Arena a;
  a.reset(head * size, static_cast<std::size_t>(c.size) * size);
  unsigned char* out = a.boundary + head * size;
  const FencedOffsets<K> kk(c);
  run_vector_op<T, U, K>(out, run, kk);
  const unsigned char* p = a.begin();
  for (std::size_t j = 0; j < kGuard + head * size; ++j) {
    if (p[j] != 0xA5) return dt + ": wrote before the output";
  }
  unsigned char zero[sizeof(T)] = {};
  for (long long b = 0; b < c.B; ++b) {
    const long long k = c.per_matrix ? c.kk.at(b) : c.k;
    auto it = g_masks.find(mask_key(c.R, c.C, k));
    if (it == g_masks.end()) fail("no M line for " + mask_key(c.R, c.C, k));
    const unsigned char* bitsv = it->second.data();
    const unsigned char* got = out + static_cast<std::size_t>(b * mat) * size;
    for (long long e = 0; e < mat; ++e, got += sizeof(T)) {
      const bool on = (bitsv[e / 8] >> (e % 8)) & 1;
      // A fixed-size memcmp: compiled to a compare or two per element.
      if (std::memcmp(got, on ? one.data() : zero, sizeof(T)) != 0) {
        return dt + ": element " + std::to_string(b * mat + e) + " head " +
               std::to_string(head) + " is " + to_hex(got, size);
      }
    }
  }
  const unsigned char* tail = out + static_cast<std::size_t>(c.size) * size;
  for (std::size_t j = 0; j < kGuard; ++j) {
    if (tail[j] != 0xA5) return dt + ": wrote past the output";
  }
  return "";
}

template <typename U>
std::string sweep(const Case& c, long long bits) {
  check_vector_case(c, bits);
  Case run = c;
  std::string err;
  for (const auto& entry : g_one) {
    const std::string& dt = entry.first;
    if (dt == "uint8") {
      err = sweep_dtype<unsigned char, U>(c, dt, run);
    } else if (dt == "bool") {
      err = sweep_dtype<bool, U>(c, dt, run);
    } else if (dt == "float16") {
      err = sweep_dtype<float16, U>(c, dt, run);
    } else if (dt == "bfloat16") {
      err = sweep_dtype<bfloat16, U>(c, dt, run);
    } else if (dt == "float32") {
      err = sweep_dtype<float, U>(c, dt, run);
    } else if (dt == "float64") {
      err = sweep_dtype<double, U>(c, dt, run);
    } else if (dt == "complex64") {
      err = sweep_dtype<complex<float>, U>(c, dt, run);
    } else if (dt == "complex128") {
      err = sweep_dtype<complex<double>, U>(c, dt, run);
    } else {
      fail("W sweeps bool, uint8, float16, bfloat16, float32, float64, "
           "complex64, complex128; not " + dt);
    }
    if (!err.empty()) return err;
  }
  return "ok";
}

// X: chunks of a virtual output through the header's per-thread functions.
template <typename T, typename U, typename DiagsT>
std::string sample_chunks(const eyelike_grid<U>& s, const DiagsT& diags,
                          const std::vector<unsigned long long>& chunks,
                          bool small) {
  constexpr unsigned int n_chunk =
      EYELIKE_CHUNK_BYTES / static_cast<unsigned int>(sizeof(T));
  constexpr bool crosses = sizeof(U) == 4u;
  const T one = eyelike_from_flag<T>(true);
  std::string answer;
  for (unsigned long long i : chunks) {
    const eyelike_chunk<U> c = eyelike_chunk_of<n_chunk>(s, static_cast<U>(i));
    std::vector<unsigned char> bitsv(8, 0);
    unsigned long long first = 0, count = 0;
    if (c.full) {
      first = c.p - s.head;
      count = n_chunk;
      const auto mask =
          small ? eyelike_small_chunk_mask<n_chunk>(s, c.at, diags)
                : eyelike_chunk_mask<n_chunk, crosses>(s, c.at, diags);
      for (unsigned int d = 0; d < n_chunk; ++d) {
        if ((mask >> d) & 1u) bitsv[d / 8] |= static_cast<unsigned char>(1u << (d % 8));
      }
    } else {
      const eyelike_range<U> r = eyelike_edge_range<n_chunk>(s, c.p);
      first = r.first;
      count = r.count;
      T vals[n_chunk];
      for (T& v : vals) v = eyelike_from_flag<T>(false);
      eyelike_vector_edge<T, U, DiagsT>(vals, r.first, r.count,
                                        s.mat_size, s.step, diags);
      for (unsigned long long d = 0; d < count; ++d) {
        if (std::memcmp(&vals[d], &one, sizeof(T)) == 0)
          bitsv[d / 8] |= static_cast<unsigned char>(1u << (d % 8));
      }
    }
    if (!answer.empty()) answer += ' ';
    answer += std::to_string(first) + ":" + std::to_string(count) + ":" +
              to_hex(bitsv.data(), (count + 7) / 8);
  }
  return answer;
}

template <typename T, typename U>
std::string run_sample_vector(const Case& c, long long bits,
                              const std::vector<unsigned long long>& chunks) {
  typedef typename std::conditional<sizeof(U) == 4, int, long long>::type K;
  check_vector_case(c, bits);
  auto u = [&](const char* name) {
    const unsigned long long v = scalar(c, name);
    if (v > std::numeric_limits<U>::max()) fail("parameter too wide for U");
    return static_cast<U>(v);
  };
  const bool small = small_kernel<T>(c);
  // The small-matrix kernel has no divider for S (it never divides by S).
  const eyelike_grid<U> s = {u("n"),
                             u("head"),
                             u("mat_size"),
                             u("mat_magic"),
                             u("mat_shift"),
                             u("step"),
                             small ? U(0) : u("step_magic"),
                             small ? U(0) : u("step_shift"),
                             scalar(c, "comb")};
  if (!c.per_matrix) {
    const eyelike_same_diag<U> diags = {
        {u("lo"), u("end")}, scalar(c, "rep_lo"), scalar(c, "rep_hi")};
    return sample_chunks<T, U>(s, diags, chunks, false);
  }
  std::map<long long, K> known;
  bool missing = false;
  for (const auto& bk : c.kk) known[bk.first] = static_cast<K>(bk.second);
  const eyelike_batched_diag<U, SparseOffsets<K>> diags = {
      SparseOffsets<K>{&known, &missing}, u("n_rows"), s.step - 1u};
  std::string answer = sample_chunks<T, U>(s, diags, chunks, small);
  return missing ? "MISSING" : answer;
}

// ------------------------------------------------------------- dispatch

enum class Kind { kElement, kVector, kSampleVector };

template <typename T>
std::string run_width(const Case& c, long long bits, Kind kind,
                      const std::vector<unsigned long long>& chunks) {
  if (bits != 32 && bits != 64) fail("index width must be 32 or 64");
  if (kind == Kind::kVector) {
    return bits == 32 ? run_vector<T, unsigned int>(c, bits)
                      : run_vector<T, unsigned long long>(c, bits);
  }
  if (kind == Kind::kSampleVector) {
    return bits == 32
               ? run_sample_vector<T, unsigned int>(c, bits, chunks)
               : run_sample_vector<T, unsigned long long>(c, bits, chunks);
  }
  return bits == 32 ? run_case<T, int>(c) : run_case<T, long long>(c);
}

// dtype names -> the C types CuPy's _scalar.pyx maps them to.
std::string dispatch(const std::string& dt, const Case& c, long long bits,
                     Kind kind,
                     const std::vector<unsigned long long>& chunks = {}) {
  if (dt == "bool") return run_width<bool>(c, bits, kind, chunks);
  if (dt == "int8") return run_width<signed char>(c, bits, kind, chunks);
  if (dt == "int16") return run_width<short>(c, bits, kind, chunks);
  if (dt == "int32") return run_width<int>(c, bits, kind, chunks);
  if (dt == "int64") return run_width<long long>(c, bits, kind, chunks);
  if (dt == "uint8") return run_width<unsigned char>(c, bits, kind, chunks);
  if (dt == "uint16") return run_width<unsigned short>(c, bits, kind, chunks);
  if (dt == "uint32") return run_width<unsigned int>(c, bits, kind, chunks);
  if (dt == "uint64")
    return run_width<unsigned long long>(c, bits, kind, chunks);
  if (dt == "float16") return run_width<float16>(c, bits, kind, chunks);
  if (dt == "bfloat16") return run_width<bfloat16>(c, bits, kind, chunks);
  if (dt == "float32") return run_width<float>(c, bits, kind, chunks);
  if (dt == "float64") return run_width<double>(c, bits, kind, chunks);
  if (dt == "complex64")
    return run_width<complex<float> >(c, bits, kind, chunks);
  if (dt == "complex128")
    return run_width<complex<double> >(c, bits, kind, chunks);
  fail("unknown dtype: " + dt);
}

// Shape and offsets, shared by every command: B R C, then `s <k>` or the
// per-matrix form (dense: B offsets; sparse: a count and (b, k) pairs).
void read_shape_and_k(std::istringstream& in, Case& c, bool sparse) {
  c.B = read_ll(in);
  c.R = read_ll(in);
  c.C = read_ll(in);
  if (c.B <= 0 || c.R <= 0 || c.C <= 0)
    fail("empty outputs are never launched");
  long long rc = 0;
  if (__builtin_mul_overflow(c.R, c.C, &rc) ||
      __builtin_mul_overflow(rc, c.B, &c.size))
    fail("B*R*C does not fit ptrdiff_t");
  std::string mode;
  if (!(in >> mode)) fail("missing mode");
  if (mode == "s") {
    c.k = read_ll(in);
  } else if (mode == "m") {
    c.per_matrix = true;
    if (sparse) {
      const long long p = read_ll(in);
      for (long long j = 0; j < p; ++j) {
        const long long b = read_ll(in);
        c.kk[b] = read_ll(in);
      }
    } else {
      if (c.B > (1LL << 24)) fail("batch too large for a dense k list");
      for (long long b = 0; b < c.B; ++b) c.kk[b] = read_ll(in);
    }
  } else {
    fail("mode must be s or m");
  }
  auto check_k = [&](long long k) {
    if (k < -c.R || k > c.C) fail("k not clamped into [-R, C]");
  };
  if (!c.per_matrix) check_k(c.k);
  for (const auto& bk : c.kk) {
    if (bk.first < 0 || bk.first >= c.B) fail("matrix index out of range");
    check_k(bk.second);
  }
}

// name=value tokens up to the end of the line or a lone ';'.
void read_named(std::istringstream& in, Case& c) {
  std::string tok;
  while (in >> tok) {
    if (tok == ";") return;
    const auto eq = tok.find('=');
    if (eq == std::string::npos) fail("expected name=value: " + tok);
    const std::string name = tok.substr(0, eq);
    const std::string value = tok.substr(eq + 1);
    if (name == "threads") {
      c.threads = parse_ll(value);
    } else if (name == "small") {
      std::stringstream widths(value);
      std::string w;
      while (std::getline(widths, w, ',')) {
        c.small.insert(static_cast<std::size_t>(parse_ull(w)));
      }
    } else if (name == "cycle") {
      c.cycle = parse_ll(value);
    } else if (name == "any_size") {
      c.any_size = parse_ll(value) != 0;
    } else {
      c.scalars[name] = parse_ull(value);
    }
  }
}

std::string handle(const std::string& line) {
  std::istringstream in(line);
  std::string kind;
  if (!(in >> kind)) fail("bad line: " + line);
  if (kind == "O") {
    std::string dt, hex;
    if (!(in >> dt >> hex)) fail("bad O line");
    g_one[dt] = from_hex(hex);
    return "ok";
  }
  if (kind == "M") {
    const long long R = read_ll(in), C = read_ll(in), k = read_ll(in);
    std::string hex;
    if (!(in >> hex)) fail("bad M line");
    auto bytes = from_hex(hex);
    if (static_cast<long long>(bytes.size()) != (R * C + 7) / 8)
      fail("M mask of the wrong length");
    g_masks[mask_key(R, C, k)] = std::move(bytes);
    return "ok";
  }
  if (kind == "D") {
    const long long bits = read_ll(in);
    std::string tok;
    std::vector<unsigned long long> v;
    while (in >> tok) v.push_back(parse_ull(tok));
    if (v.size() < 2) fail("D needs magic and shift");
    std::string answer;
    for (std::size_t j = 2; j < v.size(); ++j) {
      unsigned long long q = 0;
      if (bits == 32) {
        if (v[0] > 0xFFFFFFFFull || v[j] > 0xFFFFFFFFull)
          fail("32-bit divider input too wide");
        q = eyelike_divide<unsigned int>(static_cast<unsigned int>(v[j]),
                                         static_cast<unsigned int>(v[0]),
                                         static_cast<unsigned int>(v[1]));
      } else if (bits == 64) {
        q = eyelike_divide<unsigned long long>(v[j], v[0], v[1]);
      } else {
        fail("D width must be 32 or 64");
      }
      if (!answer.empty()) answer += ' ';
      answer += std::to_string(q);
    }
    return answer;
  }
  if (kind == "F") {
    Case f;
    f.per_matrix = true;
    f.B = read_ll(in);
    const long long j = read_ll(in);
    if (f.B <= 0 || j < 0 || j > f.B) fail("F reads kk[0 .. B]");
    for (long long b = 0; b < f.B; ++b) f.kk[b] = 0;
    const FencedOffsets<int> kk(f);
    // volatile: the read happens, even though its value is known.
    const volatile int* p = kk.data();
    return std::to_string(p[j]);
  }
  Case c;
  if (kind == "W") {
    const long long bits = read_ll(in);
    read_shape_and_k(in, c, false);
    read_named(in, c);
    if (bits == 32) return sweep<unsigned int>(c, bits);
    if (bits == 64) return sweep<unsigned long long>(c, bits);
    fail("index width must be 32 or 64");
  }
  std::string dt;
  if (!(in >> dt)) fail("bad line: " + line);
  const long long bits = read_ll(in);
  if (kind == "V") {
    read_shape_and_k(in, c, false);
    read_named(in, c);
    if (c.threads <= 0) fail("V needs threads=");
    return dispatch(dt, c, bits, Kind::kVector);
  }
  if (kind == "X") {
    c.sample = true;
    read_shape_and_k(in, c, true);
    read_named(in, c);
    std::string tok;
    std::vector<unsigned long long> chunks;
    while (in >> tok) chunks.push_back(parse_ull(tok));
    return dispatch(dt, c, bits, Kind::kSampleVector, chunks);
  }
  if (kind == "S") {
    c.sample = true;
  } else if (kind != "E") {
    fail("unknown command: " + kind);
  }
  read_shape_and_k(in, c, c.sample);
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
  return dispatch(dt, c, bits, Kind::kElement);
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
