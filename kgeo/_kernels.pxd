# Header of the kernel family: the solver cimports these to compute kernel rows
# without the GIL.
from kgeo._typedefs cimport float64_t, int32_t, int64_t, intp_t
from kgeo._parallel cimport flag_raise, flag_raised


cdef class RowSet:
    """CSR rows as the kernels read them, with per-row quantities precomputed."""
    cdef readonly intp_t n_rows
    cdef readonly intp_t n_features
    cdef const float64_t[::1] data        # transformed values (sqrt(p) on the simplex)
    cdef const int32_t[::1] indices       # sorted, distinct column indices
    cdef const int64_t[::1] indptr        # row pointers, n_rows + 1
    cdef const float64_t[::1] sq_norms    # squared L2 norm of each transformed row
    cdef readonly object arrays           # the owning NumPy arrays (keeps them alive)


cdef struct ListHead:
    # Where a block's posting list of one word lies (hashed PostingIndex).
    int32_t word                          # -1: an empty slot
    int32_t count
    int64_t start


cdef class PostingIndex:
    """Posting lists (column -> rows) of a RowSet, split into contiguous row blocks.

    The dot products of one row against every row of a block are accumulated
    word by word over the block's posting lists, so only shared words cost work.
    A word in a large share of a block's rows (and in 8 of them at least) is
    stored as a dense column of that block instead, read by a contiguous loop
    rather than a scatter.
    Where the blocks are many and small (``hashed``), each finds its lists
    through a hash table of its own words, and none has dense columns.
    """
    cdef readonly RowSet rows
    cdef readonly intp_t n_blocks
    cdef readonly intp_t n_dense          # dense (block, column) pairs
    cdef readonly bint hashed             # list heads in per-block hash tables, not colptr
    cdef const int64_t[::1] block_start   # first row of each block, n_blocks + 1
    cdef const int64_t[::1] colptr        # block b, column w: postings colptr[b*(F+1)+w] .. +1
    cdef const int32_t[::1] post_row      # row of each posting, relative to its block start
    cdef const float64_t[::1] post_val    # value of each posting
    cdef const int64_t[::1] dense_ptr     # block b, column w: its dense column in dense_val, or -1
    cdef const float64_t[::1] dense_val   # dense columns, each as long as its block
    cdef const ListHead* heads            # hashed: block b's table at head_start[b] ..
    cdef const int64_t[::1] head_start    # hashed: n_blocks + 1 offsets (powers of two apart)
    cdef const int32_t[::1] head_shift    # hashed: 32 - log2(block b's table size)
    cdef readonly object arrays


cdef class Kernel:
    cdef readonly bint on_simplex         # rows are mapped to sqrt(x / sum(x)) first
    cdef readonly bint geodesic           # a function of the angle arccos(<x, y>)
    cdef readonly float64_t shift         # constant added to every value
    cdef readonly bint overflowed         # some value came out beyond float64 (see poly); a flag
    cdef readonly bint precomputed        # a PrecomputedKernel: values read, not computed
    cdef readonly bint half_space         # rows are spherical normals (mu, sigma), read in the Poincare ball
    cdef intp_t map_dots(self, float64_t* dots, float64_t sq_x,
                         const float64_t* sq_y, float64_t* out,
                         intp_t n, float64_t near) noexcept nogil
    cdef float64_t at_angle(self, float64_t angle) noexcept nogil
    cdef float64_t at_gap(self, float64_t gap, float64_t sq_x, float64_t sq_y) noexcept nogil


cdef class PrecomputedKernel(Kernel):
    """A kernel given by its matrix: row r of the rows it reads is sample
    position[r] of the matrix."""
    cdef const float64_t[:, ::1] matrix   # k between the samples, as given
    cdef const int64_t[::1] position      # the matrix's sample of each row


cdef void kernel_block_row(Kernel kernel, RowSet X, intp_t i, PostingIndex Y,
                           intp_t block, float64_t* acc,
                           float64_t* out) noexcept nogil
cdef void kernel_block_part(Kernel kernel, RowSet X, intp_t i, PostingIndex Y,
                            intp_t block, intp_t lo, intp_t hi, float64_t* acc,
                            float64_t* out) noexcept nogil

cdef float64_t kernel_self(Kernel kernel, RowSet X, intp_t i) noexcept nogil


# Threads for a parallel loop over ``work`` values (1 below the bound).
cdef int threads_for(int n_threads, int64_t work) noexcept nogil
