"""The CI image (ci/Dockerfile): build it, and run `make test` in it offline as a non-root user.

`image` finds a Docker engine (starting dockerd when none runs and you are root), takes debian:bookworm-slim from a
registry or, where none answers, builds that base here with debootstrap from this machine's apt mirror, then builds
the image. `test` runs `make test` in the image on a clean copy of the checkout (git's files, uncommitted changes
included), with no network and as the copy's non-root owner, and prints pytest's summary. Logs go to build/docker/.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from isaforge import ciimage
from isaforge.errors import IsaforgeError
from isaforge.source_tree import repo_root

LOG_DIR = Path("build", "docker")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("image", help="build the CI image (ci/Dockerfile)")
    p.add_argument("--tag", default=ciimage.IMAGE, help=f"the image's name (default {ciimage.IMAGE})")
    p.add_argument(
        "--base",
        metavar="IMAGE",
        help=f"a Debian 12 image to build on (default {ciimage.STOCK_BASE}, else one built here with debootstrap)",
    )
    p.add_argument(
        "--rebuild-base", action="store_true", help=f"build {ciimage.LOCAL_BASE} again with debootstrap, and use it"
    )
    p.set_defaults(_action=_image)
    p = sub.add_parser("test", help="make test in the image: a clean copy of the checkout, no network, not root")
    p.add_argument("--tag", default=ciimage.IMAGE, help=f"the image to test in (default {ciimage.IMAGE})")
    p.add_argument("--keep", action="store_true", help=f"keep the copy the test ran on ({LOG_DIR}/checkout)")
    p.add_argument("make_args", nargs="*", metavar="MAKE_ARG", help="more arguments for make, e.g. PYTEST_ARGS=-x")
    p.set_defaults(_action=_test)


def run(args: argparse.Namespace) -> int:
    return int(args._action(args))


def _image(args: argparse.Namespace) -> int:
    root = repo_root()
    logs = root / LOG_DIR
    print(f"isaforge: {ciimage.ensure_engine(logs / 'dockerd.log')}")
    if args.base:
        base, how = args.base, "given"
    else:
        print("isaforge: choosing the base image (a registry's, else debootstrap here)")
        base, how = ciimage.choose_base(root, logs, rebuild=args.rebuild_base)
    print(f"isaforge: building {args.tag} from {base} ({how}); log: {LOG_DIR / 'build.log'}")
    built = ciimage.build_image(root, args.tag, base, how, logs / "build.log")
    print(f"isaforge: {built.tag}: {built.size / 1e9:.2f} GB, built in {built.seconds:.0f} s on {built.base}")
    return 0


def _tee(argv: list[str], log: Path) -> int:
    """Run argv with its output on the terminal and in the log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with (
        log.open("w") as out,
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as proc,
    ):
        out.write(f"$ {' '.join(argv)}\n")
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            out.write(line)
    return proc.returncode


def _test(args: argparse.Namespace) -> int:
    root = repo_root()
    logs = root / LOG_DIR
    ciimage.ensure_engine(logs / "dockerd.log")
    if not ciimage.image_exists(args.tag):
        raise IsaforgeError(f"there is no image {args.tag} here; build it with `make docker-image`")
    copy = ciimage.clean_copy(root, logs / "checkout")
    user = ciimage.owner(copy)
    if user.startswith("0:"):  # root's copy: hand it to the image's own user, so the run is not root's
        user = ciimage.IMAGE_USER
        ciimage.chown_tree(copy, user)
    argv = ciimage.run_argv(args.tag, copy, ["make", "test", *args.make_args], user=user)
    print(f"isaforge: make test in {args.tag}: no network, user {user}, on a clean copy in {copy.relative_to(root)}")
    code = _tee(argv, logs / "test.log")
    summary = ciimage.pytest_summary((logs / "test.log").read_text(errors="replace"))
    foreign = ciimage.not_owned_by(copy, user)
    if not args.keep:
        shutil.rmtree(copy, ignore_errors=True)
    print(f"isaforge: docker test ({args.tag}, offline, user {user}): {summary or 'no pytest summary'}; exit {code}")
    if foreign:
        shown = ", ".join(str(p.relative_to(copy)) for p in foreign[:5])
        print(f"isaforge: {len(foreign)} files in the checkout are not the user's: {shown}", file=sys.stderr)
        return 1
    return code if code else (0 if summary else 1)
