"""The one output layer: every file fabric-stack writes goes through :func:`write_files`.

All targets of one command are *staged* first (each a temporary file in its
target's own directory, so the final rename never crosses a filesystem) and
moved into place only when every one of them was written. Any failure (an
unwritable directory, a file where a directory should be, a full disk, a name
too long) removes the staged files and the directories this call created, and
is one :class:`~fabric_stack.errors.OutputFileError` line naming the path and
the cause. New files get the mode the umask gives (like ``open(..., "w")``);
a replaced file keeps its mode.

The renames themselves can still fail half-way (e.g. a directory made read-only
between staging and moving); every check that can be made is made before the
first rename, so in practice a failure leaves the previous files untouched.

A target that is a symbolic link (to a file, a directory or nothing) is refused:
writing through it would replace whatever the link names, which is how a planted
link turns ``--out`` into "overwrite any file the user can write". The check is
an ``lstat`` of the target; the final ``rename`` replaces a link planted after it
rather than following it, and staging files are created ``O_EXCL`` (never through
a link). SIGINT and SIGTERM are held back while files are being staged or moved
(see :func:`signals_held`), so an interrupted command leaves either every file or
none of them, and never a staging file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from fabric_stack.errors import OutputFileError

NAME_MAX = 255
"""Longest file name (bytes) on the filesystems fabric-stack writes to (ext4, xfs, tmpfs)."""


WRITTEN: list[Path] = []
"""Every file this process has written so far, in order (the interrupt line names them)."""

_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Defer SIGINT/SIGTERM inside the block; a signal that arrived runs its handler after.

    Only the main thread receives Python signal handlers, so only it needs to hold them;
    other threads (in-process concurrent writers) run the block unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _umask_mode() -> int:
    """The mode a new regular file gets under the current umask (0666 & ~umask)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _cause(exc: OSError) -> str:
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return "a parent is a file, not a directory"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return str(exc.strerror or exc).rstrip(".")


def _check_target(path: str | Path) -> Path:
    """The target as a Path; refuses what can never be a file before anything is written."""
    if str(path) == "" or str(path).endswith(os.sep):
        raise OutputFileError(repr(str(path)), "expected a file name")
    if "\x00" in str(path):
        raise OutputFileError(repr(str(path)), "a file name cannot contain a NUL byte")
    p = Path(path)
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX for part in p.parts):
        raise OutputFileError(str(p), f"file name too long (at most {NAME_MAX} bytes)")
    try:
        st = os.lstat(p)  # lstat: a link is judged as the link, never as what it names
    except OSError:
        return p  # does not exist yet (or its directory does not: reported when staging)
    if stat.S_ISLNK(st.st_mode):
        raise OutputFileError(
            str(p),
            f"is a symbolic link (to {os.readlink(p)!r}); fabric-stack does not write "
            "through links: remove it or give the real path",
        )
    if stat.S_ISDIR(st.st_mode):
        raise OutputFileError(str(p), "is a directory (expected a file name)")
    if not stat.S_ISREG(st.st_mode):
        # Renaming over /dev/null or a FIFO would replace the device node itself.
        raise OutputFileError(
            str(p), "is a device or pipe, not a regular file (leave out --out for stdout)"
        )
    return p


def _make_parents(directory: Path, created: list[Path]) -> None:
    """``mkdir -p directory``, recording each directory it creates (for clean-up)."""
    missing: list[Path] = []
    d = directory
    while not d.exists() and not d.is_symlink() and d != d.parent:
        missing.append(d)
        d = d.parent
    if d.exists() and not d.is_dir():
        raise OutputFileError(str(d), "is a file, not a directory")
    for m in reversed(missing):
        try:
            m.mkdir()
        except FileExistsError:
            # Another writer (a thread of this process, another process) made it since the
            # walk above: a directory is what we wanted, and it is not ours to remove.
            if m.is_dir() and not m.is_symlink():
                continue
            raise OutputFileError(str(m), "is a file, not a directory") from None
        except OSError as exc:
            raise OutputFileError(str(m), _cause(exc)) from None
        created.append(m)


def _existing_mode(target: Path, default_mode: int) -> int:
    """The mode of the file being replaced (lstat: a link planted since is not followed)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return default_mode
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else default_mode


def _stage(target: Path, data: bytes, default_mode: int, staged: list[tuple[Path, Path]]) -> None:
    """Write ``data`` to a temporary file beside ``target``, recorded in ``staged`` at once.

    The record is made before the first byte is written, so whatever interrupts the
    write (an error, a signal) finds the staging file in ``staged`` and removes it.
    """
    try:
        mode = _existing_mode(target, default_mode)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputFileError(str(target), _cause(exc)) from None
    staged.append((Path(tmp), target))
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
    except OSError as exc:
        raise OutputFileError(str(target), _cause(exc)) from None


def _clean_up(staged: list[tuple[Path, Path]], created: list[Path]) -> None:
    for tmp, _ in staged:
        tmp.unlink(missing_ok=True)
    for d in reversed(created):
        with contextlib.suppress(OSError):  # not empty: someone wrote there meanwhile
            d.rmdir()


def write_files(files: Sequence[tuple[str | Path, str | bytes]]) -> list[Path]:
    """Write every (path, content) or none of them; returns the paths in order.

    Raises :class:`OutputFileError` (one line: path and cause) and leaves no
    staged file and no directory it created behind.
    """
    targets = [_check_target(p) for p, _ in files]
    seen: set[Path] = set()
    for t in targets:
        if t in seen:  # a programming error, never user input
            raise RuntimeError(f"{t} would be written twice")
        seen.add(t)
    mode = _umask_mode()
    staged: list[tuple[Path, Path]] = []
    created: list[Path] = []
    # Held for the whole call: a signal mid-way would otherwise leave a half-written staging
    # file or half the renames done. Staging is disk-bound (a 32k-GPU plan is tens of MB),
    # so an interrupt waits at most that long and then ends the command as usual.
    with signals_held():
        try:
            for target, (_, data) in zip(targets, files, strict=True):
                _make_parents(target.parent, created)
                raw = data.encode("utf-8") if isinstance(data, str) else data
                _stage(target, raw, mode, staged)
            for tmp, target in staged:
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise OutputFileError(str(target), _cause(exc)) from None
        except BaseException:
            _clean_up(staged, created)
            raise
        WRITTEN.extend(targets)
    return targets


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Write one file through :func:`write_files` (all-or-nothing, one-line errors)."""
    return write_files([(path, data)])[0]


__all__ = ["NAME_MAX", "WRITTEN", "signals_held", "write_file", "write_files"]
