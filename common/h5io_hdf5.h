/* The HDF5 wrapper's insides, shared by its two files (common/h5io.c: writing, with the
 * ledger of what was written; common/h5io_read.c: reading, the closed file read back). The
 * one header of cdlab that includes hdf5.h (tools/check_layers.py): HDF5 leaks no further. */
#ifndef CDLAB_H5IO_HDF5_H
#define CDLAB_H5IO_HDF5_H

#include "h5io.h"
#include "h5ledger.h"

#include <hdf5.h>

static inline hid_t mem_type(h5type t)
{
    return t == H5IO_DOUBLE  ? H5T_NATIVE_DOUBLE
           : t == H5IO_INT32 ? H5T_NATIVE_INT32
           : t == H5IO_UINT8 ? H5T_NATIVE_UINT8
                             : H5T_NATIVE_INT64;
}
static inline size_t type_size(h5type t)
{
    return t == H5IO_INT32 ? 4 : t == H5IO_UINT8 ? 1 : 8;
}

/* Closes an HDF5 object of the writer (a dataspace, property list, dataset, attribute,
 * group or type: H5Idec_ref), 0 when the library refuses: a dataset's close writes what
 * it kept back (a contiguous dataset's sieve buffer; measured: a radius of 60 values lost to
 * an EIO that only the unchecked close of its dataset saw, the run then "completed"). */
static inline int closed(hid_t id)
{
    return id < 0 || H5Idec_ref(id) >= 0;
}

/* Before the library's first use: its errors are reported through diag, not printed; and it
 * does not close files at process exit. A file whose close failed (a full disk) stays open in
 * the library, and HDF5 1.10's exit handler then crashes in H5F__close_cb (measured: exit
 * status 139 after "No space left on device"); every file cdlab opens is closed explicitly. */
void h5io_init(void);

/* Why path could not be opened for reading as HDF5: the system's reason when the file cannot
 * be read at all (missing, a directory, no permission), else `what`. */
#define OPEN_FAILED "cannot open as HDF5 (not an HDF5 file, or damaged)"
status h5io_open_failed(const char *path, const char *what, diag *err);

/* The ledger l of what was written (lost: it could not be kept) against the closed file, opened
 * by the name open_as and named path in messages (h5io_read.c): every entry marked verified or
 * not, and an error naming how many differ and the first. */
status h5io_verify_file(const char *open_as, const char *path, h5ledger *l, int lost, diag *err);

#endif
