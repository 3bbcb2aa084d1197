"""ci/install-toolchains.sh against a real apt-get and dpkg: a file:// repository made here (a few .debs built with
dpkg-deb), beside a second source whose indexes are broken the ways a mirror's are (one changed after its Release
file was written, as mid-sync; one listed but absent, as a 404). apt and dpkg work on a state of their own, through
APT_CONFIG and DPKG_ADMINDIR, so the system's packages and indexes are never touched and no root is needed."""

from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "ci/install-toolchains.sh"
NATIVE = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
FOREIGN = "armhf" if NATIVE == "arm64" else "arm64"


def build_deb(pool: Path, name: str, depends: str = "") -> Path:
    tree = pool.parent / "trees" / name
    (tree / "DEBIAN").mkdir(parents=True)
    control = f"Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: isaforge <ci@isaforge>\n"
    control += (f"Depends: {depends}\n" if depends else "") + f"Description: {name}, for the install script's test\n"
    (tree / "DEBIAN/control").write_text(control)
    (tree / "usr/share" / name).mkdir(parents=True)
    (tree / "usr/share" / name / "installed").write_text(name)
    deb = pool / f"{name}_1.0_all.deb"
    pool.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, deb], check=True, capture_output=True)
    return deb


def packages_entry(deb: Path, repo: Path) -> str:
    """The deb's stanza of a Packages index (what dpkg-scanpackages writes, from the control file dpkg-deb reads)."""
    control = subprocess.run(["dpkg-deb", "--field", deb], capture_output=True, text=True, check=True).stdout
    data = deb.read_bytes()
    stanza = f"Filename: {deb.relative_to(repo)}\nSize: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n"
    return control.rstrip("\n") + "\n" + stanza + "\n"


def write_release(dist: Path, indexes: dict[str, bytes]) -> None:
    """dists/<suite>/Release naming each index with its size and hash, as a mirror publishes them."""
    lines = [f"Suite: {dist.name}", f"Codename: {dist.name}", f"Architectures: {NATIVE} {FOREIGN}"]
    lines += ["Components: main", f"Date: {formatdate(usegmt=True)}", "SHA256:"]
    lines += [f" {hashlib.sha256(data).hexdigest()} {len(data)} {name}" for name, data in indexes.items()]
    (dist / "Release").write_text("\n".join(lines) + "\n")


@dataclass
class Apt:
    """An apt and dpkg state in a temp dir, with its sources; `run` sources the script and runs bash lines there."""

    root: Path
    env: dict[str, str]

    def run(self, lines: str) -> subprocess.CompletedProcess[str]:
        # The sandbox is this user's own: apt-get and dpkg need no root (or sudo) for it.
        script = f'source "{SCRIPT}"\nas_root() {{ "$@"; }}\n{lines}\n'
        argv = ["bash", "-c", script]
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=300, check=False)

    def installed(self, name: str) -> bool:
        return (self.root / "usr/share" / name / "installed").is_file()


@pytest.fixture
def apt(tmp_path: Path) -> Apt:
    # The repository every needed package is in: one installable, one with a dependency nowhere, one whose .deb is
    # gone from the pool (its index still names it, as a stale one does).
    good = tmp_path / "repo"
    pool = good / "pool/main"
    debs = [build_deb(pool, "isaforge-probe"), build_deb(pool, "isaforge-broken", depends="isaforge-nowhere")]
    gone = build_deb(pool, "isaforge-gone")
    index = "".join(packages_entry(deb, good) for deb in [*debs, gone]).encode()
    gone.unlink()
    dist = good / "dists/bookworm"
    (dist / f"main/binary-{NATIVE}").mkdir(parents=True)
    (dist / f"main/binary-{NATIVE}/Packages").write_bytes(index)
    write_release(dist, {f"main/binary-{NATIVE}/Packages": index})

    # The mirror mid-sync: its native index changed after its Release file was written, its foreign one is missing.
    broken = tmp_path / "mirror/dists/bookworm-security"
    (broken / f"main/binary-{NATIVE}").mkdir(parents=True)
    stale = b"Package: isaforge-other\nVersion: 1\nArchitecture: all\nFilename: pool/o.deb\nSize: 1\n\n"
    write_release(broken, {f"main/binary-{NATIVE}/Packages": stale, f"main/binary-{FOREIGN}/Packages": stale})
    (broken / f"main/binary-{NATIVE}/Packages").write_bytes(stale + b"Package: isaforge-newer\n\n")

    state = tmp_path / "apt"
    root = tmp_path / "root"
    for d in ("etc/parts", "etc/preferences.d", "lists/partial", "cache/archives/partial", "log"):
        (state / d).mkdir(parents=True)
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates"):
        (root / d).mkdir(parents=True)
    (root / "var/lib/dpkg/status").touch()
    sources = [f"file:{good} bookworm main", f"file:{tmp_path / 'mirror'} bookworm-security main"]
    (state / "etc/sources.list").write_text("".join(f"deb [trusted=yes] {s}\n" for s in sources))
    conf = {
        "Dir::Etc::sourcelist": state / "etc/sources.list",
        "Dir::Etc::sourceparts": state / "etc/parts",
        "Dir::Etc::parts": state / "etc/parts",
        "Dir::Etc::preferencesparts": state / "etc/preferences.d",
        "Dir::State": state,
        "Dir::State::lists": state / "lists",
        "Dir::State::status": root / "var/lib/dpkg/status",
        "Dir::Cache": state / "cache",
        "Dir::Log": state / "log",
        "APT::Architecture": NATIVE,
        "APT::Sandbox::User": "root",  # a temp dir's files are not readable by apt's _apt user
    }
    text = "".join(f'{key} "{value}";\n' for key, value in conf.items())
    text += f'APT::Architectures {{ "{NATIVE}"; "{FOREIGN}"; }};\n'
    text += f'DPkg::Options {{ "--root={root}"; "--log={state}/dpkg.log"; "--force-not-root"; "--force-bad-path"; }};\n'
    (state / "apt.conf").write_text(text)
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(tmp_path)}
    env |= {"APT_CONFIG": str(state / "apt.conf"), "DPKG_ADMINDIR": str(root / "var/lib/dpkg"), "LANG": "C.UTF-8"}
    return Apt(root, env)


def last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def test_an_index_the_mirror_is_syncing_does_not_stop_the_install(apt: Apt) -> None:
    """apt-get update fails (exit 100) on the mirror's broken indexes; the package is in the others, so it installs."""
    proc = apt.run("apt_install -- isaforge-probe")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "E: Failed to fetch file:" in proc.stdout, "apt-get update must have failed on the mirror"
    assert re.search(r"could not fetch every index \(first: .*/Packages: .*\); going on with the indexes", proc.stderr)
    assert apt.installed("isaforge-probe")
    query = ["dpkg-query", "-W", "-f=${Status}", "isaforge-probe"]
    status = subprocess.run(query, env=apt.env, capture_output=True, check=False)
    assert status.stdout == b"install ok installed"


def test_a_package_no_index_offers_is_one_line_naming_it_and_why(apt: Apt) -> None:
    proc = apt.run('apt_install -- isaforge-probe isaforge-absent || echo "status $?"')
    assert proc.stdout.strip().endswith("status 1"), proc.stdout
    assert re.fullmatch(
        r"install-toolchains: cannot install isaforge-absent: no apt source offers it "
        r"\(apt-get update could not fetch file:\S+/bookworm-security/main/binary-\w+/Packages: "
        r"(Hash Sum mismatch|File not found .*)\)",
        last_line(proc),
    ), proc.stderr
    assert not apt.installed("isaforge-probe"), "nothing is installed when one needed package cannot be"


@pytest.mark.parametrize(
    ("package", "why"),
    [
        ("isaforge-broken", "Depends: isaforge-nowhere but it is not installable"),
        ("isaforge-gone", "download failed: File not found - .*isaforge-gone_1.0_all.deb.*"),
    ],
)
def test_an_install_that_fails_is_one_line_naming_the_package_and_why(apt: Apt, package: str, why: str) -> None:
    proc = apt.run(f'apt_for="peer test" apt_install --no-remove -- isaforge-probe {package} || echo "status $?"')
    assert proc.stdout.strip().endswith("status 1"), proc.stdout
    line = last_line(proc)
    expected = rf"install-toolchains: cannot install {package} \(peer test\): {why} \(apt-get update could not .*\)"
    assert re.fullmatch(expected, line), line


def test_a_needed_package_stops_the_script_with_that_line(apt: Apt) -> None:
    """The paths that need their packages (the toolchains, --docker) exit 1 on that line, with no traceback of bash's
    own (set -e) after it."""
    proc = apt.run("apt_install -- isaforge-absent || exit 1\necho not reached")
    assert proc.returncode == 1 and "not reached" not in proc.stdout
    assert last_line(proc).startswith("install-toolchains: cannot install isaforge-absent: no apt source offers it")


def _outside_strings(line: str) -> str:
    return re.sub(r'"[^"]*"', '""', line)


def test_every_apt_get_runs_in_apt_update_or_apt_install() -> None:
    """One way to update and install, so that a partial update is handled the same on every path: no function but
    those two runs apt-get itself, and apt_download, which fetches a .deb through an apt state of its own."""
    text = SCRIPT.read_text()
    function = None
    offenders = []
    for number, line in enumerate(text.splitlines(), 1):
        if m := re.match(r"^(\w+)\(\) \{", line):
            function = m[1]
        code = _outside_strings(line.split("#", 1)[0] if line.lstrip().startswith("#") else line)
        if re.search(r"\bapt-get\b", code) and function not in {"apt_update", "apt_install", "apt_download"}:
            offenders.append(f"{number} ({function or 'top level'}): {line.strip()}")
        if line == "}":
            function = None
    assert not offenders, "apt-get outside apt_update/apt_install:\n" + "\n".join(offenders)
