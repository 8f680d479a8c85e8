"""A file replaced whole: written under a temporary name beside it, then renamed over it.

An interrupted or failed write (Ctrl-C, a full disk) never leaves a half-written file under the real name,
and the temporary is removed (on a signal by :mod:`.interrupt`). The temporary's name is random and made with
``O_CREAT | O_EXCL | O_NOFOLLOW``, as :func:`tempfile.mkstemp` makes it — which takes no folder descriptor,
and :mod:`.output_tree` writes in folders it holds open: a guessable name (``.map.html.PID.partial``) lets
anyone who can write the folder plant a link there, and the writer would write the link's target and then
rename the link over the output.

A file is replaced only if the user may write it, as ``>`` writes it only then (Permission denied, else): the
rename itself needs only the folder's write permission, and would let a user replace root's file in a folder
anyone may write, or their own read-only one. The new file keeps the mode, owner and group of the one it
replaces, as a shell's ``>`` keeps them (an owner only root can give, so a file another user owns and lets
everyone write becomes the writer's; a group, any member of it); a new one gets ``0o666`` less the umask, as
``>`` makes it. A
hard link to the old file keeps the old content: the rename that makes a half-written file impossible gives
the name a new file. Writing in place when the file has other links would make the outcome depend on
something ``ls`` does not show, and a failed write would leave every link to it half written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from .interrupt import removed_if_interrupted

__all__ = ["NotRegular", "kind_of", "replace_in", "write_atomically"]


class NotRegular(OSError):
    """What is at an output name is neither a regular file nor absent (``mode``: its ``st_mode``)."""

    def __init__(self, mode: int) -> None:
        super().__init__(f"it is {kind_of(mode)}, not a regular file")
        self.mode = mode


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Replace ``path`` whole. A link is followed: the temporary goes beside its target and replaces the
    target, the link stays. Only for a regular file (or none yet): renaming over a FIFO or a device would
    replace it (see :mod:`.output_file`, which writes those straight through)."""
    target = os.path.realpath(path)
    folder = os.open(os.path.dirname(target), os.O_RDONLY | os.O_DIRECTORY)
    try:
        replace_in(folder, os.path.basename(target), data.encode() if isinstance(data, str) else data)
    finally:
        os.close(folder)


def replace_in(folder: int, name: str, data: bytes) -> None:
    """Replace ``name`` in the open folder ``folder`` by a file holding ``data``. The rename replaces the name
    itself: what is there must be a regular file or nothing (else :class:`NotRegular`), never followed."""
    replaced = _regular_or_none(folder, name)
    if replaced is not None:
        _check_writable(folder, name)
    mode = 0o666 if replaced is None else 0o600  # the kernel takes the umask off; a replaced file's mode follows
    while True:
        temporary = f".{name}.{secrets.token_hex(6)}.partial"
        with removed_if_interrupted(folder, temporary):
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                descriptor = os.open(temporary, flags, mode, dir_fd=folder)
            except FileExistsError:  # another's, of the same random name: left alone, another name tried
                continue
            try:
                _write(descriptor, data, replaced)
                os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary, dir_fd=folder)
                raise
            return


def kind_of(mode: int) -> str:
    """What a file of this mode is, as a message says it."""
    kinds = {stat.S_ISLNK: "a link", stat.S_ISDIR: "a folder", stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket"}
    kinds |= {stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device"}
    return next((kind for test, kind in kinds.items() if test(mode)), "a regular file")


def _regular_or_none(folder: int, name: str) -> os.stat_result | None:
    """The regular file ``name`` is (never through a link), None if there is none; else :class:`NotRegular`."""
    try:
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(found.st_mode):
        raise NotRegular(found.st_mode)
    return found


def _check_writable(folder: int, name: str) -> None:
    """PermissionError unless the user may write the file ``name``, as ``>`` would need: the rename needs only
    the folder's permission, and would let a user replace root's file (or their own read-only one). The
    kernel is asked first; only a refusal opens the file (never truncated), for the errno ``>`` would meet."""
    if _ACCESS_CHECKED and os.access(name, os.W_OK, dir_fd=folder, effective_ids=True, follow_symlinks=False):
        return
    os.close(os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder))


_ACCESS_CHECKED = all(
    os.access in supported for supported in (os.supports_dir_fd, os.supports_effective_ids, os.supports_follow_symlinks)
)


def _write(descriptor: int, data: bytes, replaced: os.stat_result | None) -> None:
    """``data``, whole and on disk, in the temporary, which takes the replaced file's owner, group and mode."""
    with open(descriptor, "wb") as out:
        if replaced is not None:
            owner = replaced.st_uid if os.geteuid() == 0 else -1
            with contextlib.suppress(PermissionError):  # a group the user is no member of: the user's own
                os.fchown(descriptor, owner, replaced.st_gid)
            os.fchmod(descriptor, stat.S_IMODE(replaced.st_mode))  # after chown, which clears the set-id bits
        out.write(data)
        out.flush()
        os.fsync(descriptor)
