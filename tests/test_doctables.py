"""The docs' generated tables: up to date with the catalogue and the kernel files, every kernel file in the kernel
table (checked against the files themselves, not through the renderer), and a stale table named and rewritten."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from isaforge import doctables
from tests.conftest import ROOT

KERNEL_DIRS = {"aarch64": "aarch64", "arm": "aarch32"}


def test_every_generated_table_is_up_to_date() -> None:
    assert doctables.main(["--check"]) == 0, "run: python -m isaforge.doctables"


def table_row(page: str, op: str) -> list[str]:
    """The cells of `op`'s row in the generated kernel table of `page`."""
    row = re.search(rf"^\| `{op}` \|(.*)\|$", (ROOT / page).read_text(), re.M)
    assert row, f"no row for {op} in {page}"
    return [cell.strip() for cell in row[1].split("|")]


@pytest.mark.parametrize("arch", list(KERNEL_DIRS))
def test_the_kernel_table_names_every_kernel_file(arch: str) -> None:
    page = doctables.BLOCKS["kernels"][0]
    column = 1 + list(KERNEL_DIRS).index(arch)  # after the op's description
    files = [*(ROOT / "kernels" / KERNEL_DIRS[arch]).glob("*/*_*.[cS]"), *(ROOT / "kernels/reference").glob("*.c")]
    assert len(files) > 20
    for path in files:
        op, _, rest = path.stem.partition("_")
        dtype, tile, variant = rest.split("_")
        cell = table_row(page, f"{op}_{dtype}")[column]
        assert re.search(rf"\b{variant} [^;]*\b{tile}\b", cell), f"{path.name} is not in {page}: {cell}"


def test_the_cpu_table_names_every_model() -> None:
    page = (ROOT / doctables.BLOCKS["cpu-models"][0]).read_text()
    for model in ("cortex-a53", "neoverse-v1", "a64fx", "cortex-a7", "qemu-sme:max"):
        assert f"`{model}`" in page


def copy_docs(tmp_path: Path) -> Path:
    for page, _ in doctables.BLOCKS.values():
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    (tmp_path / "kernels").symlink_to(ROOT / "kernels")
    return tmp_path


def test_a_stale_table_is_named_then_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_docs(tmp_path)
    page = root / doctables.BLOCKS["kernels"][0]
    page.write_text(page.read_text().replace("| `gemm_s4` |", "| `gemm_s4_gone` |"))
    assert doctables.main(["--check", "--root", str(root)]) == 1
    assert "'kernels' is stale" in capsys.readouterr().out
    assert doctables.main(["--root", str(root)]) == 0
    assert doctables.main(["--check", "--root", str(root)]) == 0
    assert page.read_text() == (ROOT / doctables.BLOCKS["kernels"][0]).read_text()


def test_a_page_without_its_markers_is_an_error() -> None:
    with pytest.raises(ValueError, match="no generated block 'kernels'"):
        doctables.refresh("# a page\n", "kernels", "| table |")
