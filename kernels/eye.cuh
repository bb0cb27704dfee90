// eyelike: the CUDA source of the CuPy backend's identity / shifted-diagonal
// kernels.
//
// Used as the `preamble` of the CuPy ElementwiseKernel backend (NVRTC puts it
// after CuPy's own headers and after the kernel's `typedef ... T;` lines) and
// compiled as plain C++ by the CPU test shim. It therefore includes nothing,
// relies on no CUDA-only type, and prefixes every name with `eyelike_`.
//
// Two operations, chosen on the host (src/eyelike/_backends/cupy/planning.py):
//
//   * the element path (`eyelike_value`): one thread per element, for any
//     memory layout of the output;
//   * the vector path (`eyelike_vector`, `eyelike_vector_batched_k`,
//     `eyelike_vector_batched_k_small`): for a C-contiguous output, each
//     thread finds the ones of one 64-byte chunk instead of testing every
//     element, and the 32 threads of a warp write their 2 KiB together as
//     four warp-wide runs of aligned 16-byte stores (see "The vector path"
//     below).
//
// Host-side contract (done in Python before launching):
//   * the output has shape (..., R, C) and size > 0; k has been clamped into
//     [-R, C];
//   * element path: any memory layout. CuPy's `i` is the element's position
//     in C order over the logical shape (its indexer maps that to the strided
//     address), so `i % (R*C)` is the position inside the matrix and
//     `i / (R*C)` the matrix, for a contiguous, strided or transposed output
//     alike. The index type I is `int` when B*R*C < 2**31, else `long long`,
//     so the only division is 32-bit whenever the output allows it;
//   * vector path: the output is C-contiguous, its address a multiple of the
//     element size; the launch has a multiple of 32 threads in blocks of a
//     multiple of 32 (CuPy's loop index i then numbers a warp's lanes
//     32w .. 32w + 31, and every lane of a warp runs the operation: its
//     warp-wide exchange needs all 32); the unsigned index type U is `unsigned int` when
//     the launch's B*R*C < 2**31 (a larger output of smaller matrices is
//     filled by several launches over slices of whole matrices), and
//     `unsigned long long` only for matrices of R*C >= 2**31; the launch
//     constants are those `planning.vector_scalars` computes (dividers, bit
//     patterns, the diagonal's extent); per-matrix k over matrices of at
//     least one chunk (64 bytes) goes to `eyelike_vector_batched_k`, over
//     smaller ones to `eyelike_vector_batched_k_small`.

#ifndef EYELIKE_EYE_CUH_
#define EYELIKE_EYE_CUH_

#ifndef EYELIKE_DEVICE
#define EYELIKE_DEVICE __device__
#endif

// The vector path's partial chunks (at most two per launch, and in 64-bit
// launches the rare chunks that cross matrices) run out of line: inlined,
// the compiler hoists their loop invariants into every thread.
#ifndef EYELIKE_NOINLINE
#ifdef __CUDACC__
#define EYELIKE_NOINLINE __noinline__
#else
#define EYELIKE_NOINLINE __attribute__((noinline))
#endif
#endif

// Before a loop whose trip count varies from thread to thread: kept rolled,
// so each iteration costs the same few instructions (the SASS test counts
// them), not an unrolled body plus a remainder loop. NVRTC and nvcc define
// __CUDACC__; a host compiler would warn about the unknown pragma.
#ifdef __CUDACC__
#define EYELIKE_ROLLED _Pragma("unroll 1")
#else
#define EYELIKE_ROLLED
#endif

// T(1) or T(0) for every supported output type. Built from a float literal
// because `float` is the one conversion all of them accept: CuPy's `float16`
// and `bfloat16` have implicit constructors from float (their int/bool ones
// are explicit), CuPy's `complex<T>` (thrust-style) has complex(const T& re)
// with imag = 0, and bool / integer / floating types convert exactly from
// 0.0f and 1.0f.
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

// ---------------------------------------------------------------------------
// The vector path
//
// In a row-major R x C matrix the ones sit at flat positions r*(C+1) + k: an
// arithmetic progression of step S = C + 1 from `lo` (the first one) up to
// `end` (one past the last). A thread takes the 64-byte chunk of
// N = 64 / sizeof(T) elements that starts at flat element g, splits g into
// matrix b and position q by a multiply-high with host-computed magic
// numbers, and builds an N-bit mask of the chunk's ones: the bits 0, S, 2S,
// ... (`comb`, from the host) shifted to the first one at or after q and cut
// at `end`, plus the same for the next matrix when the chunk runs into it.
// Over matrices smaller than a chunk, scalar k reads the mask from a
// repeating pattern (`rep`, from the host) instead, and per-matrix k
// (`eyelike_vector_batched_k_small`) ORs in the ones of every matrix the
// chunk touches, each one's whole matrix of bits made in registers from its
// k (at most N / (R*C) + 2 reads of kk per chunk). The warp then writes its
// 32 chunks (2 KiB) as four runs of 512 contiguous bytes: in run j, lane l
// stores 16-byte piece l % 4 of chunk 8j + l / 4, its bits shuffled over
// from the lane that found them (`eyelike_store_warp`). A warp's store
// instruction thus fills whole 128-byte lines where the launch's 16-byte
// boundary is 128-byte aligned (a fresh CuPy array's is), else four whole
// lines and two parts; a thread storing its own 64 bytes would spread each
// instruction over 16 lines in 16-byte halves of sectors, which ran at a
// third of the memory's bandwidth on an H200. The warp exchange assumes
// 32-lane warps (CUDA's; the CuPy backend keeps ROCm's 64-lane wavefronts
// off this path). All index arithmetic
// is unsigned (no sign fix-ups), in U: every value it forms stays below
// 2**32 in a 32-bit launch (fewer than 2**31 elements), and below 2**64 in
// a 64-bit one.
//
// Chunks are counted from the 16-byte boundary at or before the output's
// first element (`head` elements before it), so the stores are aligned for
// any element-aligned address; the first and last chunk may be partial and
// are written element by element (`eyelike_vector_edge`), by the lane that
// owns them; the warp's stores skip their pieces.
// ---------------------------------------------------------------------------

// Bytes whose ones a thread finds per step; its warp stores them as 16-byte
// pieces.
#define EYELIKE_CHUNK_BYTES 64u

// The warp-wide exchange of the vector path: which lanes hold a full chunk
// (bit l for lane l), and lane `lane`'s chunk mask. Every lane of the warp
// calls them. A host build (the CPU test shim) defines them itself, running
// a warp's lanes in turn, twice: once to record each lane's values, once to
// answer from the record.
#ifdef __CUDA_ARCH__
EYELIKE_DEVICE inline unsigned int eyelike_warp_ballot(bool full) {
  return __ballot_sync(0xffffffffu, full);
}
template <typename MaskT>
EYELIKE_DEVICE inline MaskT eyelike_warp_shuffle(MaskT mask,
                                                 unsigned int lane) {
  return __shfl_sync(0xffffffffu, mask, lane);
}
#else
unsigned int eyelike_warp_ballot(bool full);
template <typename MaskT>
MaskT eyelike_warp_shuffle(MaskT mask, unsigned int lane);
#endif

// High word of the double-width product.
EYELIKE_DEVICE inline unsigned int eyelike_mulhi(unsigned int a,
                                                 unsigned int b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return static_cast<unsigned int>(
      (static_cast<unsigned long long>(a) * b) >> 32);
#endif
}

EYELIKE_DEVICE inline unsigned long long eyelike_mulhi(unsigned long long a,
                                                       unsigned long long b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b);
#else
  return static_cast<unsigned long long>(
      (static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// n / d for a divisor d fixed for the launch (PyTorch's IntDivider, widened
// to 64 bits too): shift = ceil(log2 d), magic = floor(2**w * (2**shift - d)
// / d) + 1 for the width w of UIntT. Exact for n < 2**(w-1), where the sum
// cannot wrap (mulhi <= n); every numerator here is below that bound, but
// for the first chunk's wrapped start and the starts of the lanes past the
// output (a launch is whole warps), whose quotients go unused.
template <typename UIntT>
EYELIKE_DEVICE inline UIntT eyelike_divide(UIntT n, UIntT magic,
                                           UIntT shift) {
  return (eyelike_mulhi(n, magic) + n) >> shift;
}

// The chunk's mask type: one bit per element (64 one-byte elements need 64).
template <unsigned int N>
struct eyelike_mask_of {
  typedef unsigned int type;
};
template <>
struct eyelike_mask_of<64u> {
  typedef unsigned long long type;
};

// Bits [0, x) of a mask, for any x (a shift by the width would be undefined).
template <typename MaskT, typename UIntT>
EYELIKE_DEVICE inline MaskT eyelike_below(UIntT x) {
  constexpr unsigned int bits = 8u * static_cast<unsigned int>(sizeof(MaskT));
  return x >= bits ? ~MaskT(0)
                   : (MaskT(1) << static_cast<unsigned int>(x)) - MaskT(1);
}

// The launch constants of the vector path.
template <typename UIntT>
struct eyelike_grid {
  UIntT n;           // elements in the output
  UIntT head;        // elements between the 16-byte boundary and the output
  UIntT mat_size;    // R * C, and its divider
  UIntT mat_magic;
  UIntT mat_shift;
  UIntT step;        // S = C + 1, and its divider
  UIntT step_magic;
  UIntT step_shift;
  unsigned long long comb;  // bits 0, S, 2S, ... below 64
};

// One matrix's ones: lo, lo + S, lo + 2S, ... below end (none if end <= lo).
template <typename UIntT>
struct eyelike_diag {
  UIntT lo;
  UIntT end;
};

// The diagonal of a matrix from its k (clamped into [-R, C]); the host's
// `diag_extent` computes the same for scalar k. Unsigned arithmetic wraps
// modulo 2**w, and each result's true value lies in [0, R*C].
template <typename UIntT, typename KT>
EYELIKE_DEVICE inline eyelike_diag<UIntT> eyelike_diag_of(KT k, UIntT n_rows,
                                                          UIntT n_cols) {
  const UIntT ku = static_cast<UIntT>(k);
  // First one: row 0, column k; or row -k, column 0 (flat -k * C).
  const UIntT lo = k >= 0 ? ku : (UIntT(0) - ku) * n_cols;
  // Rows holding a one end at min(R, C - k); the last one is at
  // (rows - 1) * S + k, so end = rows * S + k - C.
  const UIntT c_minus_k = n_cols - ku;
  const UIntT rows = n_rows < c_minus_k ? n_rows : c_minus_k;
  return {lo, rows * (n_cols + 1u) + ku - n_cols};
}

// Scalar k: every matrix has the same diagonal. For matrices smaller than a
// chunk, bit j of the 128-bit `rep` (rep_hi:rep_lo) is the value at flat
// position j % (R*C).
template <typename UIntT>
struct eyelike_same_diag {
  static constexpr bool repeats = true;
  eyelike_diag<UIntT> diag;
  unsigned long long rep_lo;
  unsigned long long rep_hi;
  EYELIKE_DEVICE eyelike_diag<UIntT> at(UIntT) const { return diag; }
  // Bits q .. q + 63 of rep; q < R*C < 64.
  EYELIKE_DEVICE unsigned long long pattern(UIntT q) const {
    const unsigned int s = static_cast<unsigned int>(q);
    return s == 0u ? rep_lo : (rep_lo >> s) | (rep_hi << (64u - s));
  }
};

// Per-matrix k, read from kk (a device pointer, or any indexable in tests).
template <typename UIntT, typename KK>
struct eyelike_batched_diag {
  static constexpr bool repeats = false;
  KK kk;
  UIntT n_rows;
  UIntT n_cols;
  EYELIKE_DEVICE eyelike_diag<UIntT> at(UIntT b) const {
    return eyelike_diag_of<UIntT>(kk[b], n_rows, n_cols);
  }
  EYELIKE_DEVICE unsigned long long pattern(UIntT) const { return 0u; }
};

// Ones of a matrix in the chunk whose first element is at position q of it:
// bit d for position q + d (bits past the chunk are ignored).
template <typename MaskT, typename UIntT>
EYELIKE_DEVICE inline MaskT eyelike_window(const eyelike_grid<UIntT>& s,
                                           UIntT q, eyelike_diag<UIntT> d) {
  constexpr unsigned int bits = 8u * static_cast<unsigned int>(sizeof(MaskT));
  UIntT ahead;  // from q to the first one at or after it
  if (q <= d.lo) {
    ahead = d.lo - q;
  } else {
    // The ones are lo + j*S: the next is S - 1 - ((q - lo - 1) mod S) away.
    // q - lo - 1 < R*C < 2**(w-1): in eyelike_divide's exact range.
    const UIntT t = q - d.lo - 1u;
    const UIntT quo = eyelike_divide(t, s.step_magic, s.step_shift);
    ahead = s.step - 1u - (t - quo * s.step);
  }
  if (q >= d.end || ahead >= bits) return MaskT(0);
  return (static_cast<MaskT>(s.comb) << static_cast<unsigned int>(ahead)) &
         eyelike_below<MaskT>(d.end - q);
}

// Ones of the matrix that starts `start` elements into the chunk.
template <typename MaskT, typename UIntT>
EYELIKE_DEVICE inline MaskT eyelike_window_after(const eyelike_grid<UIntT>& s,
                                                 UIntT start,
                                                 eyelike_diag<UIntT> d) {
  constexpr unsigned int bits = 8u * static_cast<unsigned int>(sizeof(MaskT));
  const UIntT ahead = start + d.lo;
  if (ahead >= bits) return MaskT(0);
  return (static_cast<MaskT>(s.comb) << static_cast<unsigned int>(ahead)) &
         eyelike_below<MaskT>(start + d.end);
}

// Where a chunk starts: matrix b, position q in it.
template <typename UIntT>
struct eyelike_place {
  UIntT b;
  UIntT q;
};

template <typename UIntT>
EYELIKE_DEVICE inline eyelike_place<UIntT> eyelike_locate(
    const eyelike_grid<UIntT>& s, UIntT g) {
  const UIntT b = eyelike_divide(g, s.mat_magic, s.mat_shift);
  return {b, g - b * s.mat_size};
}

// The mask of the full chunk of N elements at place at: bit d set iff
// element d of the chunk is a one (bits N and up: anything). Needs the
// chunk inside the output, and R*C >= N or scalar k. Crosses = false: the
// caller has made sure the chunk stays in one matrix of R*C >= N.
template <unsigned int N, bool Crosses, typename UIntT, typename DiagsT>
EYELIKE_DEVICE inline typename eyelike_mask_of<N>::type eyelike_chunk_mask(
    const eyelike_grid<UIntT>& s, eyelike_place<UIntT> at,
    const DiagsT& diags) {
  typedef typename eyelike_mask_of<N>::type MaskT;
  if (Crosses && DiagsT::repeats && s.mat_size < N) {
    return static_cast<MaskT>(diags.pattern(at.q));
  }
  // Matrices of at least N elements: the chunk meets at most two of them.
  MaskT mask = eyelike_window<MaskT>(s, at.q, diags.at(at.b));
  if (!Crosses) return mask;
  const UIntT start = s.mat_size - at.q;
  // Scalar k: the next matrix's term costs no load and no branch (its bits
  // start at or past N when the chunk stays in matrix b). Per-matrix k: a
  // full chunk that runs into matrix b + 1 proves that matrix exists, so kk
  // is never read past its end.
  if (DiagsT::repeats || start < N) {
    mask |= eyelike_window_after<MaskT>(s, start, diags.at(at.b + 1u));
  }
  return mask;
}

// All the ones of a matrix smaller than a chunk, bit j for flat position j:
// R*C < N <= the mask's width, so the whole matrix fits in one mask, and
// lo and end, both in [0, R*C], are valid shift counts. The comb's bits 0,
// S, 2S, ... below 64 cover every position of the matrix.
template <typename MaskT, typename UIntT>
EYELIKE_DEVICE inline MaskT eyelike_matrix_bits(unsigned long long comb,
                                                eyelike_diag<UIntT> d) {
  return (static_cast<MaskT>(comb) << static_cast<unsigned int>(d.lo)) &
         ((MaskT(1) << static_cast<unsigned int>(d.end)) - MaskT(1));
}

// The mask of a full chunk over per-matrix k and matrices of R*C < N
// elements: the chunk starts q into matrix b and touches matrices b, b + 1,
// ... up to the one holding its last element, at most N / (R*C) + 2 of
// them. Each contributes its matrix_bits moved to where it starts in the
// chunk (right by q for matrix b, left by `start` for the others). Every
// matrix the loop reads starts inside this full chunk, so it is part of
// the output: kk is never read past its end. No division: the next
// matrix's place is the last one's plus R*C.
template <unsigned int N, typename UIntT, typename DiagsT>
EYELIKE_DEVICE inline typename eyelike_mask_of<N>::type eyelike_small_chunk_mask(
    const eyelike_grid<UIntT>& s, eyelike_place<UIntT> at,
    const DiagsT& diags) {
  typedef typename eyelike_mask_of<N>::type MaskT;
  MaskT mask = eyelike_matrix_bits<MaskT>(s.comb, diags.at(at.b)) >>
               static_cast<unsigned int>(at.q);
  UIntT b = at.b;
  // start < N and R*C < N: start + R*C cannot wrap.
  EYELIKE_ROLLED
  for (UIntT start = s.mat_size - at.q; start < N; start += s.mat_size) {
    ++b;
    mask |= eyelike_matrix_bits<MaskT>(s.comb, diags.at(b))
            << static_cast<unsigned int>(start);
  }
  return mask;
}

// The bytes of T(1) as little-endian 32-bit words (types under 4 bytes: the
// low bytes of one word). Folded to constants by the compiler for all but
// the half-precision classes, where it is a couple of instructions a thread.
template <typename OutT>
struct eyelike_one_words {
  static constexpr unsigned int count =
      sizeof(OutT) < 4u ? 1u : static_cast<unsigned int>(sizeof(OutT) / 4u);
  unsigned int w[count];
};

template <typename OutT>
EYELIKE_DEVICE inline eyelike_one_words<OutT> eyelike_one_bits() {
  const OutT one = eyelike_from_flag<OutT>(true);
  // Reading an object's bytes through unsigned char is always defined.
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&one);
  eyelike_one_words<OutT> o = {};
  for (unsigned int j = 0; j < sizeof(OutT); ++j) {
    o.w[j / 4u] |= static_cast<unsigned int>(bytes[j]) << (8u * (j % 4u));
  }
  return o;
}

struct alignas(16) eyelike_vec16 {
  unsigned int x, y, z, w;
};

// Writes the 16-byte piece at dst (16-byte aligned) from its bits: bit d for
// element d (bits past the piece's 16 / sizeof(T) elements: anything); one:
// T(1)'s words.
template <typename OutT>
EYELIKE_DEVICE inline void eyelike_store_piece(
    OutT* dst, unsigned int bits, const eyelike_one_words<OutT>& one) {
  constexpr unsigned int size = static_cast<unsigned int>(sizeof(OutT));
  unsigned int w[4];
  for (unsigned int j = 0; j < 4u; ++j) {
    if constexpr (size == 1u) {
      // 4 bits -> bytes of 0 or 1: x * 0x204081 puts bit i of x at bit 8i
      // (the four copies do not overlap), then scale to T(1)'s byte.
      const unsigned int x = (bits >> (4u * j)) & 15u;
      w[j] = ((x * 0x00204081u) & 0x01010101u) * one.w[0];
    } else if constexpr (size == 2u) {
      // 2 bits -> halves of 0 or 1: x * 0x8001 puts bit 1 at bit 16, and
      // keeps bit 0, for any x < 2**15 (x + (x << 15) has no carry).
      const unsigned int x = (bits & 0xffu) >> (2u * j);
      w[j] = ((x * 0x00008001u) & 0x00010001u) * one.w[0];
    } else {
      // Word j belongs to element j / (size / 4).
      constexpr unsigned int per = size / 4u;
      w[j] = ((bits >> (j / per)) & 1u) != 0u ? one.w[j % per] : 0u;
    }
  }
  *reinterpret_cast<eyelike_vec16*>(dst) = eyelike_vec16{w[0], w[1], w[2], w[3]};
}

// The warp's 32 chunks, from chunk i - lane on (2 KiB), written as four runs
// of 512 contiguous bytes: in run j, lane l stores piece l % 4 of chunk
// 8j + l / 4 of the warp, with that chunk's mask from the lane that made it.
// All: every chunk of the warp is full (fulls, the warp's ballot, is all
// ones), so the warp's first element is at or past the output's and each
// lane's four pieces lie at fixed distances from its first. Otherwise the
// pieces of partial chunks are left to their owners (`eyelike_vector_edge`).
template <bool All, unsigned int NChunk, typename OutT, typename UIntT,
          typename MaskT>
EYELIKE_DEVICE inline void eyelike_store_runs(OutT* out, UIntT i, UIntT head,
                                              unsigned int fulls, MaskT mask) {
  constexpr unsigned int n_piece = NChunk / 4u;  // elements per 16 bytes
  const unsigned int lane = static_cast<unsigned int>(i) & 31u;
  // The warp's first element: below the output's (wrapped, unsigned) only
  // for the first warp of an output with a head, never with All.
  const UIntT base = (i - lane) * NChunk - head;
  OutT* const first = out + (base + lane * n_piece);
  const unsigned int shift = (lane & 3u) * n_piece;
  const eyelike_one_words<OutT> one = eyelike_one_bits<OutT>();
  for (unsigned int j = 0; j < 4u; ++j) {
    const unsigned int owner = 8u * j + (lane >> 2);
    const MaskT bits = eyelike_warp_shuffle<MaskT>(mask, owner);
    if (All || ((fulls >> owner) & 1u) != 0u) {
      eyelike_store_piece<OutT>(
          All ? first + 32u * j * n_piece
              : out + (base + (32u * j + lane) * n_piece),
          static_cast<unsigned int>(bits >> shift), one);
    }
  }
}

// A warp with a partial chunk (the first and last warp of a launch, and in
// 64-bit launches the rare warps with a chunk across matrices): out of line,
// so that the common path carries no test per piece.
template <unsigned int NChunk, typename OutT, typename UIntT, typename MaskT>
EYELIKE_NOINLINE EYELIKE_DEVICE void eyelike_store_some(OutT* out, UIntT i,
                                                        UIntT head,
                                                        unsigned int fulls,
                                                        MaskT mask) {
  eyelike_store_runs<false, NChunk>(out, i, head, fulls, mask);
}

template <unsigned int NChunk, typename OutT, typename UIntT, typename MaskT>
EYELIKE_DEVICE inline void eyelike_store_warp(OutT* out, UIntT i, UIntT head,
                                              bool full, MaskT mask) {
  const unsigned int fulls = eyelike_warp_ballot(full);
  if (fulls != 0xffffffffu) {
    eyelike_store_some<NChunk>(out, i, head, fulls, mask);
    return;
  }
  eyelike_store_runs<true, NChunk>(out, i, head, fulls, mask);
}

// A partial chunk: elements first .. first + count - 1, written to dst[0..]
// one by one with a plain division (the first and last thread with
// elements run this, and in 64-bit launches the threads whose chunk crosses
// two matrices).
template <typename OutT, typename UIntT, typename DiagsT>
EYELIKE_NOINLINE EYELIKE_DEVICE void eyelike_vector_edge(OutT* dst,
                                                         UIntT first,
                                                         UIntT count,
                                                         UIntT mat_size,
                                                         UIntT step,
                                                         DiagsT diags) {
  for (UIntT j = 0; j < count; ++j) {
    const UIntT e = first + j;
    const UIntT b = e / mat_size;
    const UIntT q = e - b * mat_size;
    const eyelike_diag<UIntT> d = diags.at(b);
    dst[j] = eyelike_from_flag<OutT>(q >= d.lo && q < d.end &&
                                     (q - d.lo) % step == 0u);
  }
}

// Thread i's chunk: chunk i counted from the 16-byte boundary at or before
// the output (its first element is p - head), clipped to the output. A full
// chunk (four 16-byte pieces, stored by its warp) lies at place `at`; a
// partial one (the first and last chunk, and in 64-bit launches the rare
// chunks that cross matrices) is written element by element, and a chunk
// past the output (a lane that rounds the launch up to whole warps) not at
// all.
template <typename UIntT>
struct eyelike_chunk {
  UIntT p;
  bool full;
  eyelike_place<UIntT> at;
};

// 64-bit index arithmetic is only launched for matrices of 2**31 elements or
// more (smaller matrices of a larger output are filled by 32-bit launches
// over slices of whole matrices): there a chunk that runs into the next
// matrix occurs once per 2**25 chunks at most, and goes the element-wise
// way, which keeps the wide kernel's common path short.
template <unsigned int NChunk, typename UIntT>
EYELIKE_DEVICE inline eyelike_chunk<UIntT> eyelike_chunk_of(
    const eyelike_grid<UIntT>& s, UIntT i) {
  constexpr bool huge = sizeof(UIntT) > 4u;
  const UIntT p = i * NChunk;
  // Located before the partial test (for the first chunk p - head wraps:
  // unsigned, and unused then), so the test can ask whether it crosses.
  const eyelike_place<UIntT> at = eyelike_locate(s, p - s.head);
  // head < 16 / sizeof(T) < NChunk, so p + NChunk - head > 0.
  const bool full = p >= s.head && p + NChunk - s.head <= s.n &&
                    !(huge && s.mat_size - at.q < NChunk);
  return {p, full, at};
}

// The elements [first, first + count) of a partial chunk.
template <typename UIntT>
struct eyelike_range {
  UIntT first;
  UIntT count;
};

template <unsigned int NChunk, typename UIntT>
EYELIKE_DEVICE inline eyelike_range<UIntT> eyelike_edge_range(
    const eyelike_grid<UIntT>& s, UIntT p) {
  const UIntT first = p < s.head ? UIntT(0) : p - s.head;
  const UIntT stop = p + NChunk - s.head < s.n ? p + NChunk - s.head : s.n;
  return {first, stop > first ? stop - first : UIntT(0)};
}

// One thread's work: chunk i's mask, or its elements if it is partial, then
// its share of the warp's stores. Small: per-matrix k over matrices smaller
// than a chunk (eyelike_small_chunk_mask), a kernel of its own so that the
// others carry neither its loop nor a branch to it.
template <bool Small, typename OutT, typename UIntT, typename DiagsT>
EYELIKE_DEVICE inline void eyelike_vector_step(OutT* out, UIntT i,
                                               const eyelike_grid<UIntT>& s,
                                               const DiagsT& diags) {
  constexpr unsigned int n_chunk =
      EYELIKE_CHUNK_BYTES / static_cast<unsigned int>(sizeof(OutT));
  constexpr bool crosses = sizeof(UIntT) == 4u;
  typedef typename eyelike_mask_of<n_chunk>::type MaskT;
  const eyelike_chunk<UIntT> c = eyelike_chunk_of<n_chunk>(s, i);
  MaskT mask = 0u;
  if (!c.full) {
    const eyelike_range<UIntT> r = eyelike_edge_range<n_chunk>(s, c.p);
    if (r.count != 0u) {
      eyelike_vector_edge<OutT, UIntT, DiagsT>(out + r.first, r.first,
                                               r.count, s.mat_size, s.step,
                                               diags);
    }
  } else if constexpr (Small) {
    mask = eyelike_small_chunk_mask<n_chunk>(s, c.at, diags);
  } else {
    mask = eyelike_chunk_mask<n_chunk, crosses>(s, c.at, diags);
  }
  eyelike_store_warp<n_chunk, OutT>(out, i, s.head, c.full, mask);
}

// The kernel operation for scalar k (diagonal extent lo/end from the host).
template <typename OutT, typename UIntT>
EYELIKE_DEVICE inline void eyelike_vector(
    OutT* out, UIntT i, UIntT n, UIntT head, UIntT mat_size, UIntT mat_magic,
    UIntT mat_shift, UIntT step, UIntT step_magic, UIntT step_shift,
    unsigned long long comb, UIntT lo, UIntT end, unsigned long long rep_lo,
    unsigned long long rep_hi) {
  const eyelike_grid<UIntT> s = {n,    head,       mat_size,   mat_magic, mat_shift,
                                 step, step_magic, step_shift, comb};
  const eyelike_same_diag<UIntT> diags = {{lo, end}, rep_lo, rep_hi};
  eyelike_vector_step<false, OutT, UIntT>(out, i, s, diags);
}

// The kernel operation for per-matrix k (kk: one signed k per matrix) over
// matrices of at least one chunk.
template <typename OutT, typename UIntT, typename KT>
EYELIKE_DEVICE inline void eyelike_vector_batched_k(
    OutT* out, UIntT i, UIntT n, UIntT head, UIntT mat_size, UIntT mat_magic,
    UIntT mat_shift, UIntT step, UIntT step_magic, UIntT step_shift,
    unsigned long long comb, UIntT n_rows, const KT* kk) {
  const eyelike_grid<UIntT> s = {n,    head,       mat_size,   mat_magic, mat_shift,
                                 step, step_magic, step_shift, comb};
  const eyelike_batched_diag<UIntT, const KT*> diags = {kk, n_rows,
                                                        step - 1u};
  eyelike_vector_step<false, OutT, UIntT>(out, i, s, diags);
}

// The kernel operation for per-matrix k over matrices smaller than one
// chunk (R*C * sizeof(T) < 64 bytes; always a 32-bit launch). It needs no
// divider for S: a matrix's ones come from its k without division.
template <typename OutT, typename UIntT, typename KT>
EYELIKE_DEVICE inline void eyelike_vector_batched_k_small(
    OutT* out, UIntT i, UIntT n, UIntT head, UIntT mat_size, UIntT mat_magic,
    UIntT mat_shift, UIntT step, unsigned long long comb, UIntT n_rows,
    const KT* kk) {
  const eyelike_grid<UIntT> s = {n,    head, mat_size, mat_magic, mat_shift,
                                 step, 0u,   0u,       comb};
  const eyelike_batched_diag<UIntT, const KT*> diags = {kk, n_rows,
                                                        step - 1u};
  eyelike_vector_step<true, OutT, UIntT>(out, i, s, diags);
}

#endif  // EYELIKE_EYE_CUH_
