"""Text files written whole or not at all: studies' summaries and tables, the gallery, benchmark
results and the configs the scripts make.

    from textfile import write_text
    write_text(path, text)

`open(path, "w").write(text)`, which the scripts used, lost a write that failed without a word:
the error of the close came when Python dropped the file object, where it is not raised (a full
disk left an empty summary.md and exit status 0). write_text writes a temporary file beside
`path`, makes it durable and renames it over `path`: an error is raised, and `path` holds the old
text or the new one. write_whole does the same for any content (cdlab-py's plots)."""
import os
import tempfile


def write_whole(path, write, binary=False):
    """write(f) puts the content into the open file f; it lands at path whole or not at all."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".partial", dir=folder)
    except OSError as e:
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_text(path, text):
    write_whole(path, lambda f: f.write(text))
