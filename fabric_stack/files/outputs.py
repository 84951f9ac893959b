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
rather than following it, and staging files are created ``O_EXCL | O_NOFOLLOW``.
Every directory (and link) on the way to a target must be owned by us or root: a link
or a directory another user planted in a shared ``/tmp`` is refused (#49). The
directory a target goes into is opened once (``O_NOFOLLOW``) and staging and renaming
go through that descriptor (``dir_fd``), so swapping it for a link mid-write cannot
redirect what is written. SIGINT, SIGTERM, SIGHUP and SIGQUIT are held back while
files are being staged or moved (see :func:`signals_held`), so an interrupted command
leaves either every file or none of them, and never a staging file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from fabric_stack.errors import OutputFileError

NAME_MAX = 255
"""Longest file name (bytes) on the filesystems fabric-stack writes to (ext4, xfs, tmpfs)."""


WRITTEN: list[Path] = []
"""Every file this process has written so far, in order (the interrupt line names them)."""

_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Defer the ending signals inside the block; one that arrived runs its handler after.

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


def _owner_error(path: Path, st: os.stat_result) -> OutputFileError:
    kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a directory"
    return OutputFileError(
        str(path),
        f"is {kind} owned by another user (uid {st.st_uid}), who could redirect what "
        "fabric-stack writes there; give a directory you own",
    )


def _check_owners(directory: Path, checked: set[Path]) -> None:
    """Refuse to write under a directory or link that a user other than us or root owns.

    Every existing component of the path as given and of the path it resolves to is
    ``lstat``-ed: a link planted in a shared ``/tmp`` (``--out-dir /tmp/out`` pointing at
    someone's home) or a directory another user made there (who can swap its entries for
    links at any moment) is one line, before anything is written. With every directory on
    the way owned by us or root, nobody else can rename one mid-write.
    """
    euid = os.geteuid()
    for start in (Path(os.path.abspath(directory)), Path(os.path.realpath(directory))):
        for d in (start, *start.parents):
            if d in checked:
                break  # its ancestors were checked along with it
            try:
                st = os.lstat(d)
            except OSError:
                continue  # made by this call (it is ours), or reported when staging
            if st.st_uid not in (euid, 0):
                raise _owner_error(d, st)
            checked.add(d)


def _open_dir(directory: Path) -> int:
    """A descriptor of ``directory`` (never through a link), checked to be ours or root's.

    Staging and renaming then go through this descriptor (``dir_fd``), so a directory
    swapped for a link after this point cannot redirect a single byte.
    """
    # The resolved path: a link of ours (or root's) on the way was checked and is followed
    # as usual; a link swapped in after that point fails O_NOFOLLOW.
    real = os.path.realpath(directory)
    try:
        fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and Path(real).is_symlink():
            raise OutputFileError(
                str(directory), "is a symbolic link; fabric-stack does not write through links"
            ) from None
        raise OutputFileError(str(directory), _cause(exc)) from None
    st = os.fstat(fd)
    if st.st_uid not in (os.geteuid(), 0):
        os.close(fd)
        raise _owner_error(directory, st)
    return fd


def _existing_mode(dir_fd: int, name: str, default_mode: int) -> int:
    """The mode of the file being replaced (lstat: a link planted since is not followed)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return default_mode
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else default_mode


_Staged = tuple[int, str, Path]
"""(directory descriptor, staging file name in it, target)."""


def _stage(
    target: Path,
    dir_fd: int,
    data: bytes,
    default_mode: int,
    staged: list[_Staged],
    forced: bool = False,
) -> None:
    """Write ``data`` to a temporary file beside ``target``, recorded in ``staged`` at once.

    The file is created ``O_EXCL | O_NOFOLLOW`` relative to the directory's descriptor.
    The record is made before the first byte is written, so whatever interrupts the
    write (an error, a signal) finds the staging file in ``staged`` and removes it.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        mode = default_mode if forced else _existing_mode(dir_fd, target.name, default_mode)
        for _ in range(100):
            tmp = f".{target.name[:40]}.{secrets.token_hex(4)}.tmp"
            try:
                fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
                break
            except FileExistsError:
                continue
        else:
            raise OutputFileError(str(target), "could not create a staging file beside it")
    except OSError as exc:
        raise OutputFileError(str(target), _cause(exc)) from None
    staged.append((dir_fd, tmp, target))
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
    except OSError as exc:
        raise OutputFileError(str(target), _cause(exc)) from None


def _clean_up(staged: list[_Staged], created: list[Path]) -> None:
    for dir_fd, tmp, _ in staged:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
    for d in reversed(created):
        with contextlib.suppress(OSError):  # not empty: someone wrote there meanwhile
            d.rmdir()


def write_files(
    files: Sequence[tuple[str | Path, str | bytes]], *, mode: int | None = None
) -> list[Path]:
    """Write every (path, content) or none of them; returns the paths in order.

    ``mode`` (e.g. 0o600 for a state file) replaces the umask's and the old file's mode.

    Raises :class:`OutputFileError` (one line: path and cause) and leaves no
    staged file and no directory it created behind.
    """
    targets = [_check_target(p) for p, _ in files]
    seen: set[Path] = set()
    for t in targets:
        if t in seen:  # a programming error, never user input
            raise RuntimeError(f"{t} would be written twice")
        seen.add(t)
    checked: set[Path] = set()
    for t in targets:
        _check_owners(t.parent, checked)
    new_mode = _umask_mode() if mode is None else mode
    staged: list[_Staged] = []
    created: list[Path] = []
    dirs: dict[Path, int] = {}
    # Held for the whole call: a signal mid-way would otherwise leave a half-written staging
    # file or half the renames done. Staging is disk-bound (a 32k-GPU plan is tens of MB),
    # so an interrupt waits at most that long and then ends the command as usual.
    with signals_held():
        try:
            for target, (_, data) in zip(targets, files, strict=True):
                _make_parents(target.parent, created)
                if target.parent not in dirs:
                    dirs[target.parent] = _open_dir(target.parent)
                raw = data.encode("utf-8") if isinstance(data, str) else data
                _stage(target, dirs[target.parent], raw, new_mode, staged, mode is not None)
            for dir_fd, tmp, target in staged:
                try:
                    os.replace(tmp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except OSError as exc:
                    raise OutputFileError(str(target), _cause(exc)) from None
        except BaseException:
            _clean_up(staged, created)
            raise
        finally:
            for fd in dirs.values():
                os.close(fd)
        WRITTEN.extend(targets)
    return targets


def write_file(path: str | Path, data: str | bytes, *, mode: int | None = None) -> Path:
    """Write one file through :func:`write_files` (all-or-nothing, one-line errors)."""
    return write_files([(path, data)], mode=mode)[0]


__all__ = ["NAME_MAX", "WRITTEN", "signals_held", "write_file", "write_files"]
