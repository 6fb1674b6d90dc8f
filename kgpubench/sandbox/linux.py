"""Linux kernel isolation for the model sandbox: namespaces, a private root, capabilities, parent-death signals.

Standard library and ``ctypes`` only: this runs in the sandbox's launcher before anything else is imported.
The steps, in the order :mod:`kgpubench.sandbox.child` calls them:

1. :func:`unshare_all` (stage 1): new user, mount, network, PID, IPC and UTS namespaces. The launcher, still
   outside, writes the user namespace's id maps (:func:`write_id_maps`, :func:`id_maps`).
2. :func:`build_root` (stage 2, PID 1 of the new PID namespace): a tmpfs root holding read-only bind mounts
   of the directories the plan names (interpreter, site-packages, the kgpubench package), empty read-only
   masks over the package data, a minimal ``/dev``, a fresh ``/proc`` (read-only ``/proc/sys``), a
   size-limited private ``/tmp``; then ``pivot_root`` and a lazy unmount of the old root, so no host path is
   reachable any more.
3. :func:`drop_privileges`: empty capability sets and bounding set, ``no_new_privs``, not dumpable; the
   server also becomes the model's user (``nobody`` outside when the caller is root, see :func:`id_maps`).
4. :func:`install_seccomp` (the server, last): a seccomp filter, built with libseccomp through its ctypes binding
   ``pyseccomp`` (imported by :func:`load_seccomp` before the namespaces, while the library can still be found),
   refuses with ``EPERM`` the system calls that would open a channel to another sandbox running at the same
   time or to the next fold's (file locks, leases and directory notices on the shared read-only files,
   inotify/fanotify, the page cache: residency, eviction and non-blocking reads; SysV IPC, keyrings, grown
   pipes), nested namespaces (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*``
   flag; ``clone3``, whose flags a filter cannot read, answers ``ENOSYS`` so that libc falls back to ``clone``)
   and calls that only widen the kernel's surface (mount, ptrace, bpf, perf events, io_uring, modules, ...).

Bind sources are opened (``O_PATH``) before the staging tmpfs goes over ``/tmp`` and mounted through
``/proc/self/fd/N``, so a source under ``/tmp`` (a CI virtual environment) still works.
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
import signal

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
_OPTION_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
                 "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 15, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAP_VERSION_3 = 0x20080522
# pivot_root has no glibc wrapper; its number per architecture.
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217, "i686": 217}
NOBODY = 65534
DEVICES = ("null", "zero", "full", "random", "urandom")
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs")
# Host-wide counters of open files, inodes and dentries (another sandbox's opens move them): read as empty.
PROC_MASKED = ("sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state", "sys/fs/dentry-state")


# System calls refused (EPERM) in the model's process and everything it starts; see install_seccomp.
SECCOMP_DENY = (
    # file locks, leases and notices: two sandboxes share the same read-only inodes (/usr, the venv)
    "flock", "inotify_init", "inotify_init1", "fanotify_init", "fanotify_mark",
    # the page cache of shared files (the next fold's child or another sandbox reading it back): residency
    # probes, eviction (fadvise DONTNEED; madvise MADV_PAGEOUT and MADV_COLD are refused below) and the
    # asynchronous reads that answer "not cached" (Linux AIO with RWF_NOWAIT; io_uring below)
    "mincore", "cachestat", "fadvise64", "fadvise64_64", "arm_fadvise64_64", "process_madvise", "io_setup",
    "io_submit", "io_cancel", "io_destroy", "io_getevents", "io_pgetevents",
    # SysV IPC and keyrings (the IPC namespace is private, keyrings are per user before Linux 5.3)
    "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semctl",
    "semtimedop", "add_key", "request_key", "keyctl",
    # namespaces and mounts: no nested user namespace (uid 0 in it), no new view of the file systems
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
    # kernel surface a model never needs
    "ptrace", "process_vm_readv", "process_vm_writev", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "acct", "swapon", "swapoff", "reboot", "quotactl", "lookup_dcookie",
    "syslog", "vhangup", "iopl", "ioperm", "personality",
)
# fcntl commands refused: record locks (F_GETLK 5, F_SETLK 6, F_SETLKW 7), open-file-description locks
# (F_OFD_GETLK 36, F_OFD_SETLK 37, F_OFD_SETLKW 38), leases (F_SETLEASE 1024, F_GETLEASE 1025), dnotify
# (F_NOTIFY 1026).
SECCOMP_FCNTL_DENY = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026, 1031)
# (F_SETPIPE_SZ 1031: a pipe grown to 1 MiB charges 256 pages to its user's pipe-user-pages-soft, shared by
# every process of that user.)
# madvise advice refused: MADV_COLD 20 and MADV_PAGEOUT 21 evict (or age) the page cache of a mapped shared file.
SECCOMP_MADVISE_DENY = (20, 21)
# preadv2 and pwritev2 with RWF_NOWAIT (8) in their flags (argument 5) answer EAGAIN when a page is not cached:
# refused with EOPNOTSUPP, what a file system without non-blocking reads answers.
RWF_NOWAIT = 8
# Per-user kernel accounting that every sandbox of one host user shares: the model may queue this many
# signals (RLIMIT_SIGPENDING) and create no POSIX message queue (RLIMIT_MSGQUEUE 0), so what one sandbox
# holds can never bring another to the host user's limit. See also sandbox_uid().
RLIMITS = {"RLIMIT_SIGPENDING": 64, "RLIMIT_MSGQUEUE": 0}
# Root runs each sandbox's model as a host uid of its own, SANDBOX_UID_BASE + the launcher's pid, so no two
# sandboxes running at once share a user's accounting (pipe buffer pages above all).
SANDBOX_UID_BASE = 0x7A000000
_SECCOMP = None


class IsolationError(OSError):
    """A namespace, mount or privilege step failed (the message names the step and the path)."""


_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise IsolationError(err, f"{what}: {os.strerror(err)}")


def _b(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount(source: str | None, target: str, fstype: str | None = None, flags: int = 0, data: str | None = None) -> None:
    """``mount(2)``; raises :class:`IsolationError` naming the target."""
    libc = _libc()
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
    _call(libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def prctl(option: int, arg: int = 0) -> None:
    libc = _libc()
    libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    _call(libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def unshare_all() -> None:
    """Enter new user, mount, network, PID (for children), IPC and UTS namespaces."""
    libc = _libc()
    libc.unshare.argtypes = (ctypes.c_int,)
    _call(libc.unshare(NAMESPACES), "unshare(user, mount, net, pid, ipc, uts namespaces)")


def sandbox_uid(launcher: int) -> int:
    """The host uid (and gid) root runs the model of the sandbox of ``launcher`` (a pid) as: one of its own,
    unused by any account, distinct from every other sandbox alive (pids are), so per-user kernel accounting
    (pipe buffer pages, queued signals, message queues, processes) is never shared between sandboxes."""
    return SANDBOX_UID_BASE + launcher % (1 << 24)


def id_maps(launcher: int | None = None) -> tuple[str, str, int]:
    """(uid_map, gid_map, the model's id inside) for a new user namespace created by this user.

    A normal user maps the namespace's root to itself (the only map it may write). Root maps root to root,
    so that the sandbox can be assembled from paths only root may walk (``/root/.pyenv``), and id 1 to an
    unprivileged host id of the sandbox's own (:func:`sandbox_uid` of ``launcher``; ``nobody`` when no
    launcher is named): the model runs as 1, without root's exemption from the process limit or its file
    access, and shares no per-user accounting with another sandbox.
    """
    if os.geteuid() == 0:
        outside = NOBODY if launcher is None else sandbox_uid(launcher)
        return f"0 0 1\n1 {outside} 1\n", f"0 0 1\n1 {outside} 1\n", 1
    return f"0 {os.geteuid()} 1\n", f"0 {os.getegid()} 1\n", 0


def write_id_maps(pid: int, launcher: int | None = None) -> None:
    """Write ``pid``'s user namespace id maps (:func:`id_maps`), from its parent outside."""
    uid_map, gid_map, _ = id_maps(launcher)
    for name, text in (("setgroups", "deny"), ("uid_map", uid_map), ("gid_map", gid_map)):
        path = f"/proc/{pid}/{name}"
        try:
            with open(path, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise IsolationError(exc.errno or 0, f"write {path}: {exc.strerror}") from None


def die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent dies (and at once if it already has)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(70)


def _mountinfo() -> list[tuple[str, set[str]]]:
    """(mount point, per-mount options) of every mount, in mount order."""
    out = []
    with open("/proc/self/mountinfo", "rb") as fh:
        for line in fh.read().decode("utf-8", "surrogateescape").splitlines():
            fields = line.split(" ")
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            out.append((point, set(fields[5].split(","))))
    return out


def _preserved_flags(options: set[str]) -> int:
    flags = 0
    for name, bit in _OPTION_FLAGS.items():
        if name in options:
            flags |= bit
    return flags


def _remount_read_only(targets: list[str]) -> None:
    """Make every mount at or under each target read-only, keeping its other flags (locked ones must stay)."""
    infos = _mountinfo()
    for target in targets:
        for point, options in infos:
            if point == target or point.startswith(target.rstrip("/") + "/"):
                mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _preserved_flags(options))


def _makedirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def _touch(path: str) -> None:
    _makedirs(os.path.dirname(path))
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))


def build_root(plan: dict, stage: str = "/tmp") -> bool:
    """Assemble the sandbox's root at ``stage`` from ``plan`` and pivot into it; returns whether ``/proc`` exists.

    ``plan`` keys: ``binds`` (absolute real paths, directories or files, mounted read-only at the same
    path), ``masks`` (paths inside binds hidden by an empty
    read-only tmpfs), ``symlinks`` ([path, target] pairs, e.g. ``/lib -> usr/lib``), ``tmp_mb``, ``shm_mb``.
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    fds = {}
    for path in plan["binds"]:  # opened before the stage tmpfs can hide them (a venv under /tmp)
        try:
            fds[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError as exc:
            raise IsolationError(exc.errno or 0, f"open {path}: {exc.strerror}") from None
    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=8m")
    # the private /tmp first: binds under /tmp (a checkout or venv there) are mounted on top of it, not hidden
    _makedirs(stage + "/tmp")
    mount("tmpfs", stage + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={int(plan['tmp_mb'])}m")
    bound = []
    for path in plan["binds"]:
        target = stage + path
        if os.path.isdir(f"/proc/self/fd/{fds[path]}"):
            _makedirs(target)
        else:
            _touch(target)
        mount(f"/proc/self/fd/{fds[path]}", target, None, MS_BIND | MS_REC)
        bound.append(target)
    for path in plan["masks"]:
        target = stage + path
        if os.path.isdir(target):
            mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k")
        elif os.path.lexists(target):
            mount("/dev/null", target, None, MS_BIND)
            bound.append(target)
    _build_dev(stage, plan)
    has_proc = _mount_proc(stage)
    _remount_read_only(bound)
    for fd in fds.values():
        os.close(fd)
    for path, target in plan["symlinks"]:
        if not os.path.lexists(stage + path):
            _makedirs(os.path.dirname(stage + path))
            os.symlink(target, stage + path)
    os.chdir(stage)
    libc = _libc()
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise IsolationError(0, f"pivot_root: unknown system call number on {platform.machine()}")
    _call(libc.syscall(number, b".", b"."), "pivot_root")
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    _call(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")
    for target in ("/", "/dev"):
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    return has_proc


def _build_dev(stage: str, plan: dict) -> None:
    dev = stage + "/dev"
    _makedirs(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _touch(f"{dev}/{name}")
            mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    _makedirs(dev + "/shm")
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={int(plan['shm_mb'])}m")


def _mount_proc(stage: str) -> bool:
    """A /proc of the new PID namespace with its system-wide writable parts read-only (False: none)."""
    proc = stage + "/proc"
    _makedirs(proc)
    try:
        mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except IsolationError:  # e.g. the host masks parts of its /proc: go without one
        return False
    for name in PROC_READ_ONLY:
        path = f"{proc}/{name}"
        if os.path.exists(path):
            mount(path, path, None, MS_BIND | MS_REC)
            _remount_read_only([path])
    for name in PROC_MASKED:  # counters of the whole host that move with what other sandboxes open
        path = f"{proc}/{name}"
        if os.path.exists(path):
            mount("/dev/null", path, None, MS_BIND)
    return True


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))


def drop_privileges(uid: int = 0) -> None:
    """Become ``uid`` of the namespace; no capabilities (effective, permitted, inheritable, ambient, bounding),
    no new privileges, not dumpable. The bounding set goes first (that needs CAP_SETPCAP), then the ids."""
    libc = _libc()
    libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL on kernels without ambient caps
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # 22: no such cap
            _call(-1, f"drop capability {cap} from the bounding set")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if uid:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _call(libc.capset(ctypes.byref(header), data), "capset (drop every capability)")
    prctl(PR_SET_DUMPABLE, 0)


def load_seccomp():
    """Import the seccomp binding (``pyseccomp``, over libseccomp) while the host's library paths are visible.

    Raises
    ------
    IsolationError
        When the binding or libseccomp cannot be loaded (the sandbox then refuses to run models, unless trusted).
    """
    global _SECCOMP
    if _SECCOMP is None:
        try:
            import pyseccomp
        except (ImportError, OSError, RuntimeError) as exc:
            raise IsolationError(0, f"seccomp: cannot load libseccomp through pyseccomp ({exc}); install "
                                    "kgpubench's dependencies (pip install pyseccomp) and libseccomp "
                                    "(apt-get install libseccomp2)") from None
        _SECCOMP = pyseccomp
    return _SECCOMP


def install_seccomp() -> None:
    """Load the filter described in the module docstring into this process (inherited by its children).

    Needs ``no_new_privs`` (set by :func:`drop_privileges`). A call this kernel or architecture does not know is
    skipped (it cannot be made either).
    """
    sc = load_seccomp()
    deny = sc.ERRNO(1)  # EPERM
    filt = sc.SyscallFilter(sc.ALLOW)
    for name in SECCOMP_DENY:
        try:
            filt.add_rule(deny, name)
        except (OSError, RuntimeError, ValueError):
            continue
    for cmd in SECCOMP_FCNTL_DENY:
        filt.add_rule(deny, "fcntl", sc.Arg(1, sc.EQ, cmd))
    for advice in SECCOMP_MADVISE_DENY:
        filt.add_rule(deny, "madvise", sc.Arg(2, sc.EQ, advice))
    for name in ("preadv2", "pwritev2"):
        try:
            filt.add_rule(sc.ERRNO(95), name, sc.Arg(5, sc.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))  # EOPNOTSUPP
        except (OSError, RuntimeError, ValueError):
            continue
    for flag in (CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
                 0x02000000, 0x00000080):  # CLONE_NEWCGROUP, CLONE_NEWTIME
        filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    try:
        filt.add_rule(sc.ERRNO(38), "clone3")  # ENOSYS: glibc then uses clone, whose flags are checked above
    except (OSError, RuntimeError, ValueError):
        pass
    try:
        filt.load()
    except OSError as exc:
        raise IsolationError(exc.errno or 0, f"seccomp: loading the filter failed ({exc})") from None


def set_name(name: str) -> None:
    """The process name (``/proc/PID/comm``, 15 characters), inherited by every process forked from here."""
    buf = ctypes.create_string_buffer(name.encode()[:15])
    prctl(PR_SET_NAME, ctypes.addressof(buf))


def set_hostname(name: str) -> None:
    libc = _libc()
    raw = name.encode()
    libc.sethostname(raw, len(raw))
