"""The CI image (ci/Dockerfile): find or start a Docker engine, get a Debian 12 base (the registry's, else one built
here with debootstrap), build the image, and run commands in it offline, as the checkout's owner, on a mounted
checkout.

The image carries the toolchains, a venv outside the source tree and the wheels it was made from, so a container
with no network runs `make test` on any checkout mounted at /src.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from isaforge import process
from isaforge.errors import IsaforgeError

IMAGE = "isaforge-ci"
STOCK_BASE = "debian:bookworm-slim"
LOCAL_BASE = "isaforge-base:bookworm-slim"  # what debootstrap makes where no registry answers
DOCKERFILE = Path("ci", "Dockerfile")
INSTALL_SCRIPT = Path("ci", "install-toolchains.sh")
MOUNT = "/src"  # where the image's venv expects the checkout (its editable install points there)
IMAGE_USER = "1000:1000"  # the image's `ci` user, for a checkout copied by root
# dockerd without a bridge or iptables: these machines have neither; containers use the host network or none.
DOCKERD = ("dockerd", "--iptables=false", "--bridge=none")
ENGINE_START_TIMEOUT = 60.0
PULL_TIMEOUT = 120.0
BUILD_TIMEOUT = 3600.0
# What debian:bookworm-slim leaves out (debuerreotype's slim variant) and how it keeps apt's downloads out of layers.
SLIM_DPKG_EXCLUDES = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
"""
_APT_CLEAN = '"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"'
APT_DOCKER_CLEAN = f"""\
DPkg::Post-Invoke {{ {_APT_CLEAN}; }};
APT::Update::Post-Invoke {{ {_APT_CLEAN}; }};
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
"""
EXTRA_CA_DIR = Path("/usr/local/share/ca-certificates")
PIP_SYSTEM_CA = "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n"
PYTEST_SUMMARY = re.compile(r"^=+ (.*\d+ (?:passed|failed|error|errors|skipped).*) =+$")


def _is_root() -> bool:
    return os.geteuid() == 0


# -- the engine --------------------------------------------------------------------------------------------------------


def _docker_info() -> subprocess.CompletedProcess[str] | None:
    if shutil.which("docker") is None:
        return None
    return subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60, check=False)


def engine_running(info: subprocess.CompletedProcess[str] | None = None) -> bool:
    info = info or _docker_info()
    return info is not None and info.returncode == 0


def engine_problem(info: subprocess.CompletedProcess[str] | None = None) -> str | None:
    """Why no Docker engine can be used here (and none would be started), or None when one answers or can be
    started (root, with dockerd installed). `info`: a `docker info` already run."""
    info = info or _docker_info()
    if info is None:
        return "no docker client on PATH (Debian: apt-get install docker.io, or make docker-image as root)"
    if info.returncode == 0:
        return None
    if _is_root() and shutil.which("dockerd"):
        return None
    if not shutil.which("dockerd"):
        return "no Docker engine is running and dockerd is not installed (Debian: apt-get install docker.io)"
    gist = next((ln for ln in info.stderr.splitlines() if ln.strip()), "docker info failed")
    return f"no Docker engine answers ({gist.strip()}); start one as root: {' '.join(DOCKERD)} &"


def ensure_engine(log: Path) -> str:
    """A Docker engine that answers, starting dockerd (as root) when none runs; what was done, for the user."""
    info = _docker_info()
    problem = engine_problem(info)
    if problem is not None:
        raise IsaforgeError(problem)
    if engine_running(info):
        return "docker engine running"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        # A daemon: it outlives this command, as an engine started by hand would.
        subprocess.Popen(
            DOCKERD, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    deadline = time.monotonic() + ENGINE_START_TIMEOUT
    while time.monotonic() < deadline:
        if engine_running():
            return f"started {' '.join(DOCKERD)} (log: {log})"
        time.sleep(1)
    raise IsaforgeError(f"dockerd did not answer within {ENGINE_START_TIMEOUT:g} s; see {log}")


def docker(*args: str, what: str = "", timeout: float = process.DEFAULT_TIMEOUT, log: Path | None = None) -> str:
    """`docker args…`, its stdout; a failure is a one-line error with the log."""
    return process.run(["docker", *args], what=what or f"docker {args[0]}", timeout=timeout, log=log).stdout


def image_exists(tag: str) -> bool:
    return (
        subprocess.run(["docker", "image", "inspect", tag], capture_output=True, timeout=60, check=False).returncode
        == 0
    )


def image_size(tag: str) -> int:
    return int(docker("image", "inspect", "--format", "{{.Size}}", tag).strip())


# -- the base image ----------------------------------------------------------------------------------------------------


def apt_uri(root: Path, suite: str) -> str | None:
    """The URI this machine's apt sources use for `suite` (read by the install script, the one place that parses
    them), or None."""
    done = process.run(["bash", root / INSTALL_SCRIPT, "--apt-uri", suite], check=False)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def choose_base(root: Path, log_dir: Path, *, rebuild: bool = False) -> tuple[str, str]:
    """The base image and how it was had: the stock one if present or pullable, else the one built here."""
    if not rebuild:
        for tag in (STOCK_BASE, LOCAL_BASE):
            if image_exists(tag):
                return tag, "present"
        pull = subprocess.run(
            ["docker", "pull", STOCK_BASE], capture_output=True, text=True, timeout=PULL_TIMEOUT, check=False
        )
        if pull.returncode == 0:
            return STOCK_BASE, "pulled"
    build_local_base(root, LOCAL_BASE, log_dir / "debootstrap.log")
    return LOCAL_BASE, "debootstrap here: no registry answered"


def build_local_base(root: Path, tag: str, log: Path) -> None:
    """Debian 12 minbase from this machine's own mirror, made slim the way the registry's image is, with the host's
    extra CA certificates (a TLS-intercepting proxy's) so pip works in the build; imported as `tag`."""
    if not _is_root():
        raise IsaforgeError(
            f"no image registry answers and building {tag} with debootstrap needs root; run make docker-image as "
            "root once, or give a Debian 12 image with --base"
        )
    if shutil.which("debootstrap") is None:
        raise IsaforgeError("debootstrap is missing (Debian: apt-get install debootstrap; make docker-image does it)")
    mirror = apt_uri(root, "bookworm")
    if mirror is None:
        raise IsaforgeError("no apt source serves 'bookworm' here, so debootstrap has no mirror; add one")
    with tempfile.TemporaryDirectory(prefix="isaforge-rootfs-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        process.run(
            ["debootstrap", "--variant=minbase", "--include=ca-certificates", "bookworm", rootfs, mirror],
            what="debootstrap",
            timeout=BUILD_TIMEOUT,
            log=log,
        )
        _make_slim(rootfs)
        _apt_sources(root, rootfs, mirror)
        _extra_certificates(rootfs)
        _import(rootfs, tag)


def _make_slim(rootfs: Path) -> None:
    (rootfs / "etc/dpkg/dpkg.cfg.d/docker-slim").write_text(SLIM_DPKG_EXCLUDES)
    (rootfs / "etc/apt/apt.conf.d/docker-clean").write_text(APT_DOCKER_CLEAN)
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (rootfs / leftover).glob("*"):
            if path.is_file():
                path.unlink()


def _apt_sources(root: Path, rootfs: Path, mirror: str) -> None:
    """The suites the registry's image has, from the URIs this machine uses (written into the image, never into a
    file of the project)."""
    lines = [f"deb {mirror} bookworm main", f"deb {mirror} bookworm-updates main"]
    security = apt_uri(root, "bookworm-security")
    if security is not None:
        lines.append(f"deb {security} bookworm-security main")
    (rootfs / "etc/apt/sources.list").write_text("\n".join(lines) + "\n")


def _extra_certificates(rootfs: Path) -> None:
    extra = sorted(EXTRA_CA_DIR.glob("**/*.crt")) if EXTRA_CA_DIR.is_dir() else []
    if not extra:
        return
    target = rootfs / EXTRA_CA_DIR.relative_to("/")
    for cert in extra:
        (target / cert.relative_to(EXTRA_CA_DIR)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(cert, target / cert.relative_to(EXTRA_CA_DIR))
    process.run(["chroot", rootfs, "update-ca-certificates"], what="update-ca-certificates in the base")
    # pip trusts its own bundle unless told otherwise; the system store now has the proxy's certificate.
    (rootfs / "etc/pip.conf").write_text(PIP_SYSTEM_CA)


def _import(rootfs: Path, tag: str) -> None:
    pipeline = (
        f"tar --numeric-owner -C {shlex.quote(str(rootfs))} -c . "
        f"| docker import --change 'CMD [\"bash\"]' - {shlex.quote(tag)}"
    )
    process.run(["bash", "-o", "pipefail", "-c", pipeline], what="docker import", timeout=BUILD_TIMEOUT)


# -- the image ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    tag: str
    base: str
    how: str  # how the base was had
    seconds: float
    size: int


def build_image(root: Path, tag: str, base: str, how: str, log: Path) -> Built:
    """docker build of ci/Dockerfile on `base`, with the host's network (these machines have no bridge)."""
    start = time.monotonic()
    argv = ["docker", "build", "--network", "host", "--build-arg", f"BASE_IMAGE={base}"]
    argv += ["--file", str(root / DOCKERFILE), "--tag", tag, str(root)]
    if process.stream(argv, log, timeout=BUILD_TIMEOUT) != 0:
        raise IsaforgeError(f"docker build of {DOCKERFILE} failed; see {log}")
    return Built(tag, base, how, time.monotonic() - start, image_size(tag))


# -- running in it -----------------------------------------------------------------------------------------------------


def owner(path: Path) -> str:
    """`uid:gid` of a checkout, for `docker run --user`: whoever owns the tree writes into it."""
    st = path.stat()
    return f"{st.st_uid}:{st.st_gid}"


def run_argv(
    image: str,
    checkout: Path,
    command: Sequence[str],
    *,
    user: str | None = None,
    mounts: Iterable[tuple[Path, str]] = (),
    env: Mapping[str, str] | None = None,
    network: str = "none",
) -> list[str]:
    """`docker run` of `command` in the image on `checkout` (mounted at /src), offline by default, as the checkout's
    owner unless told otherwise."""
    argv = ["docker", "run", "--rm", "--network", network, "--user", user or owner(checkout)]
    argv += ["--volume", f"{checkout.resolve()}:{MOUNT}"]
    for host, inside in mounts:
        argv += ["--volume", f"{host.resolve()}:{inside}"]
    for key, value in (env or {}).items():
        argv += ["--env", f"{key}={value}"]
    return [*argv, image, *command]


def clean_copy(root: Path, dest: Path) -> Path:
    """The checkout as git sees it (tracked and new files, uncommitted changes included; nothing ignored: no venv,
    builds or caches), with its history, in `dest`."""
    if dest.exists():
        shutil.rmtree(dest)
    process.run(["git", "clone", "--quiet", "--no-hardlinks", root, dest], what="git clone of the checkout")
    files = process.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout
    for name in filter(None, files.split("\0")):
        source, target = root / name, dest / name
        if source.is_symlink() or source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
        elif not source.exists():
            target.unlink(missing_ok=True)  # deleted in the working tree, not yet committed
    return dest


def chown_tree(tree: Path, user: str) -> None:
    uid, gid = (int(x) for x in user.split(":"))
    for path in [tree, *tree.rglob("*")]:
        os.lchown(path, uid, gid)


def not_owned_by(tree: Path, user: str) -> list[Path]:
    """Files of the tree someone else owns (a run as root inside the container would leave them)."""
    uid = int(user.split(":", maxsplit=1)[0])
    return [p for p in [tree, *tree.rglob("*")] if p.lstat().st_uid != uid]


def pytest_summary(log_text: str) -> str:
    """pytest's closing line (`1037 passed, 11 deselected in 700.12s`), or an empty string."""
    found = [m.group(1) for ln in log_text.splitlines() if (m := PYTEST_SUMMARY.match(ln.strip()))]
    return found[-1] if found else ""
