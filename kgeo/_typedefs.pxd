# Fixed-width C types shared by the compiled modules (one place to change them).
ctypedef double float64_t
ctypedef float float32_t
ctypedef signed int int32_t
ctypedef signed long long int64_t
ctypedef Py_ssize_t intp_t
