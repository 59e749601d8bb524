/* XDMF sidecar of an HDF5 output file, so that ParaView (or VisIt) opens the snapshots as a
 * time series: OUT.xmf next to OUT.h5 with two temporal collections, "particles" (points with
 * radius, velocity, angular velocity, id, and input_index where the particles were renumbered) and
 * "contacts" (lines from body 0's end to body 1's centre, with force, force magnitude and gap per
 * line).
 *
 * The sidecar is valid XML after every snapshot: each particles grid is made in memory and
 * written over the closing tags, which follow it. A write that fails (a full disk) puts the
 * closing tags back where they stood and cuts what followed: the sidecar of the snapshots before.
 * The contacts collection is kept in memory and written by xdmf_close (so a killed run's sidecar
 * has the particles only; the HDF5 file has everything). */
#ifndef CDLAB_XDMF_H
#define CDLAB_XDMF_H

#include "status.h"

#include <stddef.h>

typedef struct xdmf xdmf;

/* A per-particle array of a snapshot beyond the standard ones: its dataset name in the
 * snapshot's group, XDMF attribute type (Scalar, Vector, Tensor) and the dimensions after the
 * particle count ("", "3", "3 3"). A list ends with name[0] == 0. */
typedef struct xdmf_field {
    const char *name, *type, *dims;
} xdmf_field;

/* OUT.h5 -> OUT.xmf (other names: name + ".xmf"); buf receives the sidecar's path. */
void xdmf_sidecar_path(const char *h5_path, char *buf, size_t n);
/* The HDF5 file that the sidecar xmf_path names (the base name in its first data item) into
 * buf: 1, or 0 where it names none (unreadable, not XDMF, or no snapshot written). */
int xdmf_sidecar_names(const char *xmf_path, char *buf, size_t n);
/* Creates (truncates) the sidecar file `path` for the HDF5 file h5_path (named in the sidecar by
 * its base name: the two live in one folder). */
status xdmf_create(xdmf **x, const char *path, const char *h5_path, diag *err);
/* Adds the snapshot in HDF5 group `group` (n particles, nc contacts) at time t, with the extra
 * particle fields (NULL: none); input_index nonzero: the file's /input_index (n values: the
 * particles were renumbered, particles.order) as each snapshot's attribute input_index; frozen
 * nonzero: the snapshot's `frozen` flags (uint8) as its attribute frozen. */
status xdmf_add_snapshot(xdmf *x, const char *group, double t, long n, long nc,
                         const xdmf_field *extra, int input_index, int frozen, diag *err);
/* Writes the contacts collection and closes; safe on NULL. */
status xdmf_close(xdmf *x, diag *err);

#endif
