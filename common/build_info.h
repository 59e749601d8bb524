/* Build provenance, echoed into every output file. */
#ifndef CDLAB_BUILD_INFO_H
#define CDLAB_BUILD_INFO_H

extern const char *const cdlab_version;
extern const char *const cdlab_git_commit; /* short hash, "-dirty" if the tree had changes */
extern const char *const cdlab_compiler;
extern const char *const cdlab_cflags;

#endif
