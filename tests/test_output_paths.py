"""Where drasat's output goes (issue 24): what is at an output path is written, never replaced.

A link is followed and its target replaced whole (the temporary beside the target, the link kept); a FIFO or a
device is written straight through, and a failed write there is an error naming the path (exit 2), never
"wrote". Standard output that cannot be written (a full disk) is an error on stderr for every command, and a
reader that went away (``drasat ... | head -1``) ends the run quietly, as kubectl's does.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_first_contact import EXAMPLES, run

MEMORY_MAJOR = 1  # Linux's memory devices: 1,3 is /dev/null, 1,7 is /dev/full
NULL, FULL = 3, 7
PAGE = "<!DOCTYPE html>"
WRITERS = {  # an option that writes FILE, and the command line around it
    "html": ["inventory", "--html"],
    "state": ["solve", "--node", "gpu-node-1", "--claims", "default/single-gpu", "--output-state"],
}


def write(kind: str, path: Path | str) -> list[str]:
    return [*WRITERS[kind], str(path), EXAMPLES]


def device(folder: Path, minor: int) -> Path:
    """A memory device of our own in ``folder`` (the system's /dev is never a test's target)."""
    path = folder / f"device-{minor}"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(MEMORY_MAJOR, minor))
    except (PermissionError, AttributeError):
        pytest.skip("making a device needs root (CAP_MKNOD) on Linux")
    return path


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("kind", WRITERS)
def test_a_link_is_followed_its_target_replaced_and_the_link_kept(tmp_path: Path, kind: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "elsewhere" / "real"
    target.write_text("old\n")
    link = tmp_path / "link"
    link.symlink_to(target)
    result = run(*write(kind, link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() != "old\n" and target.stat().st_size > 1000
    assert listing(tmp_path / "elsewhere") == ["real"] and listing(tmp_path) == ["elsewhere", "link"]


def test_a_dangling_link_creates_its_target_where_the_folder_exists(tmp_path: Path) -> None:
    link = tmp_path / "map.html"
    link.symlink_to("made.html")  # relative: beside the link
    result = run(*write("html", link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and (tmp_path / "made.html").read_text().startswith(PAGE)
    lost = tmp_path / "lost.html"
    lost.symlink_to(tmp_path / "no-such-folder" / "x.html")
    refused = run(*write("html", lost))
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"error: cannot write {lost}: it links to {tmp_path}/no-such-folder/x.html, "
        f"and there is no folder {tmp_path}/no-such-folder (drasat creates none)\n"
    )
    assert lost.is_symlink() and listing(tmp_path) == ["lost.html", "made.html", "map.html"]


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "map.html"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run(*write("html", fifo))
    reader.join(30)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and listing(tmp_path) == ["map.html"]
    assert received and received[0].decode().startswith(PAGE)


@pytest.mark.parametrize("kind", WRITERS)
def test_a_device_is_written_through_and_a_full_one_is_an_error(tmp_path: Path, kind: str) -> None:
    null = device(tmp_path, NULL)
    written = run(*write(kind, null))
    assert written.exit_code == 0, written.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    full = device(tmp_path, FULL)
    link = tmp_path / "link"
    link.symlink_to(full)
    for path in (full, link):
        failed = run(*write(kind, path))
        assert failed.exit_code == 2 and failed.stdout == "", failed.output
        assert failed.stderr == f"error: cannot write {path}: No space left on device\n"
        assert "wrote" not in failed.output
    assert stat.S_ISCHR(os.lstat(full).st_mode) and link.is_symlink()
    assert listing(tmp_path) == ["device-3", "device-7", "link"]


def test_a_file_where_a_folder_should_be_is_named_as_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    for args in (
        write("html", afile / "x.html"),
        write("state", afile / "deeper" / "x.yaml"),
        ["metadata", "--out", str(afile / "meta"), EXAMPLES],
    ):
        result = run(*args)
        assert result.exit_code == 2 and result.stdout == "", args
        assert f": {afile} is a file, not a folder\n" in result.stderr, result.stderr
    html = run(*write("html", afile / "x.html"))
    assert html.stderr == f"error: cannot write {afile}/x.html: {afile} is a file, not a folder\n"


def drasat_process(*args: str, stdout: int | object) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "drasat.cli", *args]
    return subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(
    "args",
    [
        ["inventory", "-o", "json", EXAMPLES],
        ["inventory", "--html", "-", EXAMPLES],
        ["validate", EXAMPLES],
        ["solve", "--node", "gpu-node-1", "--claims", "default/single-gpu", "-o", "name", EXAMPLES],
        ["--version"],
        ["solve", "--help"],
    ],
)
def test_standard_output_that_cannot_be_written_is_an_error(tmp_path: Path, args: list[str]) -> None:
    with open(device(tmp_path, FULL), "w") as full:
        process = drasat_process(*args, stdout=full)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 2
    assert stderr.splitlines()[-1:] == ["error: writing standard output: No space left on device"], stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr


def test_a_closed_standard_output_is_an_error_only_when_written(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "drasat.cli", "inventory"]
    closed = {"capture_output": True, "text": True, "timeout": 120, "preexec_fn": lambda: os.close(1)}  # `>&-`
    printed = subprocess.run([*command, EXAMPLES], **closed)  # type: ignore[call-overload]
    assert (printed.returncode, printed.stderr) == (2, "error: writing standard output: Bad file descriptor\n")
    page = tmp_path / "map.html"
    quiet = subprocess.run([*command, "--html", str(page), EXAMPLES], **closed)  # type: ignore[call-overload]
    assert quiet.returncode == 0 and page.read_text().startswith(PAGE), quiet.stderr


@pytest.mark.parametrize("args", [["inventory", "-o", "yaml", EXAMPLES], ["solve", "--help"]])
def test_a_reader_that_went_away_ends_the_run_quietly(args: list[str]) -> None:
    process = drasat_process(*args, stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()  # `| head -0`: nobody reads the answer
    _, stderr = process.communicate(timeout=120)
    assert stderr == ""
    assert process.returncode == 128 + signal.SIGPIPE  # 141, as kubectl (and any C program) ends on a broken pipe


def test_a_link_planted_at_a_temporary_name_is_never_written_through(tmp_path: Path) -> None:
    """Anyone who can write the folder could guess ``.map.html.PID.partial`` and plant a link there."""
    page, victim = tmp_path / "map.html", tmp_path / "victim"
    page.write_text("old\n")
    victim.write_text("precious\n")
    planted = tmp_path / f".map.html.{os.getpid()}.partial"  # the name the CLI (run in this process) once chose
    planted.symlink_to(victim)
    result = run(*write("html", page))
    assert result.exit_code == 0, result.stderr
    assert victim.read_text() == "precious\n" and planted.is_symlink()
    assert not page.is_symlink() and page.read_text().startswith(PAGE)
    assert listing(tmp_path) == sorted(["map.html", "victim", planted.name])


@pytest.mark.parametrize("kind", WRITERS)
def test_a_replaced_file_keeps_its_mode_and_owner_and_a_new_one_follows_the_umask(tmp_path: Path, kind: str) -> None:
    kept = tmp_path / "kept"
    kept.write_text("old\n")
    kept.chmod(0o600)
    owner = (4321, 8765) if os.geteuid() == 0 else (os.getuid(), os.getgid())  # only root gives files away
    os.chown(kept, *owner)
    new = tmp_path / "new"
    umask = os.umask(0o027)
    try:
        results = [run(*write(kind, kept)), run(*write(kind, new))]
    finally:
        os.umask(umask)
    assert [r.exit_code for r in results] == [0, 0], [r.stderr for r in results]
    found = kept.stat()
    assert (stat.S_IMODE(found.st_mode), found.st_uid, found.st_gid) == (0o600, *owner)
    assert kept.read_text() != "old\n"
    assert stat.S_IMODE(new.stat().st_mode) == 0o640  # 0o666 less the umask, as a shell's > makes it
    assert listing(tmp_path) == ["kept", "new"]


DESCRIPTORS = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]


def appended(path: Path, text: str) -> None:
    with open(path, "a") as out:
        out.write(text)


@pytest.mark.parametrize("named", DESCRIPTORS)
def test_standard_output_named_is_written_where_it_stands_never_replaced(tmp_path: Path, named: str) -> None:
    """``{ echo first; drasat inventory --html /dev/stdout ...; echo footer; } >> log``: all three in order."""
    log = tmp_path / "log.txt"
    log.write_text("first\n")
    with open(log, "a") as out:
        process = drasat_process("inventory", "--html", named, EXAMPLES, stdout=out)
        _, stderr = process.communicate(timeout=120)
    appended(log, "footer\n")
    assert process.returncode == 0, stderr
    text = log.read_text()
    assert text.startswith(f"first\n{PAGE}") and text.endswith("</html>\nfooter\n"), text[:200]
    assert listing(tmp_path) == ["log.txt"]


def test_a_descriptor_named_is_written_as_it_stands(tmp_path: Path) -> None:
    log, errors = tmp_path / "log.txt", tmp_path / "errors.txt"
    log.write_text("first\n")
    errors.write_text("first\n")
    with open(log, "a") as out, open(errors, "a") as err:
        command = [sys.executable, "-m", "drasat.cli", "inventory", "--html"]
        through_fd = subprocess.run(
            [*command, f"/dev/fd/{out.fileno()}", EXAMPLES], pass_fds=(out.fileno(),), capture_output=True, timeout=120
        )
        through_stderr = subprocess.run([*command, "/dev/stderr", EXAMPLES], stderr=err, timeout=120)
    assert (through_fd.returncode, through_stderr.returncode) == (0, 0), through_fd.stderr
    assert log.read_text().startswith(f"first\n{PAGE}") and log.read_text().endswith("</html>\n")
    assert errors.read_text().startswith(f"first\n{PAGE}")
    assert "</html>\nwrote /dev/stderr: " in errors.read_text()  # the page, then what inventory says of it
    unopened = subprocess.run([*command, "/dev/fd/9", EXAMPLES], capture_output=True, text=True, timeout=120)
    assert (unopened.returncode, unopened.stdout) == (2, "")
    assert unopened.stderr == "error: cannot write /dev/fd/9: Bad file descriptor\n"
    assert listing(tmp_path) == ["errors.txt", "log.txt"]


def test_a_descriptor_drasat_opened_itself_is_not_written_to() -> None:
    """/dev/fd/N names a descriptor the command was given: one drasat opened (its signal watcher's pipe, which
    a user may hit by chance) is refused, not written into, which would lose the output unseen."""
    from drasat.cli.output_file import write_output
    from drasat.models.errors import InputError

    read, write = os.pipe()  # Python's own descriptors are not inheritable, as drasat's are not
    try:
        with pytest.raises(InputError, match=f"cannot write /dev/fd/{write}: Bad file descriptor"):
            write_output(f"/dev/fd/{write}", "page")
        os.set_blocking(read, False)
        with pytest.raises(BlockingIOError):
            os.read(read, 10)  # nothing went in
    finally:
        os.close(read)
        os.close(write)


def test_standard_output_named_fails_as_standard_output_does(tmp_path: Path) -> None:
    """A reader gone: quiet, 141; a full disk: the message of ``-`` (not a file's), exit 2."""
    process = drasat_process("inventory", "--html", "/dev/stdout", EXAMPLES, stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (128 + signal.SIGPIPE, "")
    with open(device(tmp_path, FULL), "w") as full:
        process = drasat_process("inventory", "--html", "/dev/stdout", EXAMPLES, stdout=full)
        _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (2, "error: writing standard output: No space left on device\n")


NOBODY = 65534  # the ids a root test drops to, to write as a user who owns nothing


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder anyone may write (``0o777``), where nobody can reach it: pytest's own is root's alone."""
    if os.geteuid() != 0:
        pytest.skip("dropping to another user needs root")
    with tempfile.TemporaryDirectory() as made:
        os.chmod(made, 0o777)
        yield Path(made)


def as_nobody(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    drop = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd, **drop)


def drasat_as_nobody(*args: str) -> tuple[int, str, str]:
    """``drasat ARGS`` (exit code, stdout, stderr) in a child of this process that dropped to nobody's ids.
    A fork, not a new interpreter: the interpreter may lie where nobody can read it (root's home), and what
    it would import lazily is imported already when the same command ran here as root first."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's coverage is not collected
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = run(*args)
            os.write(writer, json.dumps([result.exit_code, result.stdout, result.stderr]).encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as answer:
        said = answer.read()
    os.waitpid(child, 0)
    code, stdout, stderr = json.loads(said)
    return code, stdout, stderr


@pytest.mark.parametrize(("owner", "mode"), [(0, 0o644), (NOBODY, 0o444)], ids=["roots", "own-read-only"])
@pytest.mark.parametrize("kind", [*WRITERS, "metadata"])
def test_a_file_the_user_may_not_write_is_refused_as_a_shells_redirection_refuses_it(
    open_folder: Path, kind: str, owner: int, mode: int
) -> None:
    """Renaming over a file needs only the folder's write permission; ``>`` needs the file's: drasat asks
    for what ``>`` asks, so a user never replaces (and takes over) root's file, nor their own read-only one."""
    out = open_folder / "meta"
    args = ["metadata", "--out", str(out), EXAMPLES] if kind == "metadata" else write(kind, open_folder / "out")
    assert run(*args).exit_code == 0  # as root: the file made, and all the command imports imported
    for folder, _, _ in os.walk(open_folder):
        os.chmod(folder, 0o777)
    (path,) = out.rglob("*.json") if kind == "metadata" else [open_folder / "out"]
    path.write_text("old\n")
    os.chown(path, owner, owner)
    path.chmod(mode)
    before = listing(path.parent)
    shell = as_nobody("sh", "-c", f"echo new > {path}", cwd=open_folder)
    assert shell.returncode != 0 and "Permission denied" in shell.stderr  # the behaviour to match
    assert drasat_as_nobody(*args) == (2, "", f"error: cannot write {path}: Permission denied\n")
    found = path.stat()
    assert (path.read_text(), found.st_uid, stat.S_IMODE(found.st_mode)) == ("old\n", owner, mode)
    assert listing(path.parent) == before
    path.chmod(0o666)  # one the user may write: replaced, as `>` would write it
    code, _, stderr = drasat_as_nobody(*args)
    assert code == 0, stderr
    assert path.read_text() != "old\n"
